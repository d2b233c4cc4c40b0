import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { packetFilterOf } from './helpers/areas.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import type { SimulatedPacketFilter } from '../src/platform/simulated/packet-filter.js';
import type { ReadBackResult } from '../src/platform/packet-filter.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Resolves to undefined after `ms`, without keeping the process alive. */
const deadline = (ms: number) => new Promise<undefined>((resolve) => setTimeout(resolve, ms, undefined).unref());

/**
 * The simulated packet filter with a read-back that can be held: the read sees the kernel as it is when it
 * starts, and answers once released, as a whole-table listing of 10,000 rules answers a second later.
 */
function holdablePlatform() {
  const platform = createSimulatedPlatform();
  const filter = platform.packetFilter as SimulatedPacketFilter;
  const readBack = filter.readBack.bind(filter);
  let held: { gate: Promise<void>; reached: () => void } | undefined;
  filter.readBack = async (): Promise<ReadBackResult> => {
    const seen = await readBack();
    const hold = held;
    held = undefined; // only the next read is held
    hold?.reached();
    await hold?.gate;
    return seen;
  };
  /** Holds the next read once it has seen the kernel: `reached` resolves then, `release` lets it answer. */
  const holdNextRead = () => {
    let release = () => {};
    let reached = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const reachedRead = new Promise<void>((resolve) => (reached = resolve));
    held = { gate, reached };
    return { release: () => release(), reached: reachedRead };
  };
  return { platform, filter, holdNextRead };
}

test('the periodic drift check runs aside: a reload meanwhile does not wait for its read, and a read a load overlapped is dropped, not reported as drift', async () => {
  const { platform, filter, holdNextRead } = holdablePlatform();
  const t = await startAreaApp({ platform, config: { driftCheckSeconds: 1 } });
  const headers = t.headers;
  const service = packetFilterOf(t.app);
  const status = async () => json(await t.app.inject({ url: '/api/v1/status', headers }));
  let releaseReadIfWaiting = () => {};
  try {
    const created = json(await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 }, headers }));
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers })).statusCode, 200);
    await service.checkDrift();
    assert.equal((await status()).drift, false);

    // A check starts reading; the rule changes and a reload comes while the read is held.
    assert.equal((await t.app.inject({ method: 'PUT', url: `/api/v1/rules/${created.id}`, payload: { dst_port_start: 2222 }, headers })).statusCode, 200);
    const { release: releaseRead, reached } = holdNextRead();
    releaseReadIfWaiting = releaseRead;
    let checkDone = false;
    const check = service.checkDriftAside().then(() => (checkDone = true));
    await reached;
    const reloading = t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    // The read is held until released below: a reload that waited for it would never answer.
    const reload = await Promise.race([reloading, deadline(30_000)]);
    assert.ok(reload, 'the reload answered while the check was still reading (it waited 30 s for the read)');
    assert.equal(reload.statusCode, 200, reload.body);
    assert.equal(checkDone, false);
    assert.match(filter.appliedText!, /tcp dport 2222/, 'and the new rule is loaded');
    await service.checkDrift(); // the reload's own read-back
    // The held read saw the kernel before the reload: compared, it would differ from what is now expected.
    releaseRead();
    await check;
    const afterOverlap = await status();
    assert.equal(afterOverlap.drift, false, `the overlapped read was dropped: ${JSON.stringify(afterOverlap.drift_check)}`);

    // With no load in between, the periodic check still reports a change made by hand (timer: 1 s).
    filter.appliedText = filter.appliedText!.replace('tcp dport 2222', 'tcp dport 2223');
    let drifted = await status();
    for (let waited = 0; !drifted.drift && waited < 15_000; waited += 100) {
      await sleep(100);
      drifted = await status();
    }
    assert.equal(drifted.drift, true, 'the periodic check saw the rule changed by hand');
    assert.ok(drifted.drift_check.differences.length > 0, JSON.stringify(drifted.drift_check));
  } finally {
    releaseReadIfWaiting();
    await t.close();
  }
});

test('POST /reload answers while its own read-back is still reading: no applier waits behind it (the cluster applier did)', async () => {
  const { platform, holdNextRead } = holdablePlatform();
  const t = await startAreaApp({ platform, config: { driftCheckSeconds: 0 } });
  const headers = t.headers;
  const service = packetFilterOf(t.app);
  let releaseReadIfWaiting = () => {};
  try {
    assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 }, headers })).statusCode, 201);
    const { release, reached } = holdNextRead();
    releaseReadIfWaiting = release;
    const reloading = t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    await reached; // the load is done and its read-back has begun
    // The read is held until released below: a reload whose answer waited for it would never answer. The deadline
    // keeps the process alive (a reload stuck behind the held read keeps nothing else alive), cleared once it answers.
    let timer: NodeJS.Timeout | undefined;
    const reload = await Promise.race([reloading, new Promise<undefined>((resolve) => (timer = setTimeout(resolve, 30_000, undefined)))]);
    clearTimeout(timer);
    assert.ok(reload, 'the reload answered while its read-back was held (it waited 30 s for the read)');
    assert.equal(reload.statusCode, 200, reload.body);
    release();
    await service.checkDrift();
    assert.equal(json(await t.app.inject({ url: '/api/v1/status', headers })).drift, false);
  } finally {
    releaseReadIfWaiting();
    await t.close();
  }
});
