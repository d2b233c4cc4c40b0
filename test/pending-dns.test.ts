import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAreaApp } from './helpers/area-app.js';
import { events } from './helpers/event-stream.js';

test('GET /pending and its stream carry the DNS area\'s flag: set by a resolver change, cleared by applying it', async () => {
  const t = await startAreaApp();
  const headers = t.headers;
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
    const response = await t.app.inject({ method, url, payload, headers });
    assert.ok(response.statusCode < 300, `${method} ${url} → ${response.statusCode} ${response.body}`);
    return response.json();
  };
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const controller = new AbortController();
  try {
    const initial = await call('GET', '/api/v1/pending');
    assert.equal(initial.dns, false);
    assert.deepEqual(Object.keys(initial).slice(0, 3), ['firewall', 'nat', 'dns']);

    const response = await fetch(`${address}/api/v1/pending/stream`, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
    const stream = events(response);
    const next = async () => (await stream.next()).value!;
    /** The next unnamed event (the pending report), skipping configuration announcements. */
    const nextReport = async () => {
      for (;;) {
        const event = await next();
        if (event.event === undefined) return event.data;
      }
    };
    assert.equal((await nextReport()).dns, false);

    // A resolver change is pending until applied; the packet filter's flags are untouched.
    await call('PUT', '/api/v1/dns/resolver/config', { enabled: true, port: 5353 });
    const changed = await call('GET', '/api/v1/pending');
    assert.deepEqual([changed.firewall, changed.nat, changed.dns], [false, false, true]);
    assert.equal((await call('GET', '/api/v1/dns/resolver/status')).pending, true);
    assert.equal((await nextReport()).dns, true, 'the stream announces the change');

    const applied = await call('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.running, true, JSON.stringify(applied));
    assert.equal((await call('GET', '/api/v1/pending')).dns, false);
    assert.equal((await nextReport()).dns, false, 'and the apply');

    // POST /reload applies every area, the resolver included.
    await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.arpa', value: '192.168.1.20' });
    assert.equal((await call('GET', '/api/v1/pending')).dns, true);
    await call('POST', '/api/v1/reload');
    assert.equal((await call('GET', '/api/v1/pending')).dns, false);

    // A resolver that is off and stopped has nothing unapplied once /reload has seen it: it renders the
    // stored configuration whenever it starts.
    await call('PUT', '/api/v1/dns/resolver/config', { enabled: false });
    await call('POST', '/api/v1/reload');
    assert.equal((await call('GET', '/api/v1/dns/resolver/status')).running, false);
    await call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'printer', domain: 'home.arpa', value: '192.168.1.21' });
    assert.equal((await call('GET', '/api/v1/pending')).dns, true);
    await call('POST', '/api/v1/reload');
    assert.equal((await call('GET', '/api/v1/pending')).dns, false);
  } finally {
    controller.abort();
    await t.close();
  }
});
