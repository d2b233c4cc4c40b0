import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { LightMyRequestResponse } from 'fastify';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import type { Headers } from './helpers/auth.js';
import { forbidOutsideNetwork, type NetworkGuard } from './helpers/no-network.js';
import type { OpenApiDocument } from './helpers/openapi-driver.js';
import { conditionalTwinsOf } from '../src/http/conditional-twins.js';
import { createAuthArea } from '../src/areas/auth/routes.js';
import type { Area } from '../src/areas/area.js';
import type { AppContext } from '../src/context.js';
import type { RouteSpec } from '../src/http/route.js';

/**
 * Hand-written writes of a path whose GET answers an ETag (e.g. PUT /dns, PUT /config/retention, PUT and DELETE
 * /vpn/wg/{id}) honour If-Match / If-None-Match against that GET's tag: 412 and nothing changed when stale, the
 * write when it holds, and the new tag after a PUT.
 */

type Method = 'GET' | 'PUT' | 'DELETE' | 'POST';

let t: AreaApp;
let admin: Headers;
let network: NetworkGuard;
let document: OpenApiDocument;
/** Concrete URLs for the parametrised paths of the writes under test. */
const urls = new Map<string, string>();

const call = (method: Method, url: string, options: { payload?: unknown; headers?: Headers } = {}) =>
  t.app.inject({ method, url, headers: { ...admin, ...options.headers }, ...(options.payload !== undefined ? { payload: options.payload as object } : {}) });
const created = async (url: string, payload: unknown) => {
  const response = await call('POST', url, { payload });
  assert.equal(response.statusCode, 201, `POST ${url}: ${response.body}`);
  return json(response);
};
const read = async (url: string) => {
  const response = await call('GET', url);
  assert.equal(response.statusCode, 200, `GET ${url}: ${response.body}`);
  return { body: json(response), tag: tagOf(response) };
};
const tagOf = (response: LightMyRequestResponse) => {
  const tag = response.headers.etag;
  assert.match(String(tag), /^"[A-Za-z0-9_-]{22}"$/, `a strong entity tag (${response.statusCode} ${response.body.slice(0, 120)})`);
  return tag as string;
};
const assertError = (response: LightMyRequestResponse, status: number, message: RegExp) => {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.deepEqual(Object.keys(body), ['error']);
  assert.match(body.error, message);
};

before(async () => {
  network = forbidOutsideNetwork();
  t = await startAreaApp();
  admin = t.headers;
  document = json(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));

  // One object per parametrised path; a tunnel with a peer cannot be deleted, so the peer has its own tunnel.
  const tunnel = await created('/api/v1/vpn/wg', { name: 'twin', listen_port: 51950, address: '10.77.0.1/24' });
  const peerTunnel = await created('/api/v1/vpn/wg', { name: 'twin-peers', listen_port: 51951, address: '10.78.0.1/24' });
  const peer = await created(`/api/v1/vpn/wg/${peerTunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true, name: 'twin-phone' });
  const sa = await created('/api/v1/vpn/ipsec', { name: 'twin-sa', local_addr: '198.51.100.1', remote_addr: '203.0.113.0/24', protocol: 'esp', mode: 'tunnel' });
  const instance = await created('/api/v1/multiwan/instances', { name: 'twin-isp', fib_number: 7 });
  const gateway = await created('/api/v1/multiwan/gateways', { name: 'twin-gw', instance_id: instance.id, interface: 'eth1', next_hop: '192.0.2.1' });
  const group = await created('/api/v1/multiwan/groups', { name: 'twin-group', policy: 'Weighted', sticky: '5tuple' });
  const provider = await created('/api/v1/acme/dns-providers', { name: 'twin-cf', kind: 'cloudflare', zone: 'example.org', api_token: 'cf-secret-token' });
  const cert = await created('/api/v1/acme/certs', { common_name: 'twin.example.org', dns_provider_id: provider.id });
  urls.set('/api/v1/vpn/wg/{id}', `/api/v1/vpn/wg/${tunnel.id}`);
  urls.set('/api/v1/vpn/wg/{tid}/peers/{pid}', `/api/v1/vpn/wg/${peerTunnel.id}/peers/${peer.id}`);
  urls.set('/api/v1/vpn/ipsec/{id}', `/api/v1/vpn/ipsec/${sa.id}`);
  urls.set('/api/v1/multiwan/gateways/{id}', `/api/v1/multiwan/gateways/${gateway.id}`);
  urls.set('/api/v1/multiwan/groups/{id}', `/api/v1/multiwan/groups/${group.id}`);
  urls.set('/api/v1/acme/certs/{id}', `/api/v1/acme/certs/${cert.id}`);
  urls.set('/api/v1/settings/{section}', '/api/v1/settings/twin_section');
  urls.set('/api/v1/plugins/{name}/config', '/api/v1/plugins/custom-logger/config');
  urls.set('/api/v1/interfaces/{name}/role', '/api/v1/interfaces/eth0/role');
  // The instance is deleted only after its gateway: DELETE walks after every PUT, gateways before instances.
  urls.set('/api/v1/multiwan/instances/{id}', `/api/v1/multiwan/instances/${instance.id}`);
});
after(async () => {
  await t.close();
  network.restore();
});

/** The hand-written writes whose path has a tagged GET, PUTs first, then DELETEs (an instance after its gateway). */
function twinWrites(): RouteSpec[] {
  const order = (route: RouteSpec) => (route.method === 'DELETE' ? 1 : 0) + (route.path.includes('/instances/') ? 1 : 0);
  return [...conditionalTwinsOf(t.app.areas.flatMap((area) => area.routes)).keys()].sort((a, b) => order(a) - order(b));
}

/** Bodies the walk cannot take from the GET answer (it shows a field in another shape than the PUT takes it). */
const BODIES: Record<string, unknown> = {
  '/api/v1/dns': { servers: ['192.0.2.53'] },
  '/api/v1/interfaces/{name}/role': { role: 'lan' },
  '/api/v1/vpn/wg/{tid}/peers/{pid}': { name: 'twin-phone' },
};

/** A body the PUT accepts: the GET answer with only the fields the PUT's schema documents. */
function bodyFor(route: RouteSpec, got: unknown): unknown {
  if (route.method === 'DELETE') return undefined;
  if (route.path in BODIES) return BODIES[route.path];
  const schema = document.paths[route.path].put.requestBody?.content['application/json']?.schema as { properties?: Record<string, unknown> } | undefined;
  if (!schema?.properties) return got;
  return Object.fromEntries(Object.entries(got as Record<string, unknown>).filter(([field]) => field in schema.properties!));
}

test('OpenAPI documents If-Match and 412 on every PUT and DELETE of a path whose GET answers 304', () => {
  const missing: string[] = [];
  let writes = 0;
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!operations.get?.responses['304']) continue;
    for (const method of ['put', 'delete', 'patch']) {
      const operation = operations[method];
      if (!operation) continue;
      writes++;
      const ifMatch = operation.parameters?.some((p) => p.in === 'header' && p.name === 'if-match');
      if (!operation.responses['412'] || !ifMatch) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(missing, []);
  assert.ok(writes > 40, `found ${writes} writes of tagged paths`);
  const hand = twinWrites().map((route) => `${route.method} ${route.path}`);
  for (const example of ['PUT /api/v1/dns', 'PUT /api/v1/system/general', 'PUT /api/v1/config/retention', 'DELETE /api/v1/vpn/wg/{id}', 'PUT /api/v1/vpn/wg/{tid}/peers/{pid}', 'PUT /api/v1/interfaces/{name}/role']) {
    assert.ok(hand.includes(example), `${example} is a conditional twin write`);
  }
  assert.equal(hand.length, 28, hand.join('\n'));
});

test('every write of a tagged path: a stale If-Match is 412 and changes nothing; the current tag succeeds and a PUT answers the new tag', async () => {
  const failures: string[] = [];
  for (const route of twinWrites()) {
    const name = `${route.method} ${route.path}`;
    const url = urls.get(route.path) ?? route.path;
    const before = await read(url);
    const payload = bodyFor(route, before.body);

    const stale = await call(route.method as Method, url, { payload, headers: { 'if-match': '"x"' } });
    if (stale.statusCode !== 412) failures.push(`${name}: stale If-Match answered ${stale.statusCode} ${stale.body.slice(0, 160)}`);
    else if (stale.headers.etag !== undefined && stale.headers.etag !== before.tag) failures.push(`${name}: the 412 names ${String(stale.headers.etag)}, not the current tag`);
    const unchanged = await read(url);
    if (unchanged.tag !== before.tag) failures.push(`${name}: the refused write changed the tag`);
    assert.deepEqual(unchanged.body, before.body, `${name}: the refused write changed nothing`);

    const matching = await call(route.method as Method, url, { payload, headers: { 'if-match': before.tag } });
    if (route.method === 'DELETE') {
      if (matching.statusCode !== 204) failures.push(`${name}: matching If-Match answered ${matching.statusCode} ${matching.body.slice(0, 160)}`);
      else if ((await call('GET', url)).statusCode !== 404) failures.push(`${name}: still there after the delete`);
      continue;
    }
    if (matching.statusCode !== 200) {
      failures.push(`${name}: matching If-Match answered ${matching.statusCode} ${matching.body.slice(0, 160)}`);
      continue;
    }
    const now = await read(url);
    if (matching.headers.etag !== now.tag) failures.push(`${name}: answered ETag ${String(matching.headers.etag)}, a GET then ${now.tag}`);
  }
  assert.deepEqual(failures, []);
});

test('PUT /dns: strong comparison, lists, * and If-None-Match; without the headers nothing changed from before', async () => {
  const url = '/api/v1/dns';
  const first = await call('PUT', url, { payload: { servers: ['192.0.2.1'] } });
  assert.equal(first.statusCode, 200, first.body);
  assert.match(json(first).message, /^DNS configuration updated: rendered into .*simulated platform/, 'the body is what it was (on simulated, saying where the file went)');
  const tag = tagOf(first);
  assert.equal((await read(url)).tag, tag, 'an unconditional PUT answers the tag a GET then shows');

  assertError(await call('PUT', url, { payload: { servers: ['192.0.2.2'] }, headers: { 'if-match': `W/${tag}` } }), 412, /If-Match/);
  assertError(await call('PUT', url, { payload: { servers: ['192.0.2.2'] }, headers: { 'if-none-match': '*' } }), 412, /If-None-Match/);
  assert.deepEqual((await read(url)).body.servers, ['192.0.2.1']);

  const listed = await call('PUT', url, { payload: { servers: ['192.0.2.3'] }, headers: { 'if-match': `"other", ${tag}` } });
  assert.equal(listed.statusCode, 200, listed.body);
  const lost = await call('PUT', url, { payload: { servers: ['192.0.2.4'] }, headers: { 'if-match': tag } });
  assertError(lost, 412, /If-Match/);
  assert.equal(lost.headers.etag, tagOf(listed), 'the 412 names the current tag');
  assert.equal((await call('PUT', url, { payload: { servers: ['192.0.2.5'] }, headers: { 'if-match': '*' } })).statusCode, 200);
  assert.deepEqual((await read(url)).body.servers, ['192.0.2.5']);

  // Body validation comes first; a malformed header is a 400 naming it.
  assertError(await call('PUT', url, { payload: { servers: 'nope' }, headers: { 'if-match': '"x"' } }), 400, /body\.servers/);
  assertError(await call('PUT', url, { payload: { servers: ['192.0.2.6'] }, headers: { 'if-match': 'no-quotes' } }), 400, /headers\.if-match/);
  assert.deepEqual((await read(url)).body.servers, ['192.0.2.5']);
});

test('PUT /system/general: a stale tag from before another client\'s change is refused', async () => {
  const url = '/api/v1/system/general';
  const mine = await read(url);
  const theirs = await call('PUT', url, { payload: { hostname: 'theirs' }, headers: { 'if-match': mine.tag } });
  assert.equal(theirs.statusCode, 200, theirs.body);
  assertError(await call('PUT', url, { payload: { hostname: 'mine' }, headers: { 'if-match': mine.tag } }), 412, /If-Match/);
  assert.equal((await read(url)).body.hostname, 'theirs');
  assert.equal((await read(url)).tag, tagOf(theirs));
});

test('a WireGuard peer: PUT with its tag answers the new one; the old one is then stale', async () => {
  const url = urls.get('/api/v1/vpn/wg/{tid}/peers/{pid}')!;
  const before = await read(url);
  const renamed = await call('PUT', url, { payload: { name: 'renamed-phone' }, headers: { 'if-match': before.tag } });
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.equal(json(renamed).name, 'renamed-phone');
  assert.notEqual(tagOf(renamed), before.tag);
  assert.equal((await read(url)).tag, tagOf(renamed));
  assertError(await call('PUT', url, { payload: { name: 'lost-phone' }, headers: { 'if-match': before.tag } }), 412, /If-Match/);
  assert.equal((await read(url)).body.name, 'renamed-phone');
  const missing = url.replace(/[^/]+$/, '00000000-0000-4000-8000-000000000000');
  assert.equal((await call('PUT', missing, { payload: { name: 'x' }, headers: { 'if-match': '*' } })).statusCode, 404, 'a missing object is 404, not 412');
});

test('DELETE /vpn/wg/{id}: a stale tag keeps the tunnel; the current one deletes it', async () => {
  const tunnel = await created('/api/v1/vpn/wg', { name: 'twin-delete', listen_port: 51952, address: '10.79.0.1/24' });
  const url = `/api/v1/vpn/wg/${tunnel.id}`;
  const original = await read(url);
  const changed = await call('PUT', url, { payload: { listen_port: 51953 }, headers: { 'if-match': original.tag } });
  assert.equal(changed.statusCode, 200, changed.body);
  assertError(await call('DELETE', url, { headers: { 'if-match': original.tag } }), 412, /If-Match/);
  assert.equal((await read(url)).body.listen_port, 51953, 'still there');
  assert.equal((await call('DELETE', url, { headers: { 'if-match': tagOf(changed) } })).statusCode, 204);
  assert.equal((await call('DELETE', url, { headers: { 'if-match': '*' } })).statusCode, 404);
});

test('two writers holding the same tag: exactly one wins, whether the handlers wait or not', async () => {
  // PUT /dns reads and writes synchronously; the interface role waits for the platform before both.
  const cases = [
    { url: '/api/v1/dns', bodies: [{ servers: ['192.0.2.21'] }, { servers: ['192.0.2.22'] }], field: 'servers' },
    { url: '/api/v1/interfaces/eth1/role', bodies: [{ role: 'wan' }, { role: 'dmz' }], field: 'role' },
  ];
  for (const { url, bodies, field } of cases) {
    const { tag } = await read(url);
    const answers = await Promise.all(bodies.map((payload) => call('PUT', url, { payload, headers: { 'if-match': tag } })));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.deepEqual(statuses, [200, 412], `${url}: ${answers.map((a) => a.body).join(' | ')}`);
    const winner = bodies[answers.findIndex((answer) => answer.statusCode === 200)] as Record<string, unknown>;
    assert.deepEqual((await read(url)).body[field], winner[field], `${url}: the winner's write stands`);
  }
});

test('hand-written writes without a tagged GET still refuse If-Match', async () => {
  assertError(await call('POST', '/api/v1/dns/blocklists/refresh-all', { headers: { 'if-match': '"x"' } }), 400, /headers\.if-match is not supported/);
});

// ------------------------------------------------------------------------------------------------ the mechanism

/** Where a test holds the handlers of /test/twin: before the GET answers, before and after the PUT writes. */
interface Gates {
  read?: () => Promise<void>;
  beforeWrite?: () => Promise<void>;
  afterWrite?: () => Promise<void>;
}

/** A tagged section whose GET and PUT wait where a test says, and an unrelated section to write meanwhile. */
function gatedArea(context: AppContext, gates: Gates): Area {
  const { store } = context;
  const value = () => Number(store.getSingleton('test_twin')?.value ?? 0);
  const Body = Type.Object({ value: Type.Integer() }, { additionalProperties: false });
  const View = { 200: Type.Object({ value: Type.Integer() }) };
  return {
    name: 'gated-twin',
    routes: [
      {
        method: 'GET', path: '/api/v1/test/twin', access: 'backup:read', summary: 'gated read', conditional: 'read', schema: { response: View },
        handler: async () => {
          await gates.read?.();
          return { value: value() };
        },
      },
      {
        method: 'PUT', path: '/api/v1/test/twin', access: 'backup:write', summary: 'gated write', schema: { body: Body, response: View },
        handler: async (request) => {
          await gates.beforeWrite?.();
          store.putSingleton('test_twin', { value: (request.body as { value: number }).value });
          await gates.afterWrite?.();
          return { value: value() };
        },
      },
      {
        method: 'PUT', path: '/api/v1/test/elsewhere', access: 'backup:write', summary: 'another kind', schema: { body: Body },
        handler: (request) => {
          store.putSingleton('test_elsewhere', { value: (request.body as { value: number }).value });
          return {};
        },
      },
    ],
  };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

test('the mechanism: reads that wait, writes that wait, and changes landing in between', async () => {
  const gates: Gates = {};
  const small = await startAreaApp({ areas: (context) => [createAuthArea(context), gatedArea(context, gates)] });
  try {
    const { headers } = small;
    const send = (method: Method, url: string, payload?: unknown, extra: Headers = {}) =>
      small.app.inject({ method, url, headers: { ...headers, ...extra }, ...(payload !== undefined ? { payload: payload as object } : {}) });
    const current = async () => {
      const answer = await send('GET', '/api/v1/test/twin');
      return { value: json(answer).value as number, tag: tagOf(answer) };
    };
    /** Holds the next pass through a gate until released; `waiting` resolves once a request is held there. */
    const holdNext = (gate: keyof Gates) => {
      const held = deferred();
      const release = deferred();
      gates[gate] = async () => {
        gates[gate] = undefined;
        held.resolve();
        await release.promise;
      };
      return { waiting: held.promise, release: release.resolve };
    };

    await send('PUT', '/api/v1/test/twin', { value: 1 });
    let { tag } = await current();

    // 1. Another kind changes while the tag is computed: the read is repeated, the precondition still holds.
    let hold = holdNext('read');
    let pending = send('PUT', '/api/v1/test/twin', { value: 2 }, { 'if-match': tag });
    await hold.waiting;
    assert.equal((await send('PUT', '/api/v1/test/elsewhere', { value: 9 })).statusCode, 200);
    hold.release();
    let answer = await pending;
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(json(answer).value, 2);
    assert.equal(tagOf(answer), (await current()).tag);
    ({ tag } = await current());

    // 2. The same section changes while the tag is computed: the repeated read sees it, 412, the other write stays.
    hold = holdNext('read');
    pending = send('PUT', '/api/v1/test/twin', { value: 3 }, { 'if-match': tag });
    await hold.waiting;
    assert.equal((await send('PUT', '/api/v1/test/twin', { value: 30 })).statusCode, 200);
    hold.release();
    assertError(await pending, 412, /If-Match/);
    assert.equal((await current()).value, 30);
    ({ tag } = await current());

    // 3. The handler waits between the check and its write, and another write lands there: refused at the write.
    hold = holdNext('beforeWrite');
    pending = send('PUT', '/api/v1/test/twin', { value: 4 }, { 'if-match': tag });
    await hold.waiting; // the conditional write passed its check and waits
    assert.equal((await send('PUT', '/api/v1/test/twin', { value: 40 })).statusCode, 200);
    hold.release();
    assertError(await pending, 412, /changed between the If-Match check and this write/);
    assert.equal((await current()).value, 40, 'the other write is not overwritten');

    // 4. The configuration changes on every attempt: after a few, 412 rather than a guess.
    ({ tag } = await current());
    let rounds = 0;
    const churn = async () => {
      rounds++;
      await send('PUT', '/api/v1/test/elsewhere', { value: rounds });
    };
    gates.read = churn;
    answer = await send('PUT', '/api/v1/test/twin', { value: 5 }, { 'if-match': tag });
    gates.read = undefined;
    assertError(answer, 412, /kept changing/);
    assert.equal(rounds, 3);
    assert.equal((await current()).value, 40);

    // 5. Another write lands after this one's but before it answers: no ETag rather than one of a state the
    // client has not seen (it reads again).
    hold = holdNext('afterWrite');
    pending = send('PUT', '/api/v1/test/twin', { value: 6 });
    await hold.waiting; // written, not yet answered
    assert.equal((await send('PUT', '/api/v1/test/elsewhere', { value: 99 })).statusCode, 200);
    hold.release();
    answer = await pending;
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(answer.headers.etag, undefined);
    assert.equal((await current()).value, 6);
  } finally {
    await small.close();
  }
});
