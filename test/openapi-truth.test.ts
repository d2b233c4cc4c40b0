import { test } from 'node:test';
import { SERVED_FILE_PATHS } from '../src/http/extensions.js';
import { toSpecPath } from '../src/http/route.js';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { forbidOutsideNetwork } from './helpers/no-network.js';
import { discrepancy, OperationDriver, type OpenApiDocument } from './helpers/openapi-driver.js';

/**
 * Answers the generic drive above cannot reach, each driven on purpose below: an open event stream and a
 * WebSocket handshake need a real socket (inject waits for the end of an answer that never ends), and a
 * WireGuard peer's configuration needs a tunnel body the sampler cannot invent.
 */

/** Served files, not API operations: the document itself, Swagger UI and the web console. */
const isDocumentation = (path: string) => SERVED_FILE_PATHS.some((pattern) => pattern.test(toSpecPath(path)));

/** Driven before everything else: the CA's downloads need a CA. */
const FIRST: ReadonlySet<string> = new Set(['POST /api/v1/ca']);
/** Ends the admin's own session: driven after everything else. */
const LAST: ReadonlySet<string> = new Set(['POST /api/v1/auth/logout']);

/**
 * Creates first, then reads, then other writes and actions, deletes after all of them, so item routes meet the
 * objects the driver finds or creates.
 */
function phaseOf(method: string, path: string, paths: readonly string[]): number {
  const name = `${method} ${path}`;
  if (FIRST.has(name)) return 0;
  if (LAST.has(name)) return 5;
  if (method === 'POST' && paths.some((other) => other.startsWith(`${path}/:`))) return 1;
  return method === 'GET' ? 2 : method === 'DELETE' ? 4 : 3;
}

test('every operation answers only statuses and media types that its OpenAPI entry documents', async () => {
  const network = forbidOutsideNetwork();
  const t = await startAreaApp();
  try {
    let admin: Headers = t.headers;
    const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    const driver = new OperationDriver(t.app, document, () => admin);
    const paths = t.app.catalogue.map((route) => route.path);
    const routes = t.app.catalogue
      .filter((route) => !isDocumentation(route.path))
      .map((route, order) => ({ ...route, order }))
      .sort((a, b) => phaseOf(a.method, a.path, paths) - phaseOf(b.method, b.path, paths) || a.order - b.order);

    const failures: string[] = [];
    const answered = new Map<string, number>();
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const operation = driver.operation(route.method, route.path);
      if (!operation) {
        failures.push(`${name}: not in the document`);
        continue;
      }
      let { url, response } = await driver.drive(route.method, route.path);
      // An operation may end the admin's session (a password change, a revocation): sign in again and retry.
      if (response.statusCode === 401 && route.access !== 'public') {
        admin = await adminHeaders(t.app);
        ({ url, response } = await driver.drive(route.method, route.path));
      }
      const status = String(response.statusCode);
      answered.set(status, (answered.get(status) ?? 0) + 1);
      const wrong = discrepancy(operation, response);
      if (wrong) failures.push(`${route.method} ${url}: ${wrong} (${response.body.slice(0, 160)})`);
    }
    const successes = [...answered].filter(([status]) => /^[23]/.test(status)).reduce((n, [, count]) => n + count, 0);
    // The share of successes shows the comparison reaches the handlers, not only validation and 404s.
    console.log(`answers by status: ${JSON.stringify(Object.fromEntries(answered))}; refused network: ${network.attempts.length}`);
    assert.ok(routes.length > 400, `drove ${routes.length} operations`);
    assert.ok(successes > routes.length * 0.6, `only ${successes} of ${routes.length} operations succeeded`);
    assert.deepEqual(failures, []);
  } finally {
    await t.close();
    network.restore();
  }
});

test('the answers only a real socket or a prepared object reaches match the document too', async () => {
  const t = await startAreaApp();
  try {
    const admin = t.headers;
    const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    const responsesOf = (method: string, path: string) => document.paths[path][method].responses;
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });

    // Event streams: 200 text/event-stream while the client stays; the client leaves after the headers.
    for (const path of ['/api/v1/pending/stream', '/api/v1/dns/stream']) {
      const leave = new AbortController();
      const answer = await fetch(`${base}${path}`, { headers: { ...admin, accept: 'text/event-stream' }, signal: leave.signal });
      const media = answer.headers.get('content-type')?.split(';')[0];
      leave.abort();
      assert.equal(answer.status, 200, path);
      assert.ok(Object.keys(responsesOf('get', path)[200].content ?? {}).includes(media!), `${path} answers ${media}`);
    }

    // The dashboard WebSocket: the handshake's 101 is documented.
    const ticket = json(await t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: admin })).ticket as string;
    const handshake = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${base.replace('http', 'ws')}/api/v1/ws?ticket=${ticket}`);
      socket.once('upgrade', (response) => {
        resolve(response.statusCode ?? 0);
        socket.close();
      });
      socket.once('error', reject);
    });
    assert.ok(responsesOf('get', '/api/v1/ws')[String(handshake)], `handshake status ${handshake} is documented`);

    // A WireGuard peer's configuration as JSON, a .conf file and a QR code.
    const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: admin, payload });
    const tunnel = json(await post('/api/v1/vpn/wg', { name: 'truth', listen_port: 51820, address: '10.8.0.1/24' }));
    const peer = json(await post(`/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true, name: 'phone' }));
    const operation = document.paths['/api/v1/vpn/wg/{tid}/peers/{pid}/config'].get;
    for (const format of ['json', 'conf', 'qr']) {
      const response = await t.app.inject({ method: 'GET', url: `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config?format=${format}`, headers: admin });
      assert.equal(response.statusCode, 200, `${format}: ${response.body.slice(0, 100)}`);
      assert.equal(discrepancy(operation, response), undefined, format);
    }
  } finally {
    await t.close();
  }
});
