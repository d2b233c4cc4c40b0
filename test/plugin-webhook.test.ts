/**
 * The webhook-notifier built-in (docs/plugins.md): its process gets the hub's events through its hooks and has
 * Bulwark post the ones its settings choose to its `url`, signed with its sealed `secret` like /notify/webhooks,
 * through the outbound guard (a loopback receiver only once /settings/outbound names it). An IDS alert ingested
 * from the engine's EVE log reaches the receiver, correctly signed; a configuration apply (log_event, not chosen)
 * does not; bad settings answer 400 naming the field; nobody but the plugin may post through it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

let t: AreaApp;
const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    received.push({ path: request.url ?? '', headers: request.headers, body });
    response.writeHead(204).end();
  });
});
let port = 0;
before(async () => {
  t = await startAreaApp();
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as { port: number }).port;
});
after(async () => {
  await t.close();
  receiver.close();
});

const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
  const response = await t.request(method, url, payload);
  return { status: response.statusCode, body: response.body ? json(response) : undefined };
};
async function until<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const logs = async (): Promise<string[]> => (await call('GET', '/api/v1/plugins/webhook-notifier/logs?lines=500')).body.entries;

test('webhook-notifier: bad settings are 400 naming the field; a loopback url only once /settings/outbound allows it', async () => {
  const refused = async (settings: Record<string, unknown>, field: RegExp) => {
    const answer = await call('PUT', '/api/v1/plugins/webhook-notifier/config', { settings });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.match(answer.body.error, field);
  };
  await refused({ url: 'ftp://example.org/hook' }, /body\.settings\.url must be an http\(s\) URL/);
  await refused({ notify_on_ids: 'yes' }, /body\.settings\.notify_on_ids must be true or false/);
  await refused({ secret: 42 }, /body\.settings\.secret/);
  await refused({ url: `http://127.0.0.1:${port}/hook` }, /body\.settings\.url: 127\.0\.0\.1 is a loopback.*\/settings\/outbound/);
  assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1'] })).status, 200);
  await refused({ url: 'http://example.org/hook' }, /body\.settings\.url: plain http only to an address/);
  await refused({ url: `http://user:pw@127.0.0.1:${port}/hook` }, /body\.settings\.url must not carry credentials/);
});

test('webhook-notifier posts an IDS alert, signed, to its url; an event it does not choose is not posted; only the plugin may post', { timeout: 180_000 }, async () => {
  assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1'] })).status, 200);
  const saved = await call('PUT', '/api/v1/plugins/webhook-notifier/config', { settings: { url: `http://127.0.0.1:${port}/hook`, secret: 'hook-secret', notify_on_ids: true, notify_on_gateway: false } });
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  assert.equal(saved.body.settings.secret, undefined, 'the secret is write-only');
  assert.equal(JSON.stringify((await call('GET', '/api/v1/plugins/webhook-notifier/config')).body).includes('hook-secret'), false);

  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'webhook' })).status, 200);
  await until('the plugin to run', async () => (await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'webhook-notifier').state === 'running');

  // Not chosen: a configuration apply reaches its log_event hook but is not posted.
  assert.equal((await call('POST', '/api/v1/reload', {})).status, 200);
  // Chosen: an IDS alert through the engine's EVE reader (the path that announces ids.alert on the hub).
  const ids = (t.app.areas.find((area) => area.name === 'ids') as unknown as { service: { ingestEve(text: string): unknown } }).service;
  ids.ingestEve(`${JSON.stringify({ timestamp: new Date().toISOString(), event_type: 'alert', src_ip: '198.51.100.7', src_port: 4444, dest_ip: '10.0.0.5', dest_port: 22, proto: 'TCP', alert: { signature_id: 9200001, signature: 'webhook plugin test', severity: 1, action: 'allowed' } })}\n`);

  const delivered = await until('the IDS alert at the receiver', () => received.find((r) => r.headers['x-bulwark-event'] === 'ids.alert'));
  assert.equal(delivered.path, '/hook');
  assert.equal(delivered.headers['x-bulwark-signature'], `sha256=${createHmac('sha256', 'hook-secret').update(delivered.body).digest('hex')}`);
  assert.match(String(delivered.headers['x-bulwark-delivery']), /^[0-9a-f-]{36}$/);
  const body = JSON.parse(delivered.body);
  assert.equal(body.event, 'ids.alert');
  assert.equal(body.hook, 'ids_alert');
  assert.equal(body.plugin, 'webhook-notifier');
  assert.equal(body.payload.signature_id, 9200001);
  assert.equal(body.payload.src_ip, '198.51.100.7');
  // The plugin handles its input in order: the apply came first and was dropped, not posted.
  assert.deepEqual(received.map((r) => r.headers['x-bulwark-event']), ['ids.alert'], 'config.applied is not posted');
  await until('the delivery in its log', async () => (await logs()).some((line) => /delivered ids\.alert/.test(line)));

  const byAdmin = await call('POST', '/api/v1/plugins/webhook-notifier/deliveries', { hook: 'ids_alert', topic: 'ids.alert', at: new Date().toISOString(), payload: {} });
  assert.equal(byAdmin.status, 403, 'only the plugin itself posts through its webhook');
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'webhook', enabled: false })).status, 200);
});
