/**
 * Issue 19 in the kernel: small changes load as nft delta transactions, and drift is found and repaired. Three
 * network namespaces this test creates (client — firewall — server), plus one holding a reference table; Bulwark in
 * this process with its nftables driver loading through a libnftables session inside the firewall namespace (as the
 * product does), the real `nft` for listings. Every change goes through the HTTP API. Needs root; mandatory under
 * REQUIRE_SYSTEM_TESTS=1.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { rootSkipReason } from '../helpers/shared.js';
import { buildThreeNamespaces, inNs, removeNamespaces, sh, toolsInNamespace } from '../helpers/three-namespaces.js';
import { apiCalls } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import { NftablesPacketFilter } from '../../src/platform/linux/packet-filter.js';
import { NftSession } from '../../src/platform/linux/nft-session.js';
import { canonicalNftState } from '../../src/platform/linux/nft-listing.js';
import { packetFilterOf } from '../helpers/areas.js';

const skip = rootSkipReason('the issue-19 namespace test (network namespaces, nftables)');
const NS = { client: `b19c${process.pid}`, firewall: `b19f${process.pid}`, server: `b19s${process.pid}` };
const REFERENCE = `b19r${process.pid}`;
const CLIENT = '10.219.1.2';
const FW_OUTSIDE = '10.219.1.1';
const FW_INSIDE = '10.219.2.1';
const SERVER = '10.219.2.2';
const PASS_PORT = 8080;
const BLOCK_PORT = 8081;

const work = mkdtempSync(join(tmpdir(), 'bulwark-e2e-b19-'));
const children: ChildProcess[] = [];
let t: AreaApp;
let headers: Headers;
let packetFilter: NftablesPacketFilter;
let session: NftSession;
let platform: ReturnType<typeof createSimulatedPlatform>;
let keptDataDir: string | undefined;

const SERVER_SCRIPT = `
for (const port of [${PASS_PORT}, ${BLOCK_PORT}]) require('node:net').createServer((s) => { s.on('error', () => {}); s.end('hi'); }).listen(port, '0.0.0.0');
`;
/**
 * Probes both ports again and again until stdin closes: one line per probe, "<port> open|refused|timeout <ms>".
 * A SYN dropped in a gap between two rulesets would be retransmitted after a second (TCP's initial timeout), so
 * the time each answer took is reported too.
 */
const PROBER_SCRIPT = `
const net = require('node:net');
let running = true;
process.stdin.on('end', () => { running = false; }).resume();
const once = (port) => new Promise((resolve) => {
  const started = Date.now();
  const s = net.connect({ host: '${SERVER}', port });
  const done = (v) => { clearTimeout(timer); s.destroy(); resolve(v + ' ' + (Date.now() - started)); };
  const timer = setTimeout(() => done('timeout'), 3000);
  s.on('connect', () => done('open'));
  s.on('error', () => done('refused'));
});
(async () => {
  while (running) for (const port of [${PASS_PORT}, ${BLOCK_PORT}]) console.log(port, await once(port));
  process.exit(0);
})();
`;

const { call, ok } = apiCalls(() => ({ app: t.app, headers }));
const reload = async (): Promise<'delta' | 'full'> => (await ok('POST', '/api/v1/reload')).apply_mode;
const removeAll = async () => {
  for (const kind of ['rules', 'nat', 'aliases']) {
    for (const object of (await call('GET', `/api/v1/${kind}`)).body) await ok('DELETE', `/api/v1/${kind}/${object.id}`);
  }
  await reload();
};
/** The firewall's table as the kernel lists it, canonical (listing order, handles and counters left out). */
const kernelTable = () => canonicalNftState(inNs(NS.firewall, 'nft', '-s', 'list', 'table', 'inet', 'bulwark'));
/** One fresh full load of the stored configuration into the reference namespace, listed the same way. */
function referenceTable() {
  const text = packetFilterOf(t.app).compile(packetFilterOf(t.app).storedSnapshot()).text;
  const loaded = spawnSync('ip', ['netns', 'exec', REFERENCE, 'nft', '-f', '-'], { input: text, encoding: 'utf8' });
  assert.equal(loaded.status, 0, loaded.stderr);
  return canonicalNftState(inNs(REFERENCE, 'nft', '-s', 'list', 'table', 'inet', 'bulwark'));
}
const connects = (port: number) => {
  const result = spawnSync('ip', ['netns', 'exec', NS.client, process.execPath, '-e',
    `const s=require('node:net').connect(${port},'${SERVER}');const t=setTimeout(()=>{console.log('timeout');process.exit()},1000);s.on('connect',()=>{console.log('open');process.exit()});s.on('error',()=>{console.log('refused');process.exit()})`], { encoding: 'utf8' });
  return result.stdout.trim() === 'open';
};

/** A small deterministic generator, so a failing sequence can be replayed from its seed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

async function startApp(options: { dataDir?: string; driftCheckSeconds?: number } = {}): Promise<void> {
  t = await startAreaApp({ platform: { ...platform, packetFilter }, dataDir: options.dataDir, config: { driftCheckSeconds: options.driftCheckSeconds ?? 0 } });
  headers = t.headers;
}

before(async () => {
  if (skip) return;
  buildThreeNamespaces(NS, { client: CLIENT, firewallOutside: [FW_OUTSIDE], firewallInside: FW_INSIDE, server: [SERVER] });
  spawnSync('ip', ['netns', 'delete', REFERENCE]);
  sh(['ip', 'netns', 'add', REFERENCE]);
  process.on('exit', () => spawnSync('ip', ['netns', 'delete', REFERENCE]));
  children.push(spawn('ip', ['netns', 'exec', NS.server, process.execPath, '-e', SERVER_SCRIPT], { stdio: 'ignore' }));
  const tools = toolsInNamespace(work, NS.firewall);
  platform = createSimulatedPlatform();
  session = new NftSession(['ip', 'netns', 'exec', NS.firewall, '/usr/bin/python3']);
  packetFilter = new NftablesPacketFilter(() => platform.packetFilter.status(), tools.nft, tools.conntrack, tools.ip, session);
  await startApp();
  for (let i = 0; i < 40 && !connects(PASS_PORT); i++) await new Promise((r) => setTimeout(r, 100));
});

after(async () => {
  for (const child of children) child.kill('SIGTERM');
  await t?.close();
  await packetFilter?.close();
  removeNamespaces(NS);
  spawnSync('ip', ['netns', 'delete', REFERENCE]);
  rmSync(work, { recursive: true, force: true });
  if (keptDataDir) rmSync(keptDataDir, { recursive: true, force: true });
});

const ruleBody = (next: () => number) => {
  const protocol = (['tcp', 'udp', 'tcp/udp', 'any'] as const)[Math.floor(next() * 4)];
  const ports = protocol !== 'any';
  return {
    action: (['pass', 'block', 'blockdrop', 'blockreturn'] as const)[Math.floor(next() * 4)],
    direction: 'in', protocol, quick: next() < 0.8, log: next() < 0.2,
    src_addr: next() < 0.3 ? '<b19web>' : next() < 0.5 ? `10.${Math.floor(next() * 250)}.0.0/16` : 'any',
    dst_addr: next() < 0.2 ? '<b19db>' : 'any',
    ...(ports ? { dst_port_start: 20_000 + Math.floor(next() * 9000) } : {}),
  };
};

test('40 random small changes, each loaded as applied (mostly deltas), leave the kernel exactly as one full load of the same configuration', { skip }, async () => {
  const seed = Date.now() % 100_000;
  const next = random(seed);
  const web = await ok('POST', '/api/v1/aliases', { name: 'b19web', alias_type: 'network', entries: ['192.0.2.0/24', '2001:db8:19::/48'] });
  const db = await ok('POST', '/api/v1/aliases', { name: 'b19db', alias_type: 'host', entries: ['198.51.100.7'] });
  for (let i = 0; i < 80; i++) await ok('POST', '/api/v1/rules', ruleBody(next));
  await ok('POST', '/api/v1/nat', { nat_type: 'dnat', interface: 'fwc', protocol: 'tcp', dst_addr: FW_OUTSIDE, dst_port_start: 9443, redirect_addr: SERVER, redirect_port_start: PASS_PORT });
  assert.equal(await reload(), 'full', 'the first load is a full one');
  await packetFilterOf(t.app).checkDrift();
  const modes: string[] = [];
  const changes: string[] = [];
  const answeredBefore = session.answered;
  let loads = 0;
  const apply = packetFilter.apply.bind(packetFilter);
  let partialReads = 0;
  const readBackObjects = packetFilter.readBackObjects.bind(packetFilter);
  packetFilter.readBackObjects = (names) => {
    partialReads++;
    return readBackObjects(names);
  };
  packetFilter.apply = (ruleset) => {
    loads++;
    return apply(ruleset);
  };
  for (let step = 0; step < 40; step++) {
    const rules = (await call('GET', '/api/v1/rules')).body as { id: string; protocol: string; rule_match: { src_addr: string } }[];
    const pick = rules[Math.floor(next() * rules.length)];
    const choice = Math.floor(next() * 9);
    changes.push(`${choice}:${pick.id}`);
    if (choice === 0) await ok('PUT', `/api/v1/rules/${pick.id}`, { log: next() < 0.5 });
    else if (choice === 1) await ok('PUT', `/api/v1/rules/${pick.id}`, { status: next() < 0.5 ? 'disabled' : 'active' });
    else if (choice === 2) await ok('POST', '/api/v1/rules', ruleBody(next));
    else if (choice === 3) await ok('DELETE', `/api/v1/rules/${pick.id}`);
    else if (choice === 4) await ok('PUT', `/api/v1/aliases/${web.id}`, { entries: ['192.0.2.0/24', '2001:db8:19::/48', ...Array.from({ length: Math.floor(next() * 4) }, (_, i) => `203.0.113.${i * 8}/29`)] });
    else if (choice === 5) await ok('PUT', `/api/v1/aliases/${db.id}`, { entries: next() < 0.5 ? ['198.51.100.7'] : ['198.51.100.7', '198.51.100.9'] });
    else if (choice === 6) await ok('PUT', `/api/v1/rules/${pick.id}`, { priority: Math.floor(next() * rules.length) });
    else if (choice === 7) await ok('PUT', `/api/v1/rules/${pick.id}`, { quick: next() < 0.5 });
    else {
      // A new alias of one family: its sets are declared by the delta, the other family's empty.
      await ok('POST', '/api/v1/aliases', { name: `b19new${step}`, alias_type: 'network', entries: [`198.18.${step}.0/24`] });
      await ok('POST', '/api/v1/rules', { ...ruleBody(next), src_addr: `<b19new${step}>` });
    }
    modes.push(await reload());
    // Counter objects of rules no longer loaded stay until the next full load (what they counted with them).
    const kernel = kernelTable();
    const reference = referenceTable();
    const left = Object.keys(kernel.objects).filter((name) => !(name in reference.objects));
    assert.deepEqual(left.filter((name) => !name.startsWith('counter rule_')), [], `only counter objects are left over (change ${step})`);
    const kept = Object.fromEntries(Object.entries(kernel.objects).filter(([name]) => !left.includes(name)));
    assert.deepEqual(kept, reference.objects, `after change ${step} (seed ${seed}: ${changes.join(' ')})`);
    // The state kept after the load (read back in part when the delta touched a few objects) is the whole table's.
    await packetFilterOf(t.app).checkDrift();
    assert.deepEqual(packetFilterOf(t.app).drift().drift_check.differences, [], `read back after change ${step} (seed ${seed})`);
  }
  // The table stays far below the size where a full load is chosen, so every step is a delta: a 'full' here is a
  // delta script the kernel refused (the driver then loads the whole table, and the kernel would still match).
  assert.deepEqual(changes.filter((_, i) => modes[i] !== 'delta'), [], `every small change loads as a delta: ${modes.join(',')}`);
  packetFilter.apply = apply;
  packetFilter.readBackObjects = readBackObjects;
  assert.ok(partialReads >= 30, `most loads are read back in part: ${partialReads} of 40`);
  assert.equal(session.answered - answeredBefore, loads, 'every load went through the libnftables session');
  await removeAll();
});

test('100 single-rule applies while a client probes a pass port and a block port continuously: no probe is misclassified', { skip }, async () => {
  const block = await ok('POST', '/api/v1/rules', { action: 'blockreturn', direction: 'in', protocol: 'tcp', dst_addr: SERVER, dst_port_start: BLOCK_PORT });
  const fillers: string[] = [];
  for (let i = 0; i < 150; i++) fillers.push((await ok('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 20_000 + i })).id);
  await reload();
  assert.equal(connects(PASS_PORT), true);
  assert.equal(connects(BLOCK_PORT), false);

  const prober = spawn('ip', ['netns', 'exec', NS.client, process.execPath, '-e', PROBER_SCRIPT], { stdio: ['pipe', 'pipe', 'ignore'] });
  children.push(prober);
  const results: { port: number; outcome: string; ms: number }[] = [];
  createInterface({ input: prober.stdout! }).on('line', (line) => {
    const [port, outcome, ms] = line.split(' ');
    results.push({ port: Number(port), outcome, ms: Number(ms) });
  });
  const exited = new Promise((resolve) => prober.on('exit', resolve));
  const next = random(19);
  const modes: string[] = [];
  for (let i = 0; i < 100; i++) {
    // Mostly a rule elsewhere in the table; every tenth apply rewrites the block rule's own segment.
    if (i % 10 === 0) await ok('PUT', `/api/v1/rules/${block.id}`, { log: i % 20 === 0 });
    else await ok('PUT', `/api/v1/rules/${fillers[Math.floor(next() * fillers.length)]}`, { dst_port_start: 21_000 + Math.floor(next() * 8000) });
    modes.push(await reload());
  }
  prober.stdin!.end();
  await exited;
  assert.deepEqual([...new Set(modes)], ['delta'], 'every single-rule apply was a delta transaction');
  const passProbes = results.filter((r) => r.port === PASS_PORT);
  const blockProbes = results.filter((r) => r.port === BLOCK_PORT);
  assert.ok(passProbes.length >= 50 && blockProbes.length >= 50, `the client kept probing during the applies (${passProbes.length} + ${blockProbes.length})`);
  assert.deepEqual(passProbes.filter((r) => r.outcome !== 'open'), [], 'the pass port never failed');
  assert.deepEqual(blockProbes.filter((r) => r.outcome !== 'refused'), [], 'the block port never let a connection through (nor went silent)');
  // Informational: the slowest answers (a retransmitted SYN would show as about a second or more).
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 3);
  console.log(`# ${results.length} probes; slowest: ${slowest.map((r) => `${r.port} ${r.outcome} ${r.ms} ms`).join(', ')}`);
  await removeAll();
});

test('drift: a rule added by hand and a flushed table show in GET /status, the pending stream and the audit log; POST /reload repairs; start-up re-applies before serving; foreign tables stay', { skip }, async () => {
  await ok('POST', '/api/v1/rules', { action: 'blockreturn', direction: 'in', protocol: 'tcp', dst_addr: SERVER, dst_port_start: BLOCK_PORT });
  await reload();
  await packetFilterOf(t.app).checkDrift();
  let status = (await call('GET', '/api/v1/status')).body;
  assert.equal(status.drift, false);
  assert.ok(status.drift_check.checked_at, 'read back after the apply');
  assert.equal(connects(BLOCK_PORT), false);
  inNs(NS.firewall, 'nft', 'add', 'table', 'ip', 'b19foreign');
  inNs(NS.firewall, 'nft', 'add', 'chain', 'ip', 'b19foreign', 'keep');

  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const controller = new AbortController();
  const stream = await fetch(`${address}/api/v1/pending/stream`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
  assert.equal(stream.status, 200);
  const reader = stream.body!.getReader();
  let received = '';
  const driftEvent = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return received;
      received += Buffer.from(value).toString('utf8');
      if (received.includes('event: config.drift')) return received;
    }
  })();

  // By hand, behind Bulwark's back: a rule that lets the blocked port through.
  inNs(NS.firewall, 'nft', 'insert', 'rule', 'inet', 'bulwark', 'filter_in', 'tcp', 'dport', String(BLOCK_PORT), 'accept');
  assert.equal(connects(BLOCK_PORT), true, 'the hand-typed rule is in force');
  await packetFilterOf(t.app).checkDrift();
  status = (await call('GET', '/api/v1/status')).body;
  assert.equal(status.drift, true);
  assert.equal(status.status, 'degraded');
  assert.match(status.drift_check.differences.join('\n'), /chain filter_in/);
  assert.match(await driftEvent, /event: config\.drift\ndata: \{"drift":true,"differences":\["chain filter_in/);
  controller.abort();
  const audit = (await call('GET', '/api/v1/logs?source=audit')).body as { action: string; details: string }[];
  assert.ok(audit.some((entry) => entry.action === 'packet_filter.drift' && /chain filter_in/.test(entry.details)), JSON.stringify(audit.slice(0, 3)));

  assert.equal(await reload(), 'full', 'a drifted table is replaced whole');
  assert.equal(connects(BLOCK_PORT), false, 'repaired');
  await packetFilterOf(t.app).checkDrift();
  assert.equal((await call('GET', '/api/v1/status')).body.drift, false);

  // The whole table flushed (as a reboot leaves the kernel), found by the periodic check of a restarted app.
  keptDataDir = t.dataDir;
  await t.app.close(); // the data directory stays for the restart
  inNs(NS.firewall, 'nft', 'delete', 'table', 'inet', 'bulwark');
  assert.equal(connects(BLOCK_PORT), true, 'nothing loaded');
  await startApp({ dataDir: keptDataDir, driftCheckSeconds: 1 });
  assert.match(inNs(NS.firewall, 'nft', 'list', 'tables'), /table inet bulwark/, 'loaded before the app served anything');
  assert.equal(connects(BLOCK_PORT), false, 'the block rule is in force again');
  inNs(NS.firewall, 'nft', 'delete', 'table', 'inet', 'bulwark');
  let drifted = false;
  for (let i = 0; i < 50 && !drifted; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    drifted = (await call('GET', '/api/v1/status')).body.drift;
  }
  status = (await call('GET', '/api/v1/status')).body;
  assert.equal(drifted, true, 'the periodic check found the table gone');
  assert.match(status.drift_check.differences.join('\n'), /chain filter_in missing/);
  assert.equal(await reload(), 'full');
  assert.equal(connects(BLOCK_PORT), false);
  assert.match(inNs(NS.firewall, 'nft', 'list', 'tables'), /table ip b19foreign/, 'a foreign table is never touched');
  await removeAll();
});
