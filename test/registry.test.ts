import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'typebox';
import type { Area } from '../src/areas/area.js';
import type { AppContext } from '../src/context.js';
import { collectionRoutes } from '../src/http/collection-routes.js';
import { StringEnum } from '../src/model/schema-helpers.js';
import { startTestApp, json, type TestApp } from './helpers/app.js';

/** A throwaway area exercising every feature of a declared collection. */
const widgets = (context: AppContext): Area => {
  const gadgets = context.models.collection({
    kind: 'test_gadget', noun: 'gadget', writeAccess: 'public',
    schema: Type.Object({ name: Type.String({ minLength: 1 }) }),
    unique: ['name'],
  });
  const widgetCollection = context.models.collection({
    kind: 'test_widget', noun: 'widget', writeAccess: 'public',
    schema: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 32 }),
      size: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
      color: StringEnum(['red', 'green', 'blue']),
      gadget: Type.Optional(Type.String()),
      secret: Type.Optional(Type.String({ minLength: 4 })),
    }),
    unique: ['name'],
    references: [{ field: 'gadget', kind: 'test_gadget', by: 'name' }],
    writeOnly: ['secret'],
  });
  const access = { read: 'public', write: 'public' } as const;
  return {
    name: 'widgets',
    routes: [
      ...collectionRoutes(gadgets, { path: '/api/v1/test/gadgets', access, tags: ['test'] }),
      ...collectionRoutes(widgetCollection, { path: '/api/v1/test/widgets', access, tags: ['test'] }),
    ],
  };
};

let t: TestApp;
before(async () => {
  t = await startTestApp({ areas: (context) => [widgets(context)] });
});
after(() => t.close());

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as object });

test('create answers 201 with the record, defaults filled, id a UUID, secret never returned', async () => {
  const response = await post('/api/v1/test/widgets', { name: 'w1', color: 'red', secret: 'hunter22' });
  assert.equal(response.statusCode, 201);
  const body = json(response);
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.equal(body.size, 10);
  assert.equal(body.secret, undefined);
  assert.ok(!response.body.includes('hunter22'));
  const read = await t.app.inject({ url: `/api/v1/test/widgets/${body.id}` });
  assert.equal(json(read).name, 'w1');
  assert.ok(!read.body.includes('hunter22'));
});

test('write-only secrets are sealed at rest: the plaintext is nowhere in the database file', async () => {
  await post('/api/v1/test/widgets', { name: 'sealed', color: 'blue', secret: 'plaintext-canary-123' });
  t.app.context.db.pragma('wal_checkpoint(TRUNCATE)');
  const file = readFileSync(join(t.dataDir, 'bulwark.db'));
  assert.equal(file.includes(Buffer.from('plaintext-canary-123')), false);
  const stored = t.app.context.store.list('test_widget').find((o) => o.data.name === 'sealed')!;
  assert.equal(t.app.context.models.get('test_widget').secret(stored, 'secret'), 'plaintext-canary-123');
});

test('validation failures are 400 and name the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{ color: 'red' }, /body\.name is required/],
    [{ name: 'x', color: 'purple' }, /body\.color must be one of: red, green, blue/],
    [{ name: 'x', color: 'red', size: '5' }, /body\.size must be integer/],
    [{ name: 'x', color: 'red', size: 500 }, /body\.size must be <= 100/],
    [{ name: 'x', color: 'red', extra: 1 }, /body\.extra is not a known field/],
    [{ name: 'x', color: 'red', gadget: 'nope' }, /body\.gadget: test_gadget "nope" does not exist/],
  ];
  for (const [payload, message] of cases) {
    const response = await post('/api/v1/test/widgets', payload);
    assert.equal(response.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(Object.keys(json(response)), ['error']);
    assert.match(json(response).error, message);
  }
});

test('update keeps fields not sent, re-validates, and keeps the sealed secret', async () => {
  const created = json(await post('/api/v1/test/widgets', { name: 'upd', color: 'red', secret: 'keepme' }));
  const updated = await t.app.inject({ method: 'PUT', url: `/api/v1/test/widgets/${created.id}`, payload: { size: 42 } });
  assert.equal(updated.statusCode, 200);
  assert.equal(json(updated).color, 'red');
  assert.equal(json(updated).size, 42);
  const stored = t.app.context.store.get('test_widget', created.id)!;
  assert.equal(t.app.context.models.get('test_widget').secret(stored, 'secret'), 'keepme');
  const bad = await t.app.inject({ method: 'PUT', url: `/api/v1/test/widgets/${created.id}`, payload: { size: 0 } });
  assert.equal(bad.statusCode, 400);
  assert.match(json(bad).error, /body\.size/);
  // a client may echo the record it read back
  const echoed = await t.app.inject({ method: 'PUT', url: `/api/v1/test/widgets/${created.id}`, payload: json(updated) });
  assert.equal(echoed.statusCode, 200);
});

test('unknown ids are 404, malformed ids 400', async () => {
  const missing = '00000000-0000-4000-8000-000000000000';
  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    const response = await t.app.inject({ method, url: `/api/v1/test/widgets/${missing}`, payload: method === 'PUT' ? {} : undefined });
    assert.equal(response.statusCode, 404, method);
    assert.match(json(response).error, /not found/);
  }
  assert.equal((await t.app.inject({ url: '/api/v1/test/widgets/not-a-uuid' })).statusCode, 400);
});

test('duplicate unique field is 409; deleting a referenced object is 409; ids never shift after a delete', async () => {
  assert.equal((await post('/api/v1/test/widgets', { name: 'dup', color: 'red' })).statusCode, 201);
  const duplicate = await post('/api/v1/test/widgets', { name: 'dup', color: 'green' });
  assert.equal(duplicate.statusCode, 409);
  assert.match(json(duplicate).error, /name "dup" already exists/);

  const gadget = json(await post('/api/v1/test/gadgets', { name: 'g1' }));
  const user = json(await post('/api/v1/test/widgets', { name: 'uses-g1', color: 'red', gadget: 'g1' }));
  const refused = await t.app.inject({ method: 'DELETE', url: `/api/v1/test/gadgets/${gadget.id}` });
  assert.equal(refused.statusCode, 409);
  assert.match(json(refused).error, /in use by widget/);

  const before = json(await t.app.inject({ url: '/api/v1/test/widgets' })).map((w: { id: string }) => w.id);
  assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/test/widgets/${user.id}` })).statusCode, 204);
  assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/test/gadgets/${gadget.id}` })).statusCode, 204);
  const afterIds = json(await t.app.inject({ url: '/api/v1/test/widgets' })).map((w: { id: string }) => w.id);
  assert.deepEqual(afterIds, before.filter((id: string) => id !== user.id));
});

test('lists are bare arrays with X-Total-Count, paging, sorting and field filters', async () => {
  for (let i = 0; i < 12; i++) await post('/api/v1/test/widgets', { name: `page-${String(i).padStart(2, '0')}`, color: i % 2 ? 'green' : 'blue', size: 50 + i });
  const page = await t.app.inject({ url: '/api/v1/test/widgets?color=green&limit=3&offset=1&sort=-size' });
  assert.equal(page.statusCode, 200);
  const items = json(page);
  assert.ok(Array.isArray(items));
  assert.equal(page.headers['x-total-count'], '6');
  assert.deepEqual(items.map((w: { size: number }) => w.size), [59, 57, 55]);
  assert.equal((await t.app.inject({ url: '/api/v1/test/widgets?limit=0' })).statusCode, 400);
  assert.equal((await t.app.inject({ url: '/api/v1/test/widgets?limit=10001' })).statusCode, 400);
  const badFilter = await t.app.inject({ url: '/api/v1/test/widgets?secret=x' });
  assert.equal(badFilter.statusCode, 400);
  assert.match(json(badFilter).error, /secret is not a filterable field/);
});

test('fifty concurrent creates all persist; none is lost', async () => {
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) => post('/api/v1/test/widgets', { name: `concurrent-${i}`, color: 'red' })),
  );
  assert.ok(responses.every((r) => r.statusCode === 201));
  const rows = t.app.context.db.prepare("SELECT count(*) AS n FROM config_objects WHERE kind = 'test_widget' AND json_extract(data, '$.name') LIKE 'concurrent-%'").get() as { n: number };
  assert.equal(rows.n, 50);
  const listed = await t.app.inject({ url: '/api/v1/test/widgets?limit=10000' });
  assert.equal(json(listed).filter((w: { name: string }) => w.name.startsWith('concurrent-')).length, 50);
});

test('the configuration survives a restart of the app on the same data directory', async () => {
  const created = json(await post('/api/v1/test/widgets', { name: 'persist', color: 'red' }));
  const second = await startTestApp({ areas: (context) => [widgets(context)], dataDir: t.dataDir });
  try {
    const read = await second.app.inject({ url: `/api/v1/test/widgets/${created.id}` });
    assert.equal(read.statusCode, 200);
    assert.equal(json(read).name, 'persist');
  } finally {
    await second.close();
  }
});
