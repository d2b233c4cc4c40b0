/**
 * Hit counters over time through the HTTP interface: the packet filter's per-rule counters (a driver whose
 * counters() this test sets) are sampled into totals that survive a reload's reset, GET /rules carries `hits`
 * and `last_hit_at`, /metrics/series has a series per rule, and GET /rules/analysis?unused_days=N lists rules
 * without a hit for N days (only once counting has run that long).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import type { PacketFilter, RuleCounter } from '../src/platform/packet-filter.js';
import { areaOf } from './helpers/areas.js';
import { adminHeaders } from './helpers/auth.js';
import { json } from './helpers/app.js';
import type { createPacketFilterArea } from '../src/areas/packet-filter/routes.js';

const platform = createSimulatedPlatform();
let kernel: RuleCounter[] = [];
// the simulated packet filter, with counters the test sets
const packetFilter: PacketFilter = Object.assign(Object.create(platform.packetFilter) as PacketFilter, { counters: async () => kernel });
const api = adminApi({ platform: { ...platform, packetFilter } });
const { call, created } = api;
const hits = () => areaOf<ReturnType<typeof createPacketFilterArea>>(api.t.app, 'packet-filter').hits;
const DAY = 86_400_000;

test('sampled counters become hits and last_hit_at on GET /rules, a series per rule, and survive a reset', async () => {
  const busy = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 443 });
  const idle = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp' });
  const firstSample = api.t.clock.now();
  kernel = [{ name: `rule_${busy.id}`, packets: 10, bytes: 1000 }, { name: `rule_${idle.id}`, packets: 0, bytes: 0 }, { name: 'nat_x', packets: 99, bytes: 99 }];
  await hits().sample();
  let list = (await call('GET', '/api/v1/rules')).body;
  const row = (id: string) => list.find((r: any) => r.id === id);
  assert.deepEqual(row(busy.id).hits, { packets: 10, bytes: 1000 });
  assert.equal(row(busy.id).last_hit_at, new Date(firstSample).toISOString());
  assert.deepEqual(row(idle.id).hits, { packets: 0, bytes: 0 });
  assert.equal(row(idle.id).last_hit_at, null);

  // Later: more traffic; then a reload resets the kernel's counter to a smaller value, which is all new.
  api.t.clock.advance(60_000);
  kernel = [{ name: `rule_${busy.id}`, packets: 25, bytes: 2500 }];
  await hits().sample();
  api.t.clock.advance(60_000);
  kernel = [{ name: `rule_${busy.id}`, packets: 4, bytes: 400 }];
  await hits().sample();
  list = (await call('GET', '/api/v1/rules')).body;
  assert.deepEqual(row(busy.id).hits, { packets: 29, bytes: 2900 }, '10 + 15 + 4 after the reset');
  assert.equal(row(busy.id).last_hit_at, new Date(api.t.clock.now()).toISOString());
  // The same counts per sampling interval in the metrics store.
  const series = await call('GET', `/api/v1/metrics/series?name=rule.${busy.id}.packets&resolution=second&range_secs=600`);
  assert.equal(series.status, 200, JSON.stringify(series.body));
  assert.deepEqual(series.body.points.map((p: any) => p.v), [10, 15, 4]);
  // The single rule read keeps its configuration shape and entity tag (hits change without the rule changing).
  const one = await call('GET', `/api/v1/rules/${busy.id}`);
  assert.equal('hits' in one.body, false);
  for (const rule of [busy, idle]) assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('loads: a full load takes a sample first and starts the readings from zero; a sample a load overlaps is dropped', async () => {
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'any', protocol: 'tcp', dst_port_start: 25 });
  const counted = (packets: number) => [{ name: `rule_${rule.id}`, packets, bytes: packets * 100 }];
  const total = async () => (await call('GET', '/api/v1/rules')).body.find((r: any) => r.id === rule.id).hits.packets;
  kernel = counted(10);
  await hits().sample();
  assert.equal(await total(), 10);

  // A sample that overlaps a load counts nothing (it may have read before a reset the totals then learn of).
  hits().loadStarted();
  kernel = counted(13);
  await hits().sample();
  hits().loadEnded({ ok: true, countersKept: true });
  assert.equal(await total(), 10);
  api.t.clock.advance(5000);
  assert.equal(await total(), 13, 'a delta keeps the counter: read on as before');

  // A load that replaces the counters (pf's, or an nftables table that could not be listed): the sample before it
  // takes the 4 counted since, and after it a counter above its old reading is still all new (the rule "below the
  // last reading is a reset" alone counted 20 - 17 = 3 here).
  kernel = counted(17);
  await hits().beforeFullLoad();
  hits().loadStarted();
  hits().loadEnded({ ok: true, countersKept: false });
  assert.equal(await total(), 17);
  kernel = counted(20);
  api.t.clock.advance(5000);
  assert.equal(await total(), 37, '17 + the 20 counted since the full load');
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('unused_days lists only rules counted for that long without a hit', async () => {
  const old = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 });
  const used = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 80 });
  kernel = [{ name: `rule_${used.id}`, packets: 1, bytes: 60 }];
  await hits().sample();
  // Counting began moments ago: nothing can be known unused for 7 days yet.
  assert.deepEqual((await call('GET', '/api/v1/rules/analysis?unused_days=7')).body.unused, []);
  api.t.clock.advance(8 * DAY);
  kernel = [{ name: `rule_${used.id}`, packets: 2, bytes: 120 }];
  await hits().sample();
  // Eight days on, the first session has expired: sign in again.
  const headers = await adminHeaders(api.t.app);
  const later = await api.t.app.inject({ method: 'GET', url: '/api/v1/rules/analysis?unused_days=7', headers });
  assert.equal(later.statusCode, 200, later.body);
  const unused = json(later).unused;
  assert.deepEqual(unused.map((u: any) => [u.rule_id, u.last_hit_at]), [[old.id, null]]);
  // Without the parameter no unused list is computed.
  assert.equal('unused' in json(await api.t.app.inject({ method: 'GET', url: '/api/v1/rules/analysis', headers })), false);
});
