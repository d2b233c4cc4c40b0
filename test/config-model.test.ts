/**
 * Whole-configuration writes (import, restore, the commit-confirm rollback) go through the model: its
 * validators see the candidate configuration, and its change hooks fire for the kinds that changed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';
import { lifecycleAreas, newProbe, type ApplierProbe } from './helpers/config-area.js';
import { integrityOf } from '../src/areas/config/export-format.js';
import type { HubEvent } from '../src/core/event-hub.js';
import { configOf } from './helpers/areas.js';

interface ExportedObject {
  kind: string;
  id: string;
  position: number;
  data: Record<string, unknown>;
}

/** An export with objects added, its checksum made anew (as a careful hand edit would). */
function withObjects(exported: Record<string, unknown>, added: Omit<ExportedObject, 'position'>[]): Record<string, unknown> {
  const { integrity: _integrity, ...body } = structuredClone(exported) as { integrity: unknown; objects: ExportedObject[] };
  body.objects.push(...added.map((object, index) => ({ ...object, position: 1000 + index })));
  return { ...body, integrity: integrityOf(body as never) };
}

let t: AreaApp;
let admin: Headers;
let probe: ApplierProbe;
before(async () => {
  probe = newProbe();
  t = await startAreaApp({ areas: lifecycleAreas(probe) });
  admin = t.headers;
});
after(() => t.close());

const ok = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, status = 200) => {
  const response = await t.app.inject({ method, url, headers: admin, ...(payload !== undefined ? { payload: payload as object } : {}) });
  assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
  return response.statusCode === 204 ? undefined : json(response);
};
const since = (count: number) => probe.changes.slice(count).map((change) => ({ kinds: [...change.kinds].sort(), cause: change.cause }));

test('a write fires the hooks of its kind with the object written; import and restore fire them for the kinds that changed', async () => {
  let seen = probe.changes.length;
  const group = await ok('POST', '/api/v1/test/groups', { name: 'servers' }, 201);
  assert.deepEqual(since(seen), [{ kinds: ['test_group'], cause: 'write' }]);
  assert.equal(probe.changes.at(-1)!.objects[0].after!.id, group.id);
  await ok('POST', '/api/v1/test/hosts', { name: 'alpha', group: 'servers' }, 201);
  const exported = await ok('GET', '/api/v1/config/export');
  const applied = await t.app.context.apply.applyAll('admin', 'with alpha');

  await ok('POST', '/api/v1/test/hosts', { name: 'beta' }, 201);
  seen = probe.changes.length;
  await ok('POST', '/api/v1/config/import', exported);
  assert.deepEqual(since(seen), [{ kinds: ['test_host'], cause: 'replace' }], 'the groups did not change: their hooks stay quiet');
  assert.deepEqual(probe.changes.at(-1)!.objects, [], 'after a replace a hook reads the store');

  await ok('POST', '/api/v1/test/hosts', { name: 'gamma' }, 201);
  seen = probe.changes.length;
  await ok('POST', '/api/v1/config/restore', { version: applied.version!.version });
  assert.deepEqual(since(seen), [{ kinds: ['test_host'], cause: 'replace' }]);
  assert.deepEqual(t.app.context.store.list('test_host').map((o) => o.data.name), ['alpha']);
});

test('the commit-confirm rollback fires the hooks of what it puts back', async () => {
  await ok('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 30, apply: true });
  await ok('POST', '/api/v1/test/hosts', { name: 'risky' }, 201);
  const seen = probe.changes.length;
  t.clock.advance(31_000);
  assert.equal(await configOf(t.app).commitConfirm.expireIfDue(), true);
  assert.deepEqual(since(seen), [{ kinds: ['test_host'], cause: 'replace' }]);
  assert.ok(!t.app.context.store.list('test_host').some((o) => o.data.name === 'risky'));
});

test('a restore is held to the validators, as an import is: a version they refuse today is a 400 that writes nothing', async () => {
  const { store } = t.app.context;
  // a second group under a name already taken, written behind the model's back and saved as a version
  const clone = store.insert('test_group', { name: 'servers' });
  const version = await ok('POST', '/api/v1/config/save', { comment: 'holds a duplicate group' });
  store.remove('test_group', clone.id);
  const before = store.snapshot();
  const response = await t.app.inject({ method: 'POST', url: '/api/v1/config/restore', headers: admin, payload: { version: version.version } });
  assert.equal(response.statusCode, 400, response.body);
  assert.match(json(response).error, /restore refused: version \d+ has 1 problem\(s\): test_group [0-9a-f-]+: name "servers" is also used by/);
  assert.deepEqual(store.snapshot(), before);
});

test('names a person reads are unique regardless of case', async () => {
  await ok('POST', '/api/v1/test/groups', { name: 'WebServers' }, 201);
  const clash = await t.app.inject({ method: 'POST', url: '/api/v1/test/groups', headers: admin, payload: { name: 'webservers' } });
  assert.equal(clash.statusCode, 201, 'test groups compare names exactly (declared so)');
  let area: AreaApp | undefined;
  try {
    area = await startAreaApp();
    const first = await area.request('POST', '/api/v1/aliases', { name: 'WebServers', alias_type: 'host', entries: ['10.0.0.1'] });
    assert.equal(first.statusCode, 201, first.body);
    const second = await area.request('POST', '/api/v1/aliases', { name: 'webservers', alias_type: 'host', entries: ['10.0.0.2'] });
    assert.equal(second.statusCode, 409);
    assert.match(json(second).error, /alias with name "webservers" already exists/);
  } finally {
    await area?.close();
  }
});

test('with the real areas: an import that changes DNS host overrides fires the DNS pending hook; one that changes none does not', async () => {
  const app = await startAreaApp();
  const flags: HubEvent[] = [];
  app.app.context.events.on('pending.flag', (event) => flags.push(event));
  try {
    const request = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const response = await app.request(method, url, payload);
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
      return json(response);
    };
    const exported = await request('GET', '/api/v1/config/export');
    await request('POST', '/api/v1/config/import', exported);
    assert.deepEqual(flags.filter((e) => e.payload.pending === true), [], 'nothing of the resolver changed');

    const host = { kind: 'dns_host', id: randomUUID(), data: { hostname: 'nas', domain: 'home.lan', record_type: 'A', value: '192.168.1.10', enabled: true } };
    await request('POST', '/api/v1/config/import', withObjects(exported, [host]));
    assert.ok(flags.some((e) => e.payload.name === 'dns' && e.payload.pending === true), 'the hook marked the resolver pending');
    assert.deepEqual((await request('GET', '/api/v1/dns/resolver/hosts')).map((h: { hostname: string }) => h.hostname), ['nas']);
    assert.equal((await request('GET', '/api/v1/pending')).dns, false, 'then the import applied it (a resolver that is off has nothing pending)');

    const marked = flags.length;
    const imports = (await request('GET', '/api/v1/config/history')).filter((v: { source: string }) => v.source === 'import');
    const withoutHost = imports.at(-1); // the history is newest first: the first import, before the override
    await request('POST', '/api/v1/config/restore', { version: withoutHost.version });
    assert.ok(flags.slice(marked).some((e) => e.payload.pending === true), 'a restore that drops the override fires it too');
  } finally {
    await app.close();
  }
});

test('with the real areas: an imported object a validator refuses refuses the import, judged against the imported data', async () => {
  const app = await startAreaApp();
  try {
    const subnet = json(await app.request('POST', '/api/v1/dhcp/v4/subnets', { network: '192.168.50.0/24', pool_start: '192.168.50.100', pool_end: '192.168.50.199', gateway: '192.168.50.1' }));
    const exported = json(await app.request('GET', '/api/v1/config/export'));
    const reservation = (ip: string) => ({ kind: 'dhcp_reservation', id: randomUUID(), data: { subnet_id: subnet.id, mac_address: '02:00:00:00:00:01', ip_address: ip } });
    // Neither reservation exists here: only a validator that reads the imported configuration sees the clash.
    const before = app.app.context.store.snapshot();
    const response = await app.request('POST', '/api/v1/config/import', withObjects(exported, [reservation('192.168.50.10'), reservation('192.168.50.11')]));
    assert.equal(response.statusCode, 400, response.body);
    assert.match(json(response).error, /import refused: 2 problem\(s\): dhcp_reservation [0-9a-f-]+: a reservation for 02:00:00:00:00:01 already exists in that subnet/);
    assert.deepEqual(app.app.context.store.snapshot(), before, 'nothing was written');
  } finally {
    await app.close();
  }
});
