import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { EventStream, EventStreamSet, formatEvent } from '../src/live/event-stream.js';
import { startAreaApp } from './helpers/area-app.js';
import { eventBlocks as blocks, parseEvent } from './helpers/event-stream.js';

test('event framing: id, optional event name, one data line per line', () => {
  assert.equal(formatEvent(7, { a: 1 }), 'id: 7\ndata: {"a":1}\n\n');
  assert.equal(formatEvent(8, 'one\ntwo', 'note'), 'id: 8\nevent: note\ndata: one\ndata: two\n\n');
});

test('the writer sends retry, ids per connection, keep-alive comments, broadcasts, and forgets a client that disconnects', async () => {
  const set = new EventStreamSet();
  let cleanedUp = 0;
  const app = Fastify({ forceCloseConnections: true });
  app.get('/stream', (request, reply) => {
    const stream = new EventStream(request, reply, { keepAliveMs: 50 });
    set.add(stream);
    stream.onClose(() => cleanedUp++);
    stream.send({ hello: true });
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const refused = await fetch(`${address}/stream`, { headers: { accept: 'application/json' } });
    assert.equal(refused.status, 406, 'an Accept that excludes event streams is refused, not held open');
    await refused.body?.cancel();
    assert.equal(set.size, 0);

    const controller = new AbortController();
    const response = await fetch(`${address}/stream`, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-cache, no-transform');
    const seen: string[] = [];
    let broadcastSent = false;
    for await (const block of blocks(response)) {
      seen.push(block);
      if (!broadcastSent && block.startsWith('id: 1')) {
        set.broadcast('two\nlines', 'note');
        broadcastSent = true;
      }
      if (seen.filter((b) => b === ': keep-alive').length === 2) break;
    }
    assert.equal(seen[0], 'retry: 5000');
    assert.deepEqual(parseEvent(seen[1]), { id: 1, event: undefined, data: { hello: true } });
    assert.equal(seen[2], 'id: 2\nevent: note\ndata: two\ndata: lines');
    assert.equal(set.size, 1);
    controller.abort();
    for (let i = 0; i < 100 && set.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(set.size, 0, 'the connection is cleaned up after the client leaves');
    assert.equal(cleanedUp, 1, 'cleanup callbacks run once');
  } finally {
    set.closeAll();
    await app.close();
  }
});

test('GET /pending/stream sends the pending report at once and again when it changes', async () => {
  const t = await startAreaApp();
  const headers = t.headers;
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const controller = new AbortController();
    const response = await fetch(`${address}/api/v1/pending/stream`, { signal: controller.signal, headers });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = blocks(response);
    const next = async () => {
      for (;;) {
        const { value } = await events.next();
        if (value !== undefined && value.startsWith('id: ')) return parseEvent(value);
      }
    };
    const first = await next();
    assert.equal(first.data.firewall, false);
    assert.equal(first.data.applied_at, null);

    const created = await t.app.inject({ method: 'POST', url: '/api/v1/rules', payload: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 23 }, headers });
    const ruleId = JSON.parse(created.body).id;
    const second = await next();
    assert.ok(second.id > first.id, 'event ids increase');
    assert.equal(second.data.firewall, true);
    assert.deepEqual(second.data.changes.rules.added, [ruleId]);

    await t.app.inject({ method: 'POST', url: '/api/v1/reload', headers });
    // The apply is announced under its topic, and a new pending report is sent (in either order: the report is
    // recomputed when the packet filter applies, the announcement follows when every applier has finished).
    const pair = [await next(), await next()];
    const announced = pair.find((e) => e.event === 'config.applied');
    const third = pair.find((e) => e.event === undefined);
    assert.ok(announced?.data.version, JSON.stringify(pair));
    assert.equal(third?.data.firewall, false);
    assert.ok(third?.data.applied_at);
    controller.abort();
  } finally {
    await t.close();
  }
});

test('GET /pending/stream: 406 without an Accept that allows event streams; EventSource may authenticate with ?ticket=', async () => {
  const t = await startAreaApp();
  const headers = t.headers;
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const noAccept = await t.app.inject({ url: '/api/v1/pending/stream', headers });
    assert.equal(noAccept.statusCode, 406);
    assert.match(noAccept.json().error, /Accept: text\/event-stream/);
    const ticket = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers })).json().ticket;
    assert.match(ticket, /^[0-9a-f]{64}$/);
    const controller = new AbortController();
    const response = await fetch(`${address}/api/v1/pending/stream?ticket=${ticket}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    assert.equal(response.status, 200);
    for await (const block of blocks(response)) {
      if (!block.startsWith('id: ')) continue;
      const event = parseEvent(block);
      assert.equal(event.id, 1);
      assert.equal(event.data.firewall, false);
      break;
    }
    controller.abort();
    const replay = await fetch(`${address}/api/v1/pending/stream?ticket=${ticket}`, { headers: { accept: 'text/event-stream' } });
    assert.equal(replay.status, 401, 'a ticket is single use');
  } finally {
    await t.close();
  }
});
