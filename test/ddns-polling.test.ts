/**
 * Dynamic DNS polling through the HTTP interface with the injected clock: an enabled record is resolved and
 * pushed every poll_interval_secs of /ddns/config (to a loopback Cloudflare-compatible stand-in the
 * administrator allow-listed), not before; a disabled record is not polled; a changed address is pushed at the
 * next poll without anyone calling POST …/update.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { adminApi } from './helpers/admin-api.js';
import { areaOf } from './helpers/areas.js';
import type { createNetworkingArea } from '../src/areas/networking/routes.js';

const api = adminApi();
const { call, created } = api;
const poller = () => areaOf<ReturnType<typeof createNetworkingArea>>(api.t.app, 'networking').ddnsPoller;

/** Pushed A records by name, as the stand-in stored them. */
const pushed = new Map<string, string>();
const provider = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    response.setHeader('content-type', 'application/json');
    const url = new URL(request.url!, 'http://x');
    if (url.pathname === '/client/v4/zones') return response.end(JSON.stringify({ success: true, result: [{ id: 'zone1' }] }));
    if (request.method === 'GET') return response.end(JSON.stringify({ success: true, result: [] }));
    const sent = JSON.parse(body || '{}') as { name: string; content: string };
    pushed.set(sent.name, sent.content);
    response.end(JSON.stringify({ success: true, result: { id: 'rec' } }));
  });
});
after(() => provider.close());

test('records are polled every poll_interval_secs on the service clock, and not before', async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const port = (provider.address() as { port: number }).port;
  assert.equal((await call('PUT', '/api/v1/ddns/config', { poll_interval_secs: 120, allow_private_echo: ['127.0.0.1/32'] })).status, 200);
  const cloudflare = await created('/api/v1/acme/dns-providers', {
    name: 'cf-poll', kind: 'cloudflare', zone: 'example.org', api_token: 'cf-token', extra: { api_base: `http://127.0.0.1:${port}/client/v4` },
  });
  const record = await created('/api/v1/ddns/records', { provider_id: cloudflare.id, hostname: 'gw.example.org', source: 'explicit', explicit_ip: '203.0.113.9' });
  const idle = await created('/api/v1/ddns/records', { provider_id: cloudflare.id, hostname: 'off.example.org', source: 'explicit', explicit_ip: '203.0.113.50', enabled: false });
  const listed = async (id: string) => (await call('GET', '/api/v1/ddns/records')).body.find((r: { id: string }) => r.id === id);

  api.t.clock.advance(119_000);
  assert.equal(await poller().tick(), 0, 'not due before the interval');
  assert.equal((await listed(record.id)).last_status, null);

  api.t.clock.advance(1_000);
  assert.equal(await poller().tick(), 1, 'the enabled record only');
  assert.equal(pushed.get('gw.example.org'), '203.0.113.9');
  assert.equal(pushed.has('off.example.org'), false);
  const first = await listed(record.id);
  assert.deepEqual([first.last_status, first.last_ip, first.last_updated], ['updated', '203.0.113.9', new Date(api.t.clock.now()).toISOString()]);
  assert.equal((await listed(idle.id)).last_status, null);

  // The address changes; the next poll (one interval later) pushes it.
  assert.equal((await call('PUT', `/api/v1/ddns/records/${record.id}`, { explicit_ip: '203.0.113.10' })).status, 200);
  api.t.clock.advance(60_000);
  assert.equal(await poller().tick(), 0);
  assert.equal(pushed.get('gw.example.org'), '203.0.113.9');
  api.t.clock.advance(60_000);
  assert.equal(await poller().tick(), 1);
  assert.equal(pushed.get('gw.example.org'), '203.0.113.10');
  const second = await listed(record.id);
  assert.deepEqual([second.last_status, second.last_ip], ['updated', '203.0.113.10']);
});
