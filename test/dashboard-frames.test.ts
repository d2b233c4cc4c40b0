import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../src/core/clock.js';
import { ConnectionsDiffer, flowKey, topFlows } from '../src/live/flow-frames.js';
import { DashboardBroadcaster, type FrameSocket } from '../src/live/dashboard-broadcaster.js';
import type { Flow } from '../src/platform/connections.js';
import { flow } from './helpers/traffic.js';

type Entry = { protocol: string; src_addr: string; src_port: number; dst_addr: string; dst_port: number; bytes_in: number; bytes_out: number };
/** What a client holds: key → entry, updated from full frames and deltas. */
function applyFrame(view: Map<string, Entry>, frame: { connections?: Entry[]; connections_delta?: { add: Entry[]; update: Entry[]; remove: string[] } }) {
  if (frame.connections) {
    view.clear();
    for (const entry of frame.connections) view.set(flowKey(entry), entry);
  } else if (frame.connections_delta) {
    for (const key of frame.connections_delta.remove) assert.ok(view.delete(key), `remove of unknown key ${key}`);
    for (const entry of frame.connections_delta.add) {
      assert.ok(!view.has(flowKey(entry)), `add of existing key ${flowKey(entry)}`);
      view.set(flowKey(entry), entry);
    }
    for (const entry of frame.connections_delta.update) {
      assert.ok(view.has(flowKey(entry)), `update of unknown key ${flowKey(entry)}`);
      view.set(flowKey(entry), entry);
    }
  } else assert.fail('frame carries neither connections nor connections_delta');
}

const expectedView = (flows: Flow[]) => new Map(topFlows(flows, 500).map((f) => [flowKey(f), f]));
function assertViewMatches(view: Map<string, Entry>, flows: Flow[]) {
  const expected = expectedView(flows);
  assert.deepEqual([...view.keys()].sort(), [...expected.keys()].sort());
  for (const [key, entry] of view) {
    assert.equal(entry.bytes_in, expected.get(key)!.bytes_in, key);
  }
}

/** A replayed sequence of state tables: adds, byte updates, removals, churn across the top-500 boundary. */
function replaySequence(): Flow[][] {
  let flows = Array.from({ length: 800 }, (_, i) => flow(i, 1000 + i * 10));
  const steps: Flow[][] = [flows];
  for (let step = 1; step <= 12; step++) {
    flows = flows
      .filter((f) => (f.id + step) % 37 !== 0) // removals
      .map((f) => (f.id % 20 === step % 20 ? { ...f, bytes_in: f.bytes_in + 5000 * step } : f)); // 5 % updated
    flows.push(...Array.from({ length: 15 }, (_, i) => flow(10_000 + step * 100 + i, 20_000 + i))); // heavy newcomers
    steps.push(flows);
  }
  return steps;
}

test('topFlows keeps the 500 heaviest, heaviest first, same as a full sort', () => {
  const flows = Array.from({ length: 5000 }, (_, i) => flow(i, (i * 7919) % 100_003));
  const top = topFlows(flows);
  const sorted = [...flows].sort((a, b) => b.bytes_in - a.bytes_in || a.id - b.id).slice(0, 500);
  assert.deepEqual(top.map((f) => f.id), sorted.map((f) => f.id));
});

test('deltas against a replayed sequence of state tables rebuild exactly the top 500 at every step', () => {
  const differ = new ConnectionsDiffer();
  const view = new Map<string, Entry>();
  let deltas = 0;
  const seen = { add: 0, update: 0, remove: 0 };
  for (const [index, flows] of replaySequence().entries()) {
    const json = differ.next(topFlows(flows));
    const full = JSON.parse(json.full) as Entry[];
    assert.equal(full.length, 500);
    if (index === 0) applyFrame(view, { connections: full });
    else {
      assert.ok(json.delta, `step ${index}: a 5 % change must give a delta smaller than the full list`);
      assert.ok(json.delta.length < json.full.length);
      const delta = JSON.parse(json.delta);
      seen.add += delta.add.length;
      seen.update += delta.update.length;
      seen.remove += delta.remove.length;
      applyFrame(view, { connections_delta: delta });
      deltas++;
    }
    assertViewMatches(view, flows);
  }
  assert.equal(deltas, 12);
  assert.ok(seen.add > 0 && seen.update > 0 && seen.remove > 0, `every kind of change exercised: ${JSON.stringify(seen)}`);
});

test('the delta is dropped for the full list when it would not be smaller', () => {
  const differ = new ConnectionsDiffer();
  differ.next(topFlows(Array.from({ length: 600 }, (_, i) => flow(i, 1000 + i))));
  const everyFlowChanged = differ.next(topFlows(Array.from({ length: 600 }, (_, i) => flow(i, 5000 + i))));
  assert.equal(everyFlowChanged.delta, null);
});

/** A socket whose writes complete only when the test says so. */
class HeldSocket implements FrameSocket {
  frames: any[] = [];
  callbacks: (() => void)[] = [];
  terminated = false;
  constructor(private readonly autoComplete = true) {}
  send(data: Buffer, callback: () => void) {
    this.frames.push(JSON.parse(data.toString()));
    if (this.autoComplete) queueMicrotask(callback);
    else this.callbacks.push(callback);
  }
  drain() {
    for (const cb of this.callbacks.splice(0)) cb();
  }
  terminate() {
    this.terminated = true;
  }
}

function broadcasterFor(tables: Flow[][], clock: ManualClock, totals?: number[]) {
  let step = 0;
  let serialised = 0;
  const broadcaster = new DashboardBroadcaster({
    clock,
    collect: async () => {
      const flows = tables[Math.min(step, tables.length - 1)];
      const total = totals?.[Math.min(step, totals.length - 1)] ?? flows.length;
      step++;
      return { table: { flows, total }, fields: { status: { pf_states: total }, get serialisedCount() { return ++serialised; } } };
    },
    history: async () => Buffer.from('{"type":"history","data":[]}'),
  });
  return { broadcaster, serialisations: () => serialised };
}

test('a client that fell behind is skipped, then resyncs with a full frame; the others keep getting deltas', async () => {
  const clock = new ManualClock();
  const tables = replaySequence();
  const { broadcaster, serialisations } = broadcasterFor(tables, clock);
  const steady = new HeldSocket();
  const lagging = new HeldSocket(false);
  assert.ok(broadcaster.tryReserve());
  await broadcaster.attach(steady);
  assert.ok(broadcaster.tryReserve());
  await broadcaster.attach(lagging);
  const steadyView = new Map<string, Entry>();
  const laggingView = new Map<string, Entry>();

  for (let i = 0; i < tables.length; i++) {
    await broadcaster.tick();
    await new Promise((resolve) => setImmediate(resolve));
    if (i === 2 || i === 7) lagging.drain(); // the lagging client catches up only twice
    clock.advance(1000);
  }
  assert.equal(serialisations(), tables.length, 'the frame fields are serialised once per tick, whatever the socket count');
  const steadyFrames = steady.frames.filter((f) => f.type === 'status_update');
  assert.equal(steadyFrames.length, tables.length);
  assert.ok(steadyFrames[0].connections, 'first frame of a client is full');
  assert.ok(steadyFrames.slice(1).every((f: any) => f.connections_delta), 'later frames are deltas');
  for (const frame of steadyFrames) applyFrame(steadyView, frame);
  assertViewMatches(steadyView, tables[tables.length - 1]);

  const laggingFrames = lagging.frames.filter((f) => f.type === 'status_update');
  assert.deepEqual(laggingFrames.map((f: any) => f.seq), [4, 9], 'skipped while its history batch or an earlier frame was pending');
  assert.ok(laggingFrames.every((f: any) => f.connections), 'every frame after falling behind is a full resync');
  for (const frame of laggingFrames) applyFrame(laggingView, frame);
  assertViewMatches(laggingView, tables[8]);
  assert.equal(lagging.terminated, false, 'caught up within 5 s each time');
});

test('a socket that cannot take a frame within 5 s is closed; the tick is 5 s above 5,000 states', async () => {
  const clock = new ManualClock();
  const small = [flow(1, 10)];
  const big = Array.from({ length: 5001 }, (_, i) => flow(i, i));
  const { broadcaster } = broadcasterFor([small, small, big, big, small], clock);
  const stuck = new HeldSocket(false);
  broadcaster.tryReserve();
  await broadcaster.attach(stuck);

  assert.equal(await broadcaster.poll(), true);
  assert.equal(broadcaster.intervalMs, 1000);
  clock.advance(999);
  assert.equal(await broadcaster.poll(), false, 'not due before 1 s');
  clock.advance(1);
  assert.equal(await broadcaster.poll(), true);
  clock.advance(1000);
  assert.equal(await broadcaster.poll(), true, 'third tick reads 5,001 states');
  assert.equal(broadcaster.intervalMs, 5000);
  clock.advance(4999);
  assert.equal(await broadcaster.poll(), false, 'above 5,000 states the next tick waits 5 s');
  assert.equal(stuck.terminated, false, 'pending for 4.999 s: still open');
  clock.advance(1);
  assert.equal(await broadcaster.poll(), true);
  assert.equal(stuck.terminated, true, 'its history batch has been pending for 5 s or more: closed');
  assert.equal(broadcaster.socketCount, 0);
  assert.equal(broadcaster.intervalMs, 5000);
  clock.advance(5000);
  await broadcaster.poll();
  assert.equal(broadcaster.intervalMs, 1000, 'back to 1 s once the table shrinks');
});

test('the socket cap counts handshakes in progress', () => {
  const broadcaster = new DashboardBroadcaster({ clock: new ManualClock(), collect: async () => ({ table: { flows: [], total: 0 }, fields: {} }), history: async () => Buffer.alloc(0), maxSockets: 3 });
  assert.ok(broadcaster.tryReserve() && broadcaster.tryReserve() && broadcaster.tryReserve());
  assert.equal(broadcaster.tryReserve(), false);
  broadcaster.release();
  assert.equal(broadcaster.tryReserve(), true);
});
