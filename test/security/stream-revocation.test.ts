import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { adminApi } from '../helpers/admin-api.js';
import type { Headers } from '../helpers/auth.js';
import { MAX_STREAMS_PER_ACCOUNT } from '../../src/live/stream-registry.js';

const api = adminApi({ listen: true });
const { call } = api;

let people = 0;
/** A new account with the given role, signed in: its id and Bearer headers. */
async function person(role: string): Promise<{ id: string; headers: Headers }> {
  const username = `streamer${++people}`;
  const created = await call('POST', '/api/v1/auth/users', { username, password: 'Stream-pass-12', role });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const login = await call('POST', '/api/v1/auth/login', { username, password: 'Stream-pass-12' }, {});
  return { id: created.body.id, headers: { authorization: `Bearer ${login.body.access_token}` } };
}

/** An open Server-Sent Events stream: everything read so far, and whether the server ended it. */
interface OpenStream { text: string; ended: Promise<void>; abort(): void }
async function openStream(path: string, headers: Headers): Promise<OpenStream & { status: number; body?: string }> {
  const controller = new AbortController();
  const response = await fetch(`${api.base}${path}`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
  if (response.status !== 200) return { status: response.status, body: await response.text(), text: '', ended: Promise.resolve(), abort: () => undefined };
  const stream = { status: 200, text: '', ended: Promise.resolve(), abort: () => controller.abort() };
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body!) stream.text += decoder.decode(chunk as Uint8Array, { stream: true });
    } catch {
      // aborted by the test
    }
  })();
  return stream;
}

/** Resolves when the promise settles, or fails the test after a deadline (a stream left running). */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still running: ${what}`)), ms)));
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function openSocket(headers: Headers): Promise<{ ws: WebSocket; closed: Promise<{ code: number }> }> {
  const ticket = (await call('POST', '/api/v1/auth/ws-ticket', undefined, headers)).body.ticket;
  const ws = new WebSocket(`${api.base.replace('http', 'ws')}/api/v1/ws?ticket=${ticket}`);
  const closed = new Promise<{ code: number }>((resolve) => ws.once('close', (code) => resolve({ code })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_request, response) => reject(new Error(`refused ${response.statusCode}`)));
    ws.once('error', reject);
  });
  return { ws, closed };
}

test('streams end when the account is demoted or disabled, its session revoked or its key revoked', async () => {
  const role = await call('POST', '/api/v1/auth/roles', { name: 'log-reader', permissions: ['logs:view'] });
  assert.equal(role.status, 201, JSON.stringify(role.body));

  // Demoted to a role without dashboard:view: the pending stream and the dashboard socket end.
  const demoted = await person('operator');
  const pending = await openStream('/api/v1/pending/stream', demoted.headers);
  assert.equal(pending.status, 200);
  const socket = await openSocket(demoted.headers);
  assert.equal((await call('PUT', `/api/v1/auth/users/${demoted.id}`, { role: 'log-reader' })).status, 200);
  await within(pending.ended, 'the pending stream after a demotion');
  assert.match(pending.text, /event: end\ndata: \{"error":"access revoked/);
  assert.equal((await within(socket.closed, 'the dashboard socket after a demotion')).code, 1008);

  // A demotion that keeps the permission keeps the stream.
  const kept = await person('operator');
  const dns = await openStream('/api/v1/dns/stream', kept.headers);
  assert.equal((await call('PUT', `/api/v1/auth/users/${kept.id}`, { role: 'viewer' })).status, 200);
  // Disabled: ends.
  assert.equal((await call('PUT', `/api/v1/auth/users/${kept.id}`, { enabled: false })).status, 200);
  await within(dns.ended, 'the DNS stream after the account was disabled');
  assert.match(dns.text, /event: end/);
  assert.match(dns.text, /^retry: 5000\n\nid: 1\n/, 'it ran until then');

  // The session is revoked (logout): the streams it opened end.
  const leaving = await person('viewer');
  const before = await openStream('/api/v1/pending/stream', leaving.headers);
  assert.equal((await call('POST', '/api/v1/auth/logout', {}, leaving.headers)).status < 300, true);
  await within(before.ended, 'the stream of a session that logged out');

  // The API key is revoked: the stream it opened ends.
  const key = await call('POST', '/api/v1/auth/api-keys', { name: 'stream-key', permissions: ['dashboard:view'] });
  const byKey = await openStream('/api/v1/pending/stream', { authorization: `ApiKey ${key.body.key}` });
  assert.equal(byKey.status, 200);
  assert.equal((await call('DELETE', `/api/v1/auth/api-keys/${key.body.id}`)).status, 204);
  await within(byKey.ended, 'the stream of a revoked key');

  // A password change ends the streams of the account's other sessions.
  const changing = await person('viewer');
  const other = await openStream('/api/v1/pending/stream', changing.headers);
  assert.equal((await call('PUT', `/api/v1/auth/users/${changing.id}`, { password: 'Changed-pass-34' })).status, 200);
  await within(other.ended, 'the stream of a session ended by a password change');
});

test(`one account holds at most ${MAX_STREAMS_PER_ACCOUNT} open streams; the next answers 429 with a clear message`, async () => {
  const busy = await person('viewer');
  const open: OpenStream[] = [];
  try {
    for (let i = 0; i < MAX_STREAMS_PER_ACCOUNT - 1; i++) {
      const stream = await openStream(i % 2 ? '/api/v1/dns/stream' : '/api/v1/pending/stream', busy.headers);
      assert.equal(stream.status, 200);
      open.push(stream);
    }
    const socket = await openSocket(busy.headers);
    const refused = await openStream('/api/v1/pending/stream', busy.headers);
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.body!).error, new RegExp(`too many open streams for this account \\(at most ${MAX_STREAMS_PER_ACCOUNT}\\)`));
    await assert.rejects(openSocket(busy.headers), /refused 429/, 'the dashboard socket counts and is refused too');
    const others = await openStream('/api/v1/pending/stream', api.headers);
    assert.equal(others.status, 200, 'other accounts are not affected');
    others.abort();
    // Closing one frees its place.
    open.pop()!.abort();
    socket.ws.close();
    await socket.closed;
    let again = { status: 0 } as Awaited<ReturnType<typeof openStream>>;
    for (let i = 0; i < 200 && again.status !== 200; i++) {
      again = await openStream('/api/v1/pending/stream', busy.headers);
      if (again.status !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(again.status, 200, 'a closed stream gives its place back');
    open.push(again);
  } finally {
    for (const stream of open) stream.abort();
  }
});
