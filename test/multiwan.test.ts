import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { applySample, initialHealth, meanOpinionScore } from '../src/areas/multiwan/health.js';
import type { SimulatedRouting } from '../src/platform/simulated/routing.js';

const DEFAULT = '61696677-0000-0000-0000-000000000000';
const api = '/api/v1/multiwan';
let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('health state machine: one failure warns, three go down, five successes come up; MOS from RTT', () => {
  const limits = { consec_fail_down: 3, consec_ok_up: 5, loss_pct_down: 20, loss_pct_up: 5 };
  let health = initialHealth();
  const states: string[] = [];
  for (const success of [false, false, false, true, true, true, true, true]) {
    health = applySample(health, { success, rtt_ms: success ? 20 : null }, limits).next;
    states.push(health.state);
  }
  assert.deepEqual(states, ['warning', 'warning', 'down', 'down', 'down', 'down', 'down', 'up']);
  assert.equal(health.last_loss_pct, 0);
  assert.ok(meanOpinionScore(20, 0) > 4.3 && meanOpinionScore(20, 0) < 4.5);
  assert.ok(meanOpinionScore(400, 50) < meanOpinionScore(20, 0));
});

test('instances: default seeded and protected, FIB limit, members pinned through the platform, in-use 409', async () => {
  const list = json(await t.request('GET', `${api}/instances`));
  assert.equal(list[0].id, DEFAULT);
  assert.equal(list[0].mgmt_reachable, true);
  assert.equal((await t.request('DELETE', `${api}/instances/${DEFAULT}`)).statusCode, 409);
  assert.equal((await t.request('POST', `${api}/instances`, { name: 'far', fib_number: 99 })).statusCode, 400);
  const enabled = json(await t.request('POST', `${api}/enable-fibs`, { fibs: 128 }));
  assert.equal(enabled.net_fibs, 128);
  assert.equal(enabled.already_enabled, false);
  assert.equal((await t.request('POST', `${api}/enable-fibs`, { fibs: 100 })).statusCode, 400);
  const created = await t.request('POST', `${api}/instances`, { name: 'isp2', fib_number: 2, description: 'second uplink' });
  assert.equal(created.statusCode, 201, created.body);
  const isp2 = json(created);
  assert.equal(isp2.status, 'idle');
  assert.equal((await t.request('POST', `${api}/instances`, { name: 'dup', fib_number: 2 })).statusCode, 409);
  assert.deepEqual(json(await t.request('GET', `${api}/fibs`)).used, [0, 2]);
  assert.equal(json(await t.request('PUT', `${api}/instances/${isp2.id}`, { status: 'active' })).status, 'active');

  assert.equal((await t.request('POST', `${api}/instances/${isp2.id}/members`, { interface: 'eth2' })).statusCode, 201);
  const routing = t.app.context.platform.routing as SimulatedRouting;
  assert.equal(routing.pinned.get('eth2'), 2);
  assert.deepEqual(json(await t.request('GET', `${api}/instances/${isp2.id}/members`)), [{ instance_id: isp2.id, interface: 'eth2' }]);
  await t.request('POST', `${api}/instances/${DEFAULT}/members`, { interface: 'eth2' });
  assert.deepEqual(json(await t.request('GET', `${api}/instances/${isp2.id}/members`)), [], 'moved to the other instance');
  assert.equal((await t.request('DELETE', `${api}/instances/${DEFAULT}/members/eth2`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `${api}/instances/${DEFAULT}/members/eth2`)).statusCode, 404);
});

test('gateways, groups, members, policies: CRUD, references (unknown 400, in use 409), health, active selection', async () => {
  const isp2 = json(await t.request('GET', `${api}/instances`)).find((i: { name: string }) => i.name === 'isp2');
  const badInstance = await t.request('POST', `${api}/gateways`, { name: 'g', instance_id: '00000000-0000-4000-8000-000000000000', interface: 'eth1', next_hop: '192.0.2.1' });
  assert.equal(badInstance.statusCode, 400);
  assert.match(json(badInstance).error, /instance_id/);
  const badHop = await t.request('POST', `${api}/gateways`, { name: 'g', instance_id: DEFAULT, interface: 'eth1', next_hop: 'router' });
  assert.equal(badHop.statusCode, 400);
  const wan1 = json(await t.request('POST', `${api}/gateways`, { name: 'wan1', instance_id: DEFAULT, interface: 'eth1', next_hop: '192.0.2.1', weight: 3 }));
  assert.equal(wan1.state, 'unknown');
  assert.equal(wan1.interval_ms, 500);
  const wan2 = json(await t.request('POST', `${api}/gateways`, { name: 'wan2', instance_id: isp2.id, interface: 'eth2', next_hop: '198.51.100.1' }));
  assert.equal(json(await t.request('PUT', `${api}/gateways/${wan2.id}`, { monitor_kind: 'tcp', monitor_port: 443 })).monitor_kind, 'tcp');
  assert.equal((await t.request('DELETE', `${api}/instances/${isp2.id}`)).statusCode, 409, 'a gateway uses the instance');

  const group = await t.request('POST', `${api}/groups`, { name: 'uplinks', policy: 'Weighted', sticky: '5tuple' });
  assert.equal(group.statusCode, 201, group.body);
  const uplinks = json(group);
  assert.equal(uplinks.policy, 'weighted_lb');
  assert.equal(uplinks.sticky, 'five_tuple');
  assert.equal((await t.request('POST', `${api}/groups`, { name: 'x', policy: 'random' })).statusCode, 400);
  assert.equal((await t.request('POST', `${api}/groups/${uplinks.id}/members`, { gateway_id: '00000000-0000-4000-8000-000000000000' })).statusCode, 400);
  assert.equal((await t.request('POST', `${api}/groups/${uplinks.id}/members`, { gateway_id: wan1.id, weight: 3 })).statusCode, 201);
  assert.equal((await t.request('POST', `${api}/groups/${uplinks.id}/members`, { gateway_id: wan2.id, tier: 1, weight: 1 })).statusCode, 201);
  assert.equal((await t.request('POST', `${api}/groups/${uplinks.id}/members`, { gateway_id: wan2.id, tier: 2, weight: 1 })).statusCode, 201, 'upsert');
  assert.deepEqual(json(await t.request('GET', `${api}/groups/${uplinks.id}/members`)).map((m: { tier: number }) => m.tier), [1, 2]);
  assert.equal((await t.request('DELETE', `${api}/gateways/${wan1.id}`)).statusCode, 409, 'a group uses the gateway');

  assert.deepEqual(json(await t.request('GET', `${api}/groups/${uplinks.id}/active`)), { selection: 'none', gateways: [] });
  // Five good samples bring wan1 up; wan2 goes up too but sits in tier 2.
  for (let i = 0; i < 5; i++) {
    await t.request('POST', `${api}/gateways/${wan1.id}/probe-now`, { success: true, rtt_ms: 10 + i });
    await t.request('POST', `${api}/gateways/${wan2.id}/probe-now`, {});
  }
  const up = json(await t.request('GET', `${api}/gateways/${wan1.id}`));
  assert.equal(up.state, 'up');
  assert.equal(up.last_rtt_ms, 14);
  assert.equal(up.last_jitter_ms, 1);
  assert.equal(json(await t.request('GET', `${api}/gateways/${wan2.id}`)).state, 'up', 'real probes through the simulated platform');
  assert.deepEqual(json(await t.request('GET', `${api}/groups/${uplinks.id}/active`)), { selection: 'weighted', gateways: [wan1.id] });
  for (let i = 0; i < 3; i++) await t.request('POST', `${api}/gateways/${wan1.id}/probe-now`, { success: false, error: 'manual fail' });
  assert.equal(json(await t.request('GET', `${api}/gateways/${wan1.id}`)).state, 'down');
  assert.deepEqual(json(await t.request('GET', `${api}/groups/${uplinks.id}/active`)), { selection: 'weighted', gateways: [wan2.id] }, 'failed over to tier 2');
  const events = json(await t.request('GET', `${api}/gateways/${wan1.id}/events`));
  assert.deepEqual(events.map((e: { to_state: string }) => e.to_state), ['down', 'warning', 'up']);
  assert.equal(events[0].reason, 'manual fail');
  assert.equal(typeof JSON.parse(events[0].probe_snapshot_json).consec_fail, 'number');
  const sla = json(await t.request('GET', `${api}/gateways/${wan1.id}/sla?window=24h`));
  assert.equal(sla.length, 1);
  assert.equal(sla[0].samples, 8);
  assert.equal(sla[0].loss_pct, 37.5);
  assert.equal(sla[0].rtt_p99, 14);

  // Policies reference their target by kind.
  const missingTarget = await t.request('POST', `${api}/policies`, { priority: 10, name: 'p', action_kind: 'set_group', target_id: wan1.id });
  assert.equal(missingTarget.statusCode, 400);
  assert.match(json(missingTarget).error, /target_id/);
  const p1 = json(await t.request('POST', `${api}/policies`, { priority: 10, name: 'lan-out', action_kind: 'set_group', target_id: uplinks.id, src_addr: '10.0.0.0/24', iface_in: 'eth0', ip_version: 'v4' }));
  const p2 = json(await t.request('POST', `${api}/policies`, { priority: 20, name: 'voip', action_kind: 'set_gateway', target_id: wan1.id, protocol: 'udp', dst_port: '5060' }));
  const p3 = json(await t.request('POST', `${api}/policies`, { priority: 30, name: 'guest', action_kind: 'set_instance', target_id: isp2.id, iface_in: 'eth3', src_addr: '10.9.0.0/24' }));
  assert.equal((await t.request('POST', `${api}/policies`, { priority: 1, name: 'bad', action_kind: 'set_gateway', target_id: wan1.id, src_addr: 'nowhere' })).statusCode, 400);
  assert.equal((await t.request('DELETE', `${api}/groups/${uplinks.id}`)).statusCode, 409, 'a policy uses the group');
  assert.equal(json(await t.request('GET', `${api}/policies/${p1.id}`)).name, 'lan-out');
  assert.equal(json(await t.request('PUT', `${api}/policies/${p2.id}`, { description: 'SIP' })).description, 'SIP');
  const copy = await t.request('POST', `${api}/policies/${p2.id}/duplicate`);
  assert.equal(copy.statusCode, 201);
  assert.deepEqual([json(copy).name, json(copy).status, json(copy).priority], ['voip-copy', 'disabled', 21]);
  assert.equal(json(await t.request('PUT', `${api}/policies/${json(copy).id}/toggle`, { enabled: true })).status, 'active');
  assert.equal((await t.request('DELETE', `${api}/policies/${json(copy).id}`)).statusCode, 204);
  assert.deepEqual(json(await t.request('PUT', `${api}/policies/reorder`, { policy_ids: [p3.id, p1.id, p2.id] })), { message: '3 policies reordered' });
  assert.deepEqual(json(await t.request('GET', `${api}/policies?sort=priority`)).map((p: { name: string }) => p.name), ['guest', 'lan-out', 'voip']);

  // Apply compiles and loads the anchors.
  const applied = json(await t.request('POST', `${api}/apply`));
  assert.ok(applied.rules >= 4);
  const anchors = await t.app.context.platform.routing.anchors();
  assert.match(anchors['bulwark-pbr'], new RegExp(`pass in quick on eth3 from 10\\.9\\.0\\.0/24 to any rtable 2 keep state \\(if-bound\\) label "pbr:${p3.id}"`));
  assert.match(anchors['bulwark-pbr'], /pass out quick on eth2 inet from 10\.0\.0\.0\/24 to any route-to \{ \(eth2 198\.51\.100\.1\) weight 1 \} round-robin keep state/);
  assert.match(anchors['bulwark-pbr'], /pass out quick on eth1 proto udp from any to any port 5060 route-to \(eth1 192\.0\.2\.1\)/);
  assert.match(anchors['bulwark-mwan-reply'], /reply-to \(eth1 192\.0\.2\.1\)/);

  // Dry run: an unchanged set is neither new nor removed; a changed one shows exactly the difference.
  const current = json(await t.request('GET', `${api}/policies`));
  const same = json(await t.request('POST', `${api}/preview`, { policies: current.map(({ id: _id, ...p }: Record<string, unknown>) => p) }));
  assert.deepEqual([same.new_rules, same.removed_rules], [[], []]);
  const routing = t.app.context.platform.routing as SimulatedRouting;
  routing.flowTable = [{ id: 1, protocol: 'tcp', src: '10.0.0.5:5000', dst: '93.184.216.34:443', iface: 'eth1', rtable: 0, bytes: 1200, packets: 10, age_secs: 3, state: 'ESTABLISHED', label: `pbr:${p2.id}` }];
  const changed = json(await t.request('POST', `${api}/preview`, { policies: [{ priority: 1, name: 'all-guest', action_kind: 'set_instance', target_id: isp2.id, iface_in: 'eth0' }] }));
  assert.equal(changed.new_rules.length, 1);
  assert.match(changed.new_rules[0], /rtable 2/);
  assert.equal(changed.removed_rules.length, 3);
  assert.equal(changed.would_strand_mgmt, true);
  assert.equal(changed.validation[0].severity, 'error');
  assert.equal(changed.affected_flows[0].bytes, 1200);
  assert.deepEqual(json(await t.request('GET', `${api}/flows`))[0].src, '10.0.0.5:5000');
  assert.deepEqual(json(await t.request('POST', `${api}/flows/${encodeURIComponent(`pbr:${p2.id}`)}/migrate`)), { killed: 1 });
  assert.deepEqual(json(await t.request('GET', `${api}/flows`)), []);
});

test('leaks: create, seed management escapes (idempotent), escapes cannot be deleted', async () => {
  const isp2 = json(await t.request('GET', `${api}/instances`)).find((i: { name: string }) => i.name === 'isp2');
  const leak = await t.request('POST', `${api}/leaks`, { name: 'shared-dns', src_instance_id: isp2.id, dst_instance_id: isp2.id, prefix: '10.53.0.0/24', protocol: 'udp', ports: '53' });
  assert.equal(leak.statusCode, 201, leak.body);
  assert.equal((await t.request('POST', `${api}/leaks`, { name: 'x', src_instance_id: isp2.id, dst_instance_id: DEFAULT, prefix: 'not-a-prefix' })).statusCode, 400);
  assert.deepEqual(json(await t.request('POST', `${api}/leaks/seed-mgmt`)), { message: 'mgmt-escape leaks seeded', created: 1 });
  assert.equal(json(await t.request('POST', `${api}/leaks/seed-mgmt`)).created, 0);
  const leaks = json(await t.request('GET', `${api}/leaks`));
  const escape = leaks.find((l: { name: string }) => l.name === 'isp2-mgmt-escape');
  assert.equal((await t.request('DELETE', `${api}/leaks/${escape.id}`)).statusCode, 409);
  assert.equal((await t.request('DELETE', `${api}/leaks/${json(leak).id}`)).statusCode, 204);
});

test('YAML export → import round-trip restores the configuration; a bad document changes nothing', async () => {
  const exported = await t.request('GET', `${api}/config.yaml`);
  assert.match(String(exported.headers['content-type']), /yaml/);
  const document = parse(exported.body);
  assert.ok(document.gateways.length >= 2);
  assert.ok(document.group_members.length >= 2);
  const before = json(await t.request('GET', `${api}/config.yaml?format=json`));

  // Change things, then import the export: everything returns to what was exported.
  const wan1 = before.gateways.find((g: { name: string }) => g.name === 'wan1');
  await t.request('PUT', `${api}/gateways/${wan1.id}`, { weight: 200, interface: 'eth9' });
  const group = before.groups[0];
  await t.request('DELETE', `${api}/groups/${group.id}/members/${wan1.id}`);
  const imported = await t.request('POST', `${api}/apply-yaml`, { yaml: exported.body });
  assert.equal(imported.statusCode, 200, imported.body);
  assert.match(json(imported).message, /^imported 1 instances, 2 gateways, 1 groups, 3 policies, 1 leaks$/);
  const after = json(await t.request('GET', `${api}/config.yaml?format=json`));
  const strip = (doc: Record<string, Record<string, unknown>[]>) =>
    Object.fromEntries(Object.entries(doc).map(([k, items]) => [k, items.map(({ updated_at: _u, ...rest }) => rest)]));
  assert.deepEqual(strip(after), strip(before));

  const broken = parse(exported.body);
  broken.gateways[0].next_hop = 'nonsense';
  broken.policies[0].name = 'renamed-before-failure';
  const refused = await t.request('POST', `${api}/apply-yaml`, broken);
  assert.equal(refused.statusCode, 400);
  assert.match(json(refused).error, /gateways\[0\]/);
  assert.deepEqual(strip(json(await t.request('GET', `${api}/config.yaml?format=json`))), strip(before), 'nothing applied');
  assert.equal((await t.request('POST', `${api}/apply-yaml`, { yaml: 'gateways: [unclosed' })).statusCode, 400);
});
