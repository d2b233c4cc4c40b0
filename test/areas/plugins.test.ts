import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('built-in plugins: listed stopped, toggled by listed name or key, state and logs follow', async () => {
  const listed = json(await call('GET', '/api/v1/plugins'));
  assert.deepEqual(listed.plugins.map((p: { name: string; state: string }) => `${p.name}:${p.state}`), ['custom-logger:stopped', 'ip-reputation:stopped', 'webhook-notifier:stopped']);
  assert.deepEqual([listed.total, listed.running], [3, 0]);
  assert.equal(json(await call('POST', '/api/v1/plugins/toggle', { name: 'custom-logger' })).message, "Plugin 'custom-logger' enabled and running.");
  assert.equal(json(await call('POST', '/api/v1/plugins/toggle', { name: 'webhook', enabled: true })).message, "Plugin 'webhook-notifier' enabled and running.");
  assert.equal(json(await call('GET', '/api/v1/plugins')).running, 2);
  assert.equal(json(await call('POST', '/api/v1/plugins/toggle', { name: 'webhook-notifier', enabled: false })).message, "Plugin 'webhook-notifier' disabled.");
  const after = json(await call('GET', '/api/v1/plugins'));
  assert.equal(after.plugins.find((p: { name: string }) => p.name === 'webhook-notifier').state, 'stopped', 'a disabled plugin stays listed');
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'nope' })).statusCode, 404);
  assert.equal((await call('POST', '/api/v1/plugins/toggle', {})).statusCode, 400);
  const logs = json(await call('GET', '/api/v1/plugins/webhook/logs'));
  assert.equal(logs.name, 'webhook-notifier');
  assert.match(logs.entries[0], /disabled/);
  assert.match(logs.entries[1], /enabled/);
});

test('plugin config: defaults, typed settings of built-ins, unknown plugin 404', async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/plugins/ip-reputation/config')), { name: 'ip-reputation', enabled: false, settings: { table_name: 'ip_reputation', blocklist: [] } });
  assert.match(json(await call('PUT', '/api/v1/plugins/ip-reputation/config', { settings: { blocklist: ['10.0.0.1', 'not-ip'] } })).error, /body\.settings\.blocklist/);
  assert.match(json(await call('PUT', '/api/v1/plugins/ip-reputation/config', { settings: { colour: 'red' } })).error, /not a setting of ip-reputation/);
  const saved = json(await call('PUT', '/api/v1/plugins/ip-reputation/config', { settings: { blocklist: ['203.0.113.7', '198.51.100.0/24'] } }));
  assert.deepEqual(saved.settings, { table_name: 'ip_reputation', blocklist: ['203.0.113.7', '198.51.100.0/24'] });
  assert.equal(json(await call('GET', '/api/v1/plugins/ip-reputation/config')).settings.blocklist.length, 2);
  assert.match(json(await call('PUT', '/api/v1/plugins/custom-logger/config', { settings: { max_entries: 5 } })).error, /max_entries/);
  assert.equal((await call('GET', '/api/v1/plugins/unknown-thing/config')).statusCode, 404);
  assert.equal((await call('GET', '/api/v1/plugins/Bad%20Name/config')).statusCode, 400);
});

test('discovery reads plugin.toml manifests from the plugin directory; discovered plugins are listed; a WebAssembly one cannot be enabled', async () => {
  const dir = join(t.dataDir, 'plugins');
  mkdirSync(join(dir, 'geo-tagger'), { recursive: true });
  writeFileSync(join(dir, 'geo-tagger', 'plugin.toml'), '[plugin]\nname = "geo-tagger"\nversion = "0.3.1"\ndescription = "Tags flows"\nauthor = "Someone"\nplugin_type = "wasm"\nwasm_file = "geo.wasm"\nhooks = ["connection_new"]\n\n[settings]\nprecision = 2\n');
  mkdirSync(join(dir, 'broken'), { recursive: true });
  writeFileSync(join(dir, 'broken', 'plugin.toml'), 'name = "broken"\nhooks = ["no_such_hook"]\n');
  const found = json(await call('GET', '/api/v1/plugins/discover'));
  assert.equal(found.plugin_dir, dir);
  assert.deepEqual(found.plugins.map((p: { manifest: { name: string; plugin_type: string; default_settings: object } }) => [p.manifest.name, p.manifest.plugin_type, p.manifest.default_settings]), [['geo-tagger', 'wasm', { precision: 2 }]]);
  assert.match(found.invalid[0].error, /unknown hook no_such_hook/);
  const listed = json(await call('GET', '/api/v1/plugins'));
  assert.equal(listed.plugins.find((p: { name: string }) => p.name === 'geo-tagger').state, 'stopped', 'discovered, not enabled');
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'geo-tagger' })).statusCode, 400);
  assert.deepEqual(json(await call('GET', '/api/v1/plugins/geo-tagger/config')).settings, { precision: 2 });
  assert.deepEqual(json(await call('PUT', '/api/v1/plugins/geo-tagger/config', { settings: { precision: 4 } })).settings, { precision: 4 });
});
