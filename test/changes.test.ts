/**
 * POST /api/v1/changes through the HTTP interface: all-or-none in one transaction, keys naming objects created
 * earlier in the set, dry runs that write nothing, If-Match per operation, each operation's own permission,
 * settings sections, and the pending/apply flow afterwards.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { json } from './helpers/app.js';

const api = adminApi();
const { call, created } = api;

const changes = (operations: unknown[], query = '') => call('POST', `/api/v1/changes${query}`, { operations });
const count = async (kind: string) => (await call('GET', `/api/v1/${kind}`)).body.length;

test('operations referencing each other by key apply together, and pending then shows them', async () => {
  const answer = await changes([
    { op: 'create', path: '/api/v1/schedules', key: 'office', body: { name: 'office', time_ranges: '09:00-17:00' } },
    { op: 'create', path: '/api/v1/aliases', key: 'web', body: { name: 'web', alias_type: 'host', entries: ['10.0.0.80'] } },
    { op: 'create', path: '/api/v1/rules', key: 'allow', body: { action: 'pass', direction: 'in', protocol: 'tcp', dst_addr: '<web>', dst_port_start: 443, schedule_id: { $ref: 'office' } } },
    { op: 'update', path: '/api/v1/aliases/$web', body: { entries: ['10.0.0.80', '10.0.0.81'] } },
    { op: 'update', path: '/api/v1/rules/block-logging', body: { enabled: false } },
  ]);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const { created: ids, changes: diff, applied, dry_run } = answer.body;
  assert.deepEqual([applied, dry_run], [true, false]);
  assert.deepEqual(Object.keys(ids).sort(), ['allow', 'office', 'web']);
  const rule = (await call('GET', `/api/v1/rules/${ids.allow}`)).body;
  assert.equal(rule.schedule_id, ids.office, '{"$ref": "office"} became the schedule\'s id');
  assert.deepEqual((await call('GET', `/api/v1/aliases/${ids.web}`)).body.entries, ['10.0.0.80', '10.0.0.81']);
  assert.equal((await call('GET', '/api/v1/rules/block-logging')).body.enabled, false);
  assert.deepEqual(diff.map((c: any) => [c.op, c.kind, c.path]), [
    ['create', 'schedule', '/api/v1/schedules'], ['create', 'alias', '/api/v1/aliases'], ['create', 'rule', '/api/v1/rules'],
    ['update', 'alias', `/api/v1/aliases/${ids.web}`], ['update', 'pf_settings', '/api/v1/rules/block-logging'],
  ]);
  assert.deepEqual(diff[3].before.entries, ['10.0.0.80']);
  assert.deepEqual(diff[4].before, { enabled: true });
  const pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.firewall, true);
  assert.deepEqual(pending.changes.rules.added, [ids.allow]);
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  assert.equal((await call('GET', '/api/v1/pending')).body.firewall, false);
  // Delete them again in one set, in dependency order.
  const removed = await changes([
    { op: 'delete', path: `/api/v1/rules/${ids.allow}` },
    { op: 'delete', path: `/api/v1/aliases/${ids.web}` },
    { op: 'delete', path: `/api/v1/schedules/${ids.office}` },
    { op: 'update', path: '/api/v1/rules/block-logging', body: { enabled: true } },
  ]);
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  assert.deepEqual([await count('rules'), await count('aliases'), await count('schedules')], [0, 0, 0]);
});

test('one refused operation rolls back every earlier one, and the answer names it', async () => {
  const rule = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', description: 'before' });
  const answer = await changes([
    { op: 'create', path: '/api/v1/aliases', body: { name: 'kept', alias_type: 'host', entries: ['10.0.0.1'] } },
    { op: 'update', path: `/api/v1/rules/${rule.id}`, body: { description: 'after' } },
    { op: 'create', path: '/api/v1/rules', body: { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 70000 } },
  ]);
  assert.equal(answer.status, 400);
  assert.equal(answer.body.error, 'operations.2.body.dst_port_start must be <= 65535; nothing was changed');
  assert.equal(await count('aliases'), 0, 'the alias created first was rolled back');
  assert.equal((await call('GET', `/api/v1/rules/${rule.id}`)).body.description, 'before', 'the update was rolled back');
  // A model refusal (409 duplicate name) keeps its status.
  const duplicate = await changes([
    { op: 'create', path: '/api/v1/aliases', body: { name: 'twice', alias_type: 'host', entries: ['10.0.0.1'] } },
    { op: 'create', path: '/api/v1/aliases', body: { name: 'TWICE', alias_type: 'host', entries: ['10.0.0.2'] } },
  ]);
  assert.equal(duplicate.status, 409);
  assert.match(duplicate.body.error, /^operations\.1 \(create \/api\/v1\/aliases\): alias with name "TWICE" already exists; nothing was changed$/);
  assert.equal(await count('aliases'), 0);
  // An unknown id is a 404 naming the operation.
  const missing = await changes([{ op: 'delete', path: '/api/v1/rules/00000000-0000-4000-8000-000000000099' }]);
  assert.equal(missing.status, 404);
  assert.match(missing.body.error, /^operations\.0 \(delete /);
  assert.equal((await call('DELETE', `/api/v1/rules/${rule.id}`)).status, 204);
});

test('dry_run validates everything and answers the diff without writing', async () => {
  const before = (await call('GET', '/api/v1/config/export')).body;
  const pendingBefore = (await call('GET', '/api/v1/pending')).body;
  const answer = await changes([
    { op: 'create', path: '/api/v1/aliases', key: 'a', body: { name: 'dry', alias_type: 'host', entries: ['10.0.0.9'] } },
    { op: 'create', path: '/api/v1/rules', body: { action: 'block', direction: 'in', protocol: 'any', src_addr: '<dry>' } },
    { op: 'update', path: '/api/v1/aliases/$a', body: { description: 'checked' } },
  ], '?dry_run=true');
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.deepEqual([answer.body.dry_run, answer.body.applied], [true, false]);
  assert.equal(answer.body.changes[2].after.description, 'checked');
  assert.equal(answer.body.changes[1].after.rule_match.src_addr, '<dry>');
  assert.deepEqual([await count('aliases'), await count('rules')], [0, 0], 'nothing was written');
  assert.deepEqual((await call('GET', '/api/v1/pending')).body, pendingBefore, 'nothing became pending');
  const after = (await call('GET', '/api/v1/config/export')).body;
  assert.deepEqual(after.objects ?? after, before.objects ?? before);
  // A dry run refuses what the real run would.
  const refused = await changes([{ op: 'create', path: '/api/v1/rules', body: { action: 'pass', direction: 'in', protocol: 'tcp', src_addr: '<nosuch>' } }], '?dry_run=true');
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /alias "nosuch" does not exist/);
});

test('If-Match per operation: a stale tag answers 412 and changes nothing; the current one applies', async () => {
  const alias = await created('/api/v1/aliases', { name: 'etagged', alias_type: 'host', entries: ['10.0.0.1'] });
  const read = await api.t.app.inject({ method: 'GET', url: `/api/v1/aliases/${alias.id}`, headers: api.headers });
  const tag = read.headers.etag as string;
  assert.ok(tag);
  assert.equal((await call('PUT', `/api/v1/aliases/${alias.id}`, { description: 'changed elsewhere' })).status, 200);
  const stale = await changes([
    { op: 'create', path: '/api/v1/schedules', body: { name: 'x', time_ranges: '09:00-17:00' } },
    { op: 'update', path: `/api/v1/aliases/${alias.id}`, if_match: tag, body: { description: 'mine' } },
  ]);
  assert.equal(stale.status, 412);
  assert.match(stale.body.error, /operations\.1 .*if_match does not name the current entity tag/);
  assert.equal(await count('schedules'), 0);
  const current = json(await api.t.app.inject({ method: 'GET', url: `/api/v1/aliases/${alias.id}`, headers: api.headers }));
  const fresh = (await api.t.app.inject({ method: 'GET', url: `/api/v1/aliases/${alias.id}`, headers: api.headers })).headers.etag as string;
  assert.equal(current.description, 'changed elsewhere');
  const ok = await changes([{ op: 'delete', path: `/api/v1/aliases/${alias.id}`, if_match: fresh }]);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(await count('aliases'), 0);
  const malformed = await changes([{ op: 'delete', path: '/api/v1/aliases/00000000-0000-4000-8000-000000000001', if_match: 'no quotes' }]);
  assert.equal(malformed.status, 404, 'the object is looked up before its tag');
});

test('each operation needs its own route\'s permission: a viewer is refused before anything is written', async () => {
  // An API key holding only rules:write may change rules but not aliases.
  const key = await call('POST', '/api/v1/auth/api-keys', { name: 'rules-only', permissions: ['rules:read', 'rules:write'] });
  assert.ok(key.status === 201 || key.status === 200, JSON.stringify(key.body));
  const secret = key.body.key ?? key.body.api_key ?? key.body.token;
  assert.ok(secret, JSON.stringify(key.body));
  const withKey = (operations: unknown[]) => api.t.app.inject({ method: 'POST', url: '/api/v1/changes', payload: { operations }, headers: { authorization: `ApiKey ${secret}` } });
  const refused = await withKey([
    { op: 'create', path: '/api/v1/rules', body: { action: 'pass', direction: 'in', protocol: 'tcp' } },
    { op: 'create', path: '/api/v1/aliases', body: { name: 'not-mine', alias_type: 'host', entries: ['10.0.0.1'] } },
  ]);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.match(json(refused).error, /body\.operations\.1: permission aliases:write required; nothing was changed/);
  assert.equal(await count('rules'), 0);
  const allowed = await withKey([{ op: 'create', path: '/api/v1/rules', body: { action: 'pass', direction: 'in', protocol: 'tcp' } }]);
  assert.equal(allowed.statusCode, 200, allowed.body);
  assert.equal(await count('rules'), 1);
  for (const rule of (await call('GET', '/api/v1/rules')).body) await call('DELETE', `/api/v1/rules/${rule.id}`);
});

test('malformed sets are 400s naming the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{ operations: [] }, /body\.operations must NOT have fewer than 1 items|body\.operations/],
    [{ operations: [{ op: 'create', path: '/api/v1/reload', body: {} }] }, /body\.operations\.0\.path: no create of \/api\/v1\/reload can be part of a change set/],
    [{ operations: [{ op: 'update', path: '/api/v1/rules/$nokey', body: {} }] }, /operations\.0\.path: \$nokey names no object created earlier/],
    [{ operations: [{ op: 'create', path: '/api/v1/rules', body: { action: 'pass', direction: 'in', protocol: 'tcp', schedule_id: { $ref: 'x' } } }] }, /operations\.0\.body\.schedule_id: \$ref "x" names no object/],
    [{ operations: [{ op: 'delete', path: '/api/v1/rules/00000000-0000-4000-8000-000000000001', key: 'k' }] }, /body\.operations\.0\.key: only a create names a new object/],
    [{ operations: [{ op: 'create', path: '/api/v1/rules', if_match: '"x"', body: {} }] }, /body\.operations\.0\.if_match: a create has no entity tag/],
    [{ operations: [{ op: 'update', path: '/api/v1/rules/block-logging' }] }, /body\.operations\.0\.body is required for update/],
    [{ operations: [{ op: 'move', path: '/api/v1/rules' }] }, /body\.operations\.0\.op/],
  ];
  for (const [payload, message] of cases) {
    const answer = await call('POST', '/api/v1/changes', payload);
    assert.equal(answer.status, 400, `${JSON.stringify(payload)} → ${answer.status} ${JSON.stringify(answer.body)}`);
    assert.match(answer.body.error, message);
  }
});

test('wrapped writes keep their extras in a change set: multi-WAN port forms are normalised as their POST does', async () => {
  const instances = (await call('GET', '/api/v1/multiwan/instances')).body;
  const answer = await changes([
    { op: 'create', path: '/api/v1/multiwan/gateways', key: 'wan', body: { name: 'cs-wan', instance_id: instances[0].id, interface: 'eth1', next_hop: '192.0.2.1' } },
    { op: 'create', path: '/api/v1/multiwan/policies', key: 'voip', body: { priority: 20, name: 'cs-voip', action_kind: 'set_gateway', target_id: { $ref: 'wan' }, protocol: 'udp', dst_port: '5060-5061' } },
  ]);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const policy = (await call('GET', `/api/v1/multiwan/policies/${answer.body.created.voip}`)).body;
  assert.equal(policy.dst_port, '5060:5061', 'normalised from 5060-5061 as POST /multiwan/policies does');
  assert.equal(policy.target_id, answer.body.created.wan);
  const removed = await changes([{ op: 'delete', path: `/api/v1/multiwan/policies/${answer.body.created.voip}` }]);
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  // A gateway's delete is the area's own route (not a generated one): refused in a change set, by name.
  const custom = await changes([{ op: 'delete', path: `/api/v1/multiwan/gateways/${answer.body.created.wan}` }]);
  assert.equal(custom.status, 400);
  assert.match(custom.body.error, /no delete of \/api\/v1\/multiwan\/gateways\/.* can be part of a change set/);
  assert.equal((await call('DELETE', `/api/v1/multiwan/gateways/${answer.body.created.wan}`)).status, 204);
});
