import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { flowKey, topFlows } from '../src/live/flow-frames.js';
import type { Flow } from '../src/platform/connections.js';
import { adminApi } from './helpers/admin-api.js';
import type { Headers } from './helpers/auth.js';
import { flow, replayPlatform, ReplayTraffic } from './helpers/traffic.js';
import { dashboardAreas, dashboardOf } from './helpers/areas.js';
import { MAX_STREAMS_PER_ACCOUNT } from '../src/live/stream-registry.js';

const area = dashboardAreas({ manualTicks: true });
const traffic = new ReplayTraffic();
const api = adminApi({ areas: area, platform: replayPlatform(traffic), listen: true });
const service = () => dashboardOf(api.t.app);
/** The WebSocket address of the app's loopback port. */
const wsBase = () => api.base.replace('http', 'ws');

async function ticket(headers: Headers = api.headers): Promise<string> {
  const response = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers });
  assert.equal(response.statusCode, 200, response.body);
  return response.json().ticket;
}

interface Client {
  ws: WebSocket;
  messages: string[];
  /** Whether each message arrived as a binary frame (a browser would get a Blob instead of a string). */
  binary: boolean[];
  frames(): any[];
  closed: Promise<void>;
}

/** Opens a socket; resolves once open, or rejects with the HTTP status of the refusal. */
function open(query: string, path = '/api/v1/ws', headers: Record<string, string> = {}): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsBase()}${path}${query}`, { headers });
    const messages: string[] = [];
    const binary: boolean[] = [];
    ws.on('message', (data, isBinary) => {
      messages.push(data.toString());
      binary.push(isBinary);
    });
    const closed = new Promise<void>((done) => ws.once('close', () => done()));
    ws.once('open', () => resolve({ ws, messages, binary, frames: () => messages.map((m) => JSON.parse(m)), closed }));
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk));
      response.on('end', () => reject(Object.assign(new Error(`refused ${response.statusCode}: ${body}`), { status: response.statusCode, body })));
    });
    ws.once('error', (error) => reject(error));
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function tick(): Promise<void> {
  api.t.clock.advance(service().broadcaster.intervalMs);
  assert.equal(await service().broadcaster.poll(), true);
}

const statusFrames = (client: Client) => client.frames().filter((f) => f.type === 'status_update');

test('history batch first, then status_update frames: full list, then deltas that rebuild the top 500; the same bytes to every socket', async () => {
  let flows: Flow[] = Array.from({ length: 700 }, (_, i) => flow(i, 100 + i));
  traffic.set(flows, 12_345 - 10_000);
  await tick(); // a tick before anyone connects: history has an entry
  const a = await open(`?ticket=${await ticket()}`);
  const b = await open(`?ticket=${await ticket()}`, '/ws');
  await until(() => a.messages.length >= 2 && b.messages.length >= 2, 'history and the latest frame');
  const [history, latest] = a.frames();
  assert.equal(history.type, 'history');
  assert.ok(Array.isArray(history.data) && history.data.length >= 1);
  assert.equal(history.data[0].type, 'status_update');
  assert.equal(latest.type, 'status_update');
  assert.equal(latest.connections.length, 500, 'the first frame of a client carries the full list, capped at 500');
  assert.equal(latest.connections_total, 2345, 'connections_total is the real table size');
  for (const field of ['status', 'system', 'traffic', 'top_talkers', 'ids_alerts', 'connection_summary', 'interfaces', 'blocked']) {
    assert.ok(field in latest, `frame has ${field}`);
  }

  const views = new Map<string, any>(latest.connections.map((e: any) => [flowKey(e), e]));
  for (let step = 1; step <= 5; step++) {
    flows = flows.filter((f) => f.id % 50 !== step).map((f) => (f.id % 20 === step ? { ...f, bytes_in: f.bytes_in + 1000 } : f));
    flows.push(flow(5000 + step, 10_000 + step));
    traffic.set(flows);
    await tick();
    await until(() => statusFrames(a).length === step + 1 && statusFrames(b).length === step + 1, `frame ${step}`);
    const frame = statusFrames(a)[step];
    assert.ok(frame.connections_delta && !frame.connections, 'later frames carry connections_delta');
    for (const key of frame.connections_delta.remove) views.delete(key);
    for (const entry of [...frame.connections_delta.add, ...frame.connections_delta.update]) views.set(flowKey(entry), entry);
    const expected = topFlows(flows, 500);
    assert.deepEqual([...views.keys()].sort(), expected.map(flowKey).sort(), `client view after step ${step}`);
  }
  assert.deepEqual(a.messages.slice(1), b.messages.slice(1), 'both sockets received byte-identical frames');
  assert.deepEqual([...a.binary, ...b.binary].filter(Boolean), [], 'every frame is a text frame (JSON)');
  a.ws.close();
  b.ws.close();
  await Promise.all([a.closed, b.closed]);
});

test('tickets: missing, unknown, replayed and expired → 401; without dashboard:view → 403; a foreign Origin → 403', async () => {
  const refused = async (query: string, headers: Record<string, string> = {}) => {
    const error = await open(query, '/api/v1/ws', headers).then(
      (client) => {
        client.ws.close();
        return null;
      },
      (e: { status?: number }) => e,
    );
    return error?.status;
  };
  assert.equal(await refused(''), 401);
  assert.equal(await refused(`?ticket=${'a'.repeat(64)}`), 401);
  const once = await ticket();
  const first = await open(`?ticket=${once}`);
  first.ws.close();
  await first.closed;
  assert.equal(await refused(`?ticket=${once}`), 401, 'single use');
  const stale = await ticket();
  api.t.clock.advance(30_001);
  assert.equal(await refused(`?ticket=${stale}`), 401, 'expired after 30 s');

  const role = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/roles', headers: api.headers, payload: { name: 'logs-only', permissions: ['logs:view'] } });
  assert.equal(role.statusCode, 201, role.body);
  const user = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/users', headers: api.headers, payload: { username: 'logreader', password: 'Log-reader-pass1', role: 'logs-only' } });
  assert.equal(user.statusCode, 201, user.body);
  const login = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'logreader', password: 'Log-reader-pass1' } });
  const readerTicket = await ticket({ authorization: `Bearer ${login.json().access_token}` });
  assert.equal(await refused(`?ticket=${readerTicket}`), 403);

  assert.equal(await refused(`?ticket=${await ticket()}`, { origin: 'https://evil.example' }), 403);
  const host = new URL(wsBase()).host;
  const sameOrigin = await open(`?ticket=${await ticket()}`, '/api/v1/ws', { origin: `http://${host}` });
  sameOrigin.ws.close();
  await sameOrigin.closed;

  const plain = await api.t.app.inject({ url: `/api/v1/ws?ticket=${await ticket()}` });
  assert.equal(plain.statusCode, 426, 'a plain GET is told to upgrade');
});

test('at most 64 sockets: the 65th is refused with 503 before the upgrade; a freed slot can be used again', async () => {
  await until(() => service().broadcaster.socketCount === 0, 'earlier sockets gone');
  const clients: Client[] = [];
  // One account holds at most MAX_STREAMS_PER_ACCOUNT streams: the 64 sockets come from several accounts.
  const accounts: Headers[] = [];
  for (let i = 0; i < Math.ceil(64 / MAX_STREAMS_PER_ACCOUNT); i++) {
    const username = `watcher${i}`;
    await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/users', headers: api.headers, payload: { username, password: 'Watcher-pass-12', role: 'viewer' } });
    const login = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password: 'Watcher-pass-12' } });
    accounts.push({ authorization: `Bearer ${login.json().access_token}` });
  }
  for (let i = 0; i < 64; i++) clients.push(await open(`?ticket=${await ticket(accounts[Math.floor(i / MAX_STREAMS_PER_ACCOUNT)])}`));
  assert.equal(service().broadcaster.socketCount, 64);
  const refusal = await open(`?ticket=${await ticket()}`).then(() => null, (e: { status?: number; body?: string }) => e);
  assert.equal(refusal?.status, 503);
  assert.match(refusal?.body ?? '', /limit/);
  clients[0].ws.close();
  await clients[0].closed;
  await until(() => service().broadcaster.socketCount === 63, 'slot freed');
  const again = await open(`?ticket=${await ticket()}`);
  clients.push(again);
  for (const client of clients) client.ws.terminate();
  await until(() => service().broadcaster.socketCount === 0, 'all closed');
});

/** A raw WebSocket client that completes the handshake and then never reads: its buffers fill up. */
function stalledClient(ticketValue: string): Promise<{ socket: Socket; closed: Promise<void> }> {
  const url = new URL(`${wsBase()}/api/v1/ws?ticket=${ticketValue}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write([
        `GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`, 'Upgrade: websocket', 'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', '', '',
      ].join('\r\n'));
    });
    socket.once('data', (chunk: Buffer) => {
      if (!chunk.toString('latin1').startsWith('HTTP/1.1 101')) return reject(new Error(`handshake: ${chunk.toString().slice(0, 60)}`));
      socket.pause(); // never read again
      resolve({ socket, closed });
    });
  });
}

test('a slow consumer is closed after 5 s without taking a frame, while the others receive every frame on time', async () => {
  await until(() => service().broadcaster.socketCount === 0, 'earlier sockets gone');
  // every flow changes every tick: each frame is a full ~100 KB list, so the stalled socket's buffers fill quickly
  const fast = [await open(`?ticket=${await ticket()}`), await open(`?ticket=${await ticket()}`)];
  const slow = await stalledClient(await ticket());
  await until(() => service().broadcaster.socketCount === 3, 'three sockets');
  let firstSkipAt: number | null = null;
  let closedAt: number | null = null;
  for (let i = 1; i <= 400 && closedAt === null; i++) {
    traffic.set(Array.from({ length: 600 }, (_, k) => flow(k, 1_000_000 + k * 1000 + i, { src_addr: `2001:db8:1234:5678:9abc:def0:${k.toString(16)}:1`, dst_addr: `2001:db8:ffff:eeee:dddd:cccc:bbbb:${k.toString(16)}` })));
    const before = fast.map((c) => statusFrames(c).length);
    await tick();
    const stats = service().broadcaster.lastStats!;
    // the fast clients got this tick's frame before the next tick starts
    await until(() => fast.every((c, n) => statusFrames(c).length === before[n] + 1), `tick ${i} at the fast clients`);
    if (stats.skipped > 0 && firstSkipAt === null) firstSkipAt = api.t.clock.now();
    if (stats.closedSlow > 0) closedAt = api.t.clock.now();
  }
  assert.ok(firstSkipAt !== null, 'the stalled socket fell behind');
  assert.ok(closedAt !== null, 'the stalled socket was closed');
  const waited = closedAt - firstSkipAt;
  assert.ok(waited >= 4000 && waited <= 5000, `closed ${waited} ms after its first skipped frame (its pending frame was handed over ≤ 1 s before)`);
  assert.equal(service().broadcaster.socketCount, 2, 'only the stalled socket was dropped');
  slow.socket.resume(); // the server's FIN sits behind the unread frames
  await slow.closed;
  const seqs = statusFrames(fast[0]).map((f) => f.seq);
  assert.deepEqual(seqs, seqs.map((_, k) => seqs[0] + k), 'the fast clients missed nothing');
  assert.deepEqual(fast[0].messages, fast[1].messages);
  for (const client of fast) client.ws.close();
});
