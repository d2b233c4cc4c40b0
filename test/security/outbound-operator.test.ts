/**
 * The outbound guard against operator-writable settings (issue 31, item 3): an operator (everything but
 * settings:write) cannot point the reverse proxy, a cert resolver's CA server, blocklist downloads, object
 * storage or a gateway probe at loopback, link-local (169.254.169.254) or private addresses, nor allow-list
 * them in the sections it writes; once an administrator names an address in /settings/outbound it works.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { probeGateway } from '../../src/platform/gateway-probes.js';

let t: AreaApp;
let operator: Record<string, string>;
let mirror: Server;
let mirrorPort: number;

before(async () => {
  t = await startAreaApp();
  const created = await t.request('POST', '/api/v1/auth/users', { username: 'opal', password: 'Operator-pass1', role: 'operator' });
  assert.equal(created.statusCode, 201, created.body);
  const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'opal', password: 'Operator-pass1' } });
  operator = { authorization: `Bearer ${json(login).access_token as string}` };
  mirror = createServer((_request, response) => response.end('0.0.0.0 blocked.example\n'));
  await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  mirrorPort = (mirror.address() as { port: number }).port;
});
after(async () => {
  mirror.close();
  await t.close();
});

const op = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url, headers: operator, ...(payload ? { payload } : {}) });
const adminAllows = async (addresses: string[]) => {
  const answer = await t.request('PUT', '/api/v1/settings/outbound', { allowed_addresses: addresses });
  assert.equal(answer.statusCode, 200, answer.body);
};
const refusedNaming = (answer: { statusCode: number; body: string }, field: RegExp, what: string) => {
  assert.equal(answer.statusCode, 400, `${what}: ${answer.body}`);
  assert.match(json(answer).error, field, what);
  assert.match(json(answer).error, /\/api\/v1\/settings\/outbound/, `${what}: the answer says where an administrator allows it`);
};
const service = (name: string, url: string) => ({ name, service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url }] }) });

test('the outbound allow-list is settings:write only: an operator reads it but cannot change it', async () => {
  assert.equal((await op('GET', '/api/v1/settings/outbound')).statusCode, 200);
  assert.equal((await op('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1'] })).statusCode, 403);
  const bad = await t.request('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['not-an-address'] });
  assert.equal(bad.statusCode, 400, bad.body);
});

test('reverse proxy: loopback, metadata and private upstreams, forward-auth and caServer are refused until an admin allows them', async () => {
  await adminAllows([]);
  const rp = '/api/v1/reverse-proxy';
  refusedNaming(await op('POST', `${rp}/http/services`, service('loop', 'http://127.0.0.1:2019')), /body\.config_json: servers\[0\]\.url: 127\.0\.0\.1/, 'loopback upstream');
  refusedNaming(await op('POST', `${rp}/http/services`, service('meta', 'http://169.254.169.254')), /169\.254\.169\.254/, 'metadata upstream');
  refusedNaming(await op('POST', `${rp}/http/services`, service('lan', 'http://10.0.0.5:8080')), /10\.0\.0\.5/, 'private upstream');
  refusedNaming(await op('POST', `${rp}/http/services`, service('v6', 'http://[::1]:8080')), /::1/, 'IPv6 loopback upstream');
  refusedNaming(await op('POST', `${rp}/tcp/services`, { name: 'pg', config_json: '{"servers":[{"address":"127.0.0.1:5432"}]}' }), /servers\[0\]\.address/, 'TCP upstream');
  refusedNaming(await op('POST', `${rp}/http/middlewares`, { name: 'auth', middleware_type: 'forwardAuth', config_json: '{"address":"http://127.0.0.1:9091/verify"}' }), /address: 127\.0\.0\.1/, 'forward-auth address');
  refusedNaming(await op('POST', `${rp}/cert-resolvers`, { name: 'le', config_json: '{"acme":{"email":"a@example.org","caServer":"https://169.254.169.254/directory"}}' }), /acme\.caServer/, 'cert resolver caServer');
  const lan = await op('POST', `${rp}/http/services`, service('public', 'http://203.0.113.9:8080'));
  assert.equal(lan.statusCode, 400, 'documentation ranges are special too');

  // A name that resolves to loopback passes the write, and the apply refuses it (names are resolved first).
  const named = await op('POST', `${rp}/http/services`, service('named', 'http://localhost:2019'));
  assert.equal(named.statusCode, 201, named.body);
  const apply = await op('POST', `${rp}/apply`);
  assert.equal(apply.statusCode, 409, apply.body);
  assert.match(json(apply).error, /named servers\[0\]\.url: localhost resolves to (127\.0\.0\.1|::1)/);

  // Once an administrator names them, the same writes and the apply succeed; metadata stays refused.
  await adminAllows(['127.0.0.0/8', '::1', '10.0.0.0/8']);
  for (const body of [service('loop', 'http://127.0.0.1:2019'), service('lan', 'http://10.0.0.5:8080'), service('v6', 'http://[::1]:8080')]) {
    const created = await op('POST', `${rp}/http/services`, body);
    assert.equal(created.statusCode, 201, `${body.name}: ${created.body}`);
  }
  assert.equal((await op('POST', `${rp}/apply`)).statusCode, 200);
  refusedNaming(await op('POST', `${rp}/http/services`, service('meta', 'http://169.254.169.254')), /169\.254\.169\.254/, 'metadata upstream, not allow-listed');
});

test('DNS blocklists: an operator can neither allow-list a source address nor download from loopback until an admin allows it', async () => {
  await adminAllows([]);
  assert.equal((await op('PUT', '/api/v1/dns/blocklists/schedule', { allow_http: true })).statusCode, 200);
  refusedNaming(await op('PUT', '/api/v1/dns/blocklists/schedule', { allow_private_sources: ['127.0.0.1/32'] }), /body\.allow_private_sources/, 'schedule allow-list');
  refusedNaming(await op('PUT', '/api/v1/dns/blocklists/schedule', { allow_private_sources: ['0.0.0.0/0'] }), /body\.allow_private_sources/, 'schedule allow-list of everything');
  const url = `http://127.0.0.1:${mirrorPort}/list.txt`;
  refusedNaming(await op('POST', '/api/v1/dns/blocklists', { name: 'lan-mirror', category: 'custom', url, format: 'hosts' }), /body\.url: 127\.0\.0\.1/, 'loopback source');

  await adminAllows(['127.0.0.1']);
  const created = await op('POST', '/api/v1/dns/blocklists', { name: 'lan-mirror', category: 'custom', url, format: 'hosts' });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal((await op('PUT', '/api/v1/dns/blocklists/enabled', { enabled: true })).statusCode, 200);
  const outcome = json(await op('POST', `/api/v1/dns/blocklists/${json(created).id as string}/refresh`));
  assert.equal(outcome.ok, true, outcome.error);
  // The schedule's list may repeat the administrator's entry, and nothing more.
  assert.equal((await op('PUT', '/api/v1/dns/blocklists/schedule', { allow_private_sources: ['127.0.0.1'] })).statusCode, 200);

  // Taken off the administrator's list, the download is refused although the schedule still names it.
  await adminAllows([]);
  const refused = json(await op('POST', `/api/v1/dns/blocklists/${json(created).id as string}/refresh`));
  assert.equal(refused.ok, false);
  assert.match(refused.error, /blocked address/);
});

test('object storage: an operator can neither allow-list the endpoint nor name a special one until an admin allows it', async () => {
  await adminAllows([]);
  refusedNaming(await op('PUT', '/api/v1/backup/objstore/config', { allowed_addresses: ['127.0.0.1/32'] }), /body\.allowed_addresses/, 'objstore allow-list');
  refusedNaming(await op('PUT', '/api/v1/backup/objstore/config', { endpoint: 'http://169.254.169.254' }), /body\.endpoint: 169\.254\.169\.254/, 'metadata endpoint');
  refusedNaming(await op('PUT', '/api/v1/backup/objstore/config', { endpoint: 'http://127.0.0.1:9000' }), /body\.endpoint: 127\.0\.0\.1/, 'loopback endpoint');
  await adminAllows(['127.0.0.1/32']);
  const stored = await op('PUT', '/api/v1/backup/objstore/config', { endpoint: 'http://127.0.0.1:9000', allow_http: true, allowed_addresses: ['127.0.0.1/32'] });
  assert.equal(stored.statusCode, 200, stored.body);
});

test('gateway probes: tcp, http and dns targets at special addresses are refused until an admin allows them; the next hop is the exception', async () => {
  await adminAllows([]);
  const gateway = (name: string, extra: object) => ({ name, instance_id: '61696677-0000-0000-0000-000000000000', interface: 'eth1', next_hop: '192.0.2.1', ...extra });
  refusedNaming(await op('POST', '/api/v1/multiwan/gateways', gateway('t1', { monitor_kind: 'tcp', monitor_target: '127.0.0.1', monitor_port: 22 })), /body\.monitor_target: 127\.0\.0\.1/, 'tcp probe of loopback');
  refusedNaming(await op('POST', '/api/v1/multiwan/gateways', gateway('h1', { monitor_kind: 'http', monitor_target: 'http://169.254.169.254/latest/meta-data/' })), /body\.monitor_target: 169\.254\.169\.254/, 'http probe of metadata');
  refusedNaming(await op('POST', '/api/v1/multiwan/gateways', gateway('d1', { monitor_kind: 'dns', monitor_target: '10.0.0.53' })), /body\.monitor_target: 10\.0\.0\.53/, 'dns probe of a LAN server');
  // Probing the gateway itself (its next hop, here a documentation address) needs no entry.
  assert.equal((await op('POST', '/api/v1/multiwan/gateways', gateway('own', { monitor_kind: 'tcp', monitor_port: 443 }))).statusCode, 201);
  await adminAllows(['127.0.0.1']);
  assert.equal((await op('POST', '/api/v1/multiwan/gateways', gateway('t1', { monitor_kind: 'tcp', monitor_target: '127.0.0.1', monitor_port: 22 }))).statusCode, 201);

  // When it runs: the HTTP probe no longer allow-lists its own literal target, and names are checked as resolved.
  const base = { interface: 'lo', timeout_ms: 1000, expect: null, port: mirrorPort };
  const http = await probeGateway({ ...base, kind: 'http', target: `http://127.0.0.1:${mirrorPort}/` });
  assert.deepEqual([http.success, /blocked address/.test(http.error ?? '')], [false, true], http.error ?? '');
  const tcp = await probeGateway({ ...base, kind: 'tcp', target: 'localhost' });
  assert.deepEqual([tcp.success, /blocked address/.test(tcp.error ?? '')], [false, true], tcp.error ?? '');
  const allowed = await probeGateway({ ...base, kind: 'tcp', target: '127.0.0.1', allow_list: ['127.0.0.1'] });
  assert.equal(allowed.success, true, allowed.error ?? '');
});
