/**
 * /settings/flow-export through the HTTP interface (simulated platform): defaults, the fields' checks naming the
 * field, the outbound guard on collectors (a literal special address only via /settings/outbound; a name that
 * resolves to one is refused at apply, 409, and the previous export stays in force), and the state after a PUT.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';

const api = adminApi();
const { call, refused } = api;
const PATH = '/api/v1/settings/flow-export';

test('defaults, field checks naming the field, and a simulated export after a PUT', async () => {
  const initial = (await call('GET', PATH)).body;
  assert.deepEqual(initial.config, { enabled: false, protocol: 'ipfix', collectors: [], active_timeout_secs: 60, inactive_timeout_secs: 15, sampling: 1, interfaces: [] });
  assert.equal(initial.status.running, false);

  await refused('PUT', PATH, { enabled: true, interfaces: ['eth0'] }, /body\.collectors must name at least one collector/);
  await refused('PUT', PATH, { enabled: true, collectors: ['11.22.33.44:2055'] }, /body\.interfaces must name at least one interface/);
  await refused('PUT', PATH, { protocol: 'sflow' }, /body\.protocol/);
  await refused('PUT', PATH, { collectors: ['11.22.33.44'] }, /body\.collectors\/0|body\.collectors\.0/);
  await refused('PUT', PATH, { collectors: ['11.22.33.44:70000'] }, /body\.collectors\.0 must end in a port/);
  await refused('PUT', PATH, { interfaces: ['-i'] }, /body\.interfaces/);
  await refused('PUT', PATH, { interfaces: ['eth0', 'eth0'] }, /body\.interfaces must not name an interface twice/);
  await refused('PUT', PATH, { active_timeout_secs: 30, inactive_timeout_secs: 60 }, /body\.inactive_timeout_secs must not exceed active_timeout_secs/);
  await refused('PUT', PATH, { sampling: 0 }, /body\.sampling/);

  const on = await call('PUT', PATH, { enabled: true, protocol: 'netflow9', collectors: ['11.22.33.44:2055', '[2a02:ffff::9]:4739'], interfaces: ['eth0', 'eth1'], sampling: 10 });
  assert.equal(on.status, 200, JSON.stringify(on.body));
  assert.deepEqual(on.body.status.collectors, ['11.22.33.44:2055', '[2a02:ffff::9]:4739']);
  assert.equal(on.body.status.running, true);
  assert.equal(on.body.status.simulated, true);
  assert.deepEqual(on.body.status.interfaces.map((i: { interface: string }) => i.interface), ['eth0', 'eth1']);
});

test('collectors pass the outbound guard: special addresses only through the administrator\'s allow-list', async () => {
  const before = (await call('GET', PATH)).body.config;
  // Not special to the outbound guard: 11.22.33.44, 2a02:ffff::9 (the simulated platform sends nothing). A literal private address: 400 at once, naming the allow-list.
  await refused('PUT', PATH, { collectors: ['10.9.8.7:2055'] }, /body\.collectors\.0: .*\/api\/v1\/settings\/outbound/);
  // A name that resolves to loopback: refused when resolved (409), and the export in force is kept.
  const named = await call('PUT', PATH, { collectors: ['localhost:2055'] });
  assert.equal(named.status, 409, JSON.stringify(named.body));
  assert.match(named.body.error, /collectors\.0 is refused \(.*localhost is \(or resolves to\) (127\.0\.0\.1|::1), a blocked address.*\/api\/v1\/settings\/outbound/);
  const after = (await call('GET', PATH)).body;
  assert.deepEqual(after.config, before, 'the previous settings are back');
  assert.equal(after.status.running, true);
  assert.deepEqual(after.status.collectors, ['11.22.33.44:2055', '[2a02:ffff::9]:4739']);
  // Once the administrator names it, it is accepted.
  assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['10.9.8.7/32', '127.0.0.1/32', '::1/128'] })).status, 200);
  const allowed = await call('PUT', PATH, { collectors: ['10.9.8.7:2055', 'localhost:2056'] });
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  assert.equal(allowed.body.status.collectors[0], '10.9.8.7:2055');
  assert.match(allowed.body.status.collectors[1], /^(127\.0\.0\.1|\[::1\]):2056$/);
  // Off: nothing exported.
  const off = await call('PUT', PATH, { enabled: false });
  assert.equal(off.body.status.running, false);
  assert.deepEqual(off.body.status.collectors, []);
});
