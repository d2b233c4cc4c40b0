import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Type } from 'typebox';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import { headersWithPermissions, type Headers } from './helpers/auth.js';
import { lifecycleAreas, newProbe } from './helpers/config-area.js';
import type { Area } from '../src/areas/area.js';
import type { AppContext } from '../src/context.js';
import { collectionRoutes } from '../src/http/collection-routes.js';
import { configOf } from './helpers/areas.js';

/** A collection whose records carry a field computed from outside the store (as gateway health is). */
let outsideState = 'up';
function computedArea(context: AppContext): Area {
  const probes = context.models.collection({
    kind: 'test_probe', noun: 'probe', writeAccess: 'backup:write',
    schema: Type.Object({ name: Type.String() }),
    computed: { schema: { state: Type.String() }, add: () => ({ state: outsideState }) },
  });
  return { name: 'computed-test', routes: collectionRoutes(probes, { path: '/api/v1/test/probes', access: { read: 'backup:read', write: 'backup:write' }, tags: ['test'] }) };
}

const api = adminApi({ areas: (context) => [...lifecycleAreas(newProbe())(context), computedArea(context)] });

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const call = (method: Method, url: string, options: { payload?: unknown; headers?: Headers } = {}) =>
  api.t.app.inject({ method, url, headers: { ...api.headers, ...options.headers }, ...(options.payload !== undefined ? { payload: options.payload as object } : {}) });
const ok = async (method: Method, url: string, payload?: unknown, status = method === 'POST' ? 201 : 200) => {
  const response = await call(method, url, { payload });
  assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
  return response;
};
const tagOf = (response: { headers: Record<string, unknown> }) => {
  const tag = response.headers.etag;
  assert.equal(typeof tag, 'string', 'the answer carries an ETag');
  assert.match(tag as string, /^"[A-Za-z0-9_-]{22}"$/, 'a strong entity tag');
  return tag as string;
};
const assertError = (response: { statusCode: number; body: string }, status: number, message: RegExp) => {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.match(body.error, message);
};

test('lists, objects and settings sections answer an ETag; If-None-Match with it answers 304 without a body', async () => {
  const host = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-a', port: 2201 }));
  for (const url of ['/api/v1/test/hosts', `/api/v1/test/hosts/${host.id}`, '/api/v1/test/settings']) {
    const first = await ok('GET', url);
    const tag = tagOf(first);
    const again = await ok('GET', url);
    assert.equal(tagOf(again), tag, `${url}: an unchanged resource keeps its tag`);

    const notModified = await call('GET', url, { headers: { 'if-none-match': tag } });
    assert.equal(notModified.statusCode, 304, url);
    assert.equal(notModified.body, '', 'no body');
    assert.equal(notModified.headers.etag, tag, 'the 304 names the current tag');
    assert.equal(notModified.headers['content-type'], undefined);

    // RFC 9110: If-None-Match uses the weak comparison, accepts a list, and * matches any current representation.
    for (const header of [`W/${tag}`, `"other", ${tag}`, '*']) {
      assert.equal((await call('GET', url, { headers: { 'if-none-match': header } })).statusCode, 304, `${url} If-None-Match: ${header}`);
    }
    const stale = await call('GET', url, { headers: { 'if-none-match': '"not-the-tag"' } });
    assert.equal(stale.statusCode, 200);
    assert.deepEqual(json(stale), json(first));
  }
});

test('the list tag follows the query and every change; the answer is never stale', async () => {
  await ok('POST', '/api/v1/test/hosts', { name: 'etag-a2', port: 2200 });
  const everything = await ok('GET', '/api/v1/test/hosts?limit=1000');
  const firstOnly = await ok('GET', '/api/v1/test/hosts?limit=1');
  assert.notEqual(tagOf(firstOnly), tagOf(everything), 'a different query is a different representation');
  assert.equal(json(firstOnly).length, 1);

  const created = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-b', port: 2202 }));
  const afterCreate = await ok('GET', '/api/v1/test/hosts?limit=1000');
  assert.notEqual(tagOf(afterCreate), tagOf(everything));
  assert.ok(json(afterCreate).some((h: { id: string }) => h.id === created.id), 'the new object is listed at once');
  assert.equal(afterCreate.headers['x-total-count'], String(json(afterCreate).length));
  assert.equal((await call('GET', '/api/v1/test/hosts?limit=1000', { headers: { 'if-none-match': tagOf(everything) } })).statusCode, 200);

  await ok('PUT', `/api/v1/test/hosts/${created.id}`, { port: 2203 });
  const afterUpdate = json(await ok('GET', '/api/v1/test/hosts?limit=1000'));
  assert.equal(afterUpdate.find((h: { id: string }) => h.id === created.id).port, 2203);
  const filtered = json(await ok('GET', '/api/v1/test/hosts?port=2203'));
  assert.deepEqual(filtered.map((h: { id: string }) => h.id), [created.id]);

  await ok('DELETE', `/api/v1/test/hosts/${created.id}`, undefined, 204);
  assert.ok(!json(await ok('GET', '/api/v1/test/hosts?limit=1000')).some((h: { id: string }) => h.id === created.id));
  assert.deepEqual(json(await ok('GET', '/api/v1/test/hosts?port=2203')), []);
});

test('a stale If-Match on PUT or DELETE answers 412 and changes nothing; the current tag succeeds', async () => {
  const host = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-c', port: 2210 }));
  const url = `/api/v1/test/hosts/${host.id}`;
  const original = tagOf(await ok('GET', url));
  const changed = await call('PUT', url, { payload: { port: 2211 }, headers: { 'if-match': original } });
  assert.equal(changed.statusCode, 200, changed.body);
  const current = tagOf(changed);
  assert.notEqual(current, original);
  assert.equal(tagOf(await ok('GET', url)), current, 'PUT answers the tag a GET then shows');

  const lost = await call('PUT', url, { payload: { port: 2299 }, headers: { 'if-match': original } });
  assertError(lost, 412, /If-Match/);
  const removed = await call('DELETE', url, { headers: { 'if-match': original } });
  assertError(removed, 412, /If-Match/);
  const readBack = json(await ok('GET', url));
  assert.equal(readBack.port, 2211, 'the stale writes changed nothing');
  assert.equal(readBack.updated_at, json(changed).updated_at);

  // If-Match uses the strong comparison: a weak tag never matches; a list matches when any member does.
  assertError(await call('PUT', url, { payload: { port: 2298 }, headers: { 'if-match': `W/${current}` } }), 412, /If-Match/);
  assert.equal((await call('PUT', url, { payload: { port: 2212 }, headers: { 'if-match': `"other", ${current}` } })).statusCode, 200);
  assert.equal((await call('PUT', url, { payload: { port: 2213 }, headers: { 'if-match': '*' } })).statusCode, 200, '* matches an existing object');
  // If-None-Match: * on a write means "only if it does not exist yet": it exists.
  assertError(await call('PUT', url, { payload: { port: 2297 }, headers: { 'if-none-match': '*' } }), 412, /If-None-Match/);
  assert.equal(json(await ok('GET', url)).port, 2213);

  const deleted = await call('DELETE', url, { headers: { 'if-match': tagOf(await ok('GET', url)) } });
  assert.equal(deleted.statusCode, 204);
  assert.equal((await call('GET', url)).statusCode, 404);
  assert.equal((await call('DELETE', url, { headers: { 'if-match': '*' } })).statusCode, 404, 'a missing object is 404, not 412');
});

test('without the headers writes behave as before; a malformed header is a 400 naming it', async () => {
  const host = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-d', port: 2220 }));
  const url = `/api/v1/test/hosts/${host.id}`;
  assert.equal(json(await ok('PUT', url, { port: 2221 })).port, 2221);
  for (const header of ['no-quotes', '"a" "b"', 'W/ "a"', '*, "a"', '']) {
    assertError(await call('PUT', url, { payload: { port: 2222 }, headers: { 'if-match': header } }), 400, /headers\.if-match/);
    assertError(await call('GET', url, { headers: { 'if-none-match': header } }), 400, /headers\.if-none-match/);
  }
  assert.equal(json(await ok('GET', url)).port, 2221);
  // An operation that keeps no entity tag cannot honour If-Match: it refuses rather than ignore it.
  const unsupported = await call('POST', '/api/v1/test/hosts', { payload: { name: 'etag-e' }, headers: { 'if-match': '"x"' } });
  assertError(unsupported, 400, /headers\.if-match is not supported/);
  assert.ok(!json(await ok('GET', '/api/v1/test/hosts')).some((h: { name: string }) => h.name === 'etag-e'));
});

test('a change to one object never makes another object\'s tag stale', async () => {
  const a = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-f', port: 2230 }));
  const b = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-g', port: 2231 }));
  const tagB = tagOf(await ok('GET', `/api/v1/test/hosts/${b.id}`));
  await ok('PUT', `/api/v1/test/hosts/${a.id}`, { port: 2232 });
  await ok('DELETE', `/api/v1/test/hosts/${a.id}`, undefined, 204);
  await ok('PUT', '/api/v1/test/settings', { mode: 'strict' });
  const changed = await call('PUT', `/api/v1/test/hosts/${b.id}`, { payload: { port: 2233 }, headers: { 'if-match': tagB } });
  assert.equal(changed.statusCode, 200, changed.body);
});

test('settings sections: stale If-Match is 412 and changes nothing; a new secret alone changes the tag', async () => {
  const url = '/api/v1/test/settings';
  await ok('PUT', url, { mode: 'normal', token: 'first-token' });
  const before = await ok('GET', url);
  const tag = tagOf(before);
  assert.equal(json(before).token, undefined, 'the write-only field is never served');
  const changed = await call('PUT', url, { payload: { mode: 'strict' }, headers: { 'if-match': tag } });
  assert.equal(changed.statusCode, 200, changed.body);
  const current = tagOf(changed);
  assertError(await call('PUT', url, { payload: { mode: 'normal' }, headers: { 'if-match': tag } }), 412, /If-Match/);
  assert.equal(json(await ok('GET', url)).mode, 'strict');
  assert.equal(tagOf(await ok('GET', url)), current);

  const rotated = await ok('PUT', url, { token: 'second-token' });
  assert.deepEqual(json(rotated), json(changed), 'the served values are the same');
  assert.notEqual(tagOf(rotated), current, 'but the section changed, so a writer holding the old tag is stopped');
  assertError(await call('PUT', url, { payload: { mode: 'normal' }, headers: { 'if-match': current } }), 412, /If-Match/);
});

test('cached reads see restore, import, and writes that were rolled back', async () => {
  const host = json(await ok('POST', '/api/v1/test/hosts', { name: 'etag-h', port: 2240 }));
  const saved = json(await ok('POST', '/api/v1/config/save', { comment: 'before etag-i' }, 200));
  const savedTag = tagOf(await ok('GET', '/api/v1/test/hosts'));
  const exported = json(await ok('GET', '/api/v1/config/export'));

  await ok('POST', '/api/v1/test/hosts', { name: 'etag-i', port: 2241 });
  await ok('PUT', `/api/v1/test/hosts/${host.id}`, { port: 2242 });
  const names = async () => json(await ok('GET', '/api/v1/test/hosts')).map((h: { name: string }) => h.name);
  assert.ok((await names()).includes('etag-i'));

  await ok('POST', '/api/v1/config/restore', { version: saved.version }, 200);
  assert.ok(!(await names()).includes('etag-i'), 'the restored configuration is served at once');
  assert.equal(json(await ok('GET', `/api/v1/test/hosts/${host.id}`)).port, 2240);
  assert.equal(tagOf(await ok('GET', '/api/v1/test/hosts')), savedTag, 'the same content answers the same tag again');

  await ok('POST', '/api/v1/test/hosts', { name: 'etag-j', port: 2243 });
  assert.ok((await names()).includes('etag-j'));
  await ok('POST', '/api/v1/config/import', exported, 200);
  assert.ok(!(await names()).includes('etag-j'), 'the imported configuration is served at once');

  // A transaction that fails after writing: the store drops its copy, and no cached answer shows the write.
  const { store } = api.t.app.context;
  const listed = await names();
  assert.throws(() => store.transaction(() => {
    store.insert('test_host', { name: 'etag-rolled-back', port: 2244 });
    throw new Error('refused after the write');
  }), /refused after the write/);
  assert.deepEqual(await names(), listed);
});

test('the commit-confirm rollback is served at once', async () => {
  await api.t.app.context.apply.applyAll('admin', 'baseline');
  await ok('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60 }, 200);
  await ok('POST', '/api/v1/test/hosts', { name: 'etag-risky', port: 2250 });
  const names = async () => json(await ok('GET', '/api/v1/test/hosts')).map((h: { name: string }) => h.name);
  assert.ok((await names()).includes('etag-risky'));
  api.t.clock.advance(60_000);
  const { commitConfirm } = configOf(api.t.app);
  assert.equal(await commitConfirm.expireIfDue(), true);
  assert.ok(!(await names()).includes('etag-risky'));
});

test('a cached list is never served to a caller without the permission', async () => {
  await ok('GET', '/api/v1/test/hosts');
  const none = await headersWithPermissions(api.t.app, [], api.headers);
  const refused = await api.t.app.inject({ method: 'GET', url: '/api/v1/test/hosts', headers: none });
  assertError(refused, 403, /backup:read/);
  const anonymous = await api.t.app.inject({ method: 'GET', url: '/api/v1/test/hosts' });
  assert.equal(anonymous.statusCode, 401);
});

test('records with fields computed outside the store are built on every read, and their tag follows them', async () => {
  const probe = json(await ok('POST', '/api/v1/test/probes', { name: 'wan' }));
  outsideState = 'up';
  const list = await ok('GET', '/api/v1/test/probes');
  const item = await ok('GET', `/api/v1/test/probes/${probe.id}`);
  assert.equal(json(list)[0].state, 'up');
  outsideState = 'down';
  const listAfter = await call('GET', '/api/v1/test/probes', { headers: { 'if-none-match': tagOf(list) } });
  assert.equal(listAfter.statusCode, 200);
  assert.equal(json(listAfter)[0].state, 'down');
  const itemAfter = await call('GET', `/api/v1/test/probes/${probe.id}`, { headers: { 'if-none-match': tagOf(item) } });
  assert.equal(itemAfter.statusCode, 200);
  assert.equal(json(itemAfter).state, 'down');
  assert.equal((await call('GET', '/api/v1/test/probes', { headers: { 'if-none-match': tagOf(listAfter) } })).statusCode, 304);
});

test('OpenAPI documents ETag, If-None-Match, If-Match, 304 and 412 on the conditional operations', async () => {
  const document = json(await api.t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
  const list = document.paths['/api/v1/test/hosts'].get;
  assert.ok(list.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-none-match'));
  assert.ok(list.responses['200'].headers.ETag);
  assert.ok(list.responses['304']);
  const put = document.paths['/api/v1/test/hosts/{id}'].put;
  assert.ok(put.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-match'));
  assert.ok(put.responses['412']);
  assert.ok(document.paths['/api/v1/test/hosts/{id}'].delete.responses['412']);
  assert.ok(document.paths['/api/v1/test/settings'].put.responses['412']);
  assert.equal(document.paths['/api/v1/test/hosts'].post.responses['412'], undefined, 'create keeps no precondition');
});

test('a cached list answers exactly the records a read of each answers, never a write-only field', async () => {
  await ok('POST', '/api/v1/test/hosts', { name: 'etag-k', port: 2260, password: 'k-secret-1' });
  for (let round = 0; round < 2; round++) {
    const list = await ok('GET', '/api/v1/test/hosts?sort=-port');
    assert.ok(!list.body.includes('k-secret-1') && !list.body.includes('password'), 'no secret, sealed or not');
    const records = json(list);
    const ports = records.map((h: { port: number }) => h.port);
    assert.deepEqual(ports, [...ports].sort((a, b) => b - a), 'sorted as asked');
    for (const record of records) assert.deepEqual(json(await ok('GET', `/api/v1/test/hosts/${record.id}`)), record);
    await ok('PUT', `/api/v1/test/hosts/${records[0].id}`, { port: records[0].port + 1 });
  }
});

test('hand-written settings answer an ETag from their body and 304; their writes check If-Match against it', async () => {
  const first = await ok('GET', '/api/v1/config/retention');
  const tag = tagOf(first);
  assert.equal((await call('GET', '/api/v1/config/retention', { headers: { 'if-none-match': tag } })).statusCode, 304);
  const changed = await call('PUT', '/api/v1/config/retention', { payload: { max_versions: 50 }, headers: { 'if-match': tag } });
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(json(changed).max_versions, 50);
  const current = tagOf(changed);
  assert.notEqual(current, tag);
  // The PUT's ETag is the tag the GET answers now.
  const reread = await call('GET', '/api/v1/config/retention', { headers: { 'if-none-match': tag } });
  assert.equal(reread.statusCode, 200);
  assert.equal(tagOf(reread), current);

  assertError(await call('PUT', '/api/v1/config/retention', { payload: { max_versions: 60 }, headers: { 'if-match': tag } }), 412, /If-Match/);
  assert.equal(json(await ok('GET', '/api/v1/config/retention')).max_versions, 50, 'the stale write changed nothing');
  assert.equal((await call('GET', '/api/v1/config/retention', { headers: { 'if-none-match': current } })).statusCode, 304);
});

test('HEAD answers the ETag of the representation', async () => {
  const get = await ok('GET', '/api/v1/test/hosts');
  for (const headers of [{}, { 'if-none-match': tagOf(get) }]) {
    const head = await api.t.app.inject({ method: 'HEAD', url: '/api/v1/test/hosts', headers: { ...api.headers, ...headers } });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers.etag, tagOf(get));
  }
});

test('over a socket a 304 carries the ETag and neither a body nor a Content-Length', async () => {
  const url = await api.t.app.listen({ host: '127.0.0.1', port: 0 });
  const tag = tagOf(await ok('GET', '/api/v1/test/hosts'));
  const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    request(`${url}/api/v1/test/hosts`, { headers: { ...api.headers, 'if-none-match': tag } }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    }).on('error', reject).end();
  });
  assert.equal(answer.status, 304);
  assert.equal(answer.headers.etag, tag);
  assert.equal(answer.headers['content-length'], undefined);
  assert.equal(answer.body, '');
});
