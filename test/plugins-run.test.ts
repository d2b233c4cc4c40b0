import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { headersWithPermissions } from './helpers/auth.js';
import { systemSkip } from './helpers/system-skip.js';
import { runtimeRoot, systemAccount } from '../src/platform/daemon-runtime.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'plugins', 'probe-plugin');
let t: AreaApp;
before(async () => {
  t = await startAreaApp();
  cpSync(FIXTURE, join(t.dataDir, 'plugins', 'probe-plugin'), { recursive: true });
});
after(() => t.close());

const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
  const response = await t.request(method, url, payload);
  return { status: response.statusCode, body: response.body ? json(response) : undefined };
};

/** The plugin's log, oldest first. */
const output = async (): Promise<string[]> => ((await call('GET', '/api/v1/plugins/probe-plugin/logs?lines=500')).body.entries as string[]).reverse();

/** Polls the plugin's log until a line matches (deadline 15 s); returns the matching line. */
async function waitForLine(pattern: RegExp, after = 0): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const lines = await output();
    const found = lines.slice(after).find((line) => pattern.test(line));
    if (found) return found;
    if (Date.now() > deadline) assert.fail(`no plugin log line matched ${pattern}; log:\n${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a discovered plugin runs when enabled: unprivileged, its key limited to its manifest (403 beyond), hooks and settings reach it', { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }) }, async () => {
  const found = (await call('GET', '/api/v1/plugins/discover')).body.plugins.find((p: { manifest: { name: string } }) => p.manifest.name === 'probe-plugin');
  assert.deepEqual(found.manifest.permissions, ['aliases:read', 'aliases:write', 'plugins:read']);
  assert.equal((await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'probe-plugin').state, 'stopped');

  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin' })).status, 200);
  assert.equal((await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'probe-plugin').state, 'running');
  const hello = await waitForLine(/output: hello pid=\d+ uid=\d+ settings=\{"block":\[\]\}/);
  assert.equal(Number(/uid=(\d+)/.exec(hello)![1]), systemAccount('nobody')!.uid, 'the plugin runs as nobody, not root');
  await waitForLine(/output: allowed 200$/);
  await waitForLine(/output: beyond 403$/);
  await waitForLine(/output: fed 200 $/);
  const feedByAdmin = await call('PUT', '/api/v1/plugins/probe-plugin/provided/entries', { entries: ['192.0.2.1'] });
  assert.equal(feedByAdmin.status, 403, 'only the plugin itself feeds its aliases');
  const pluginKey = (await call('GET', '/api/v1/auth/api-keys')).body.find((k: { name: string }) => k.name === 'plugin:probe-plugin');
  assert.deepEqual(pluginKey.permissions, ['aliases:read', 'aliases:write', 'plugins:read'], 'the key holds what the manifest asks for');

  // Settings: checked against the manifest's JSON schema, then handed to the running plugin.
  const refused = await call('PUT', '/api/v1/plugins/probe-plugin/config', { settings: { block: [42] } });
  assert.equal(refused.status, 400);
  assert.match(refused.body.error, /body\.settings\.block\.0 must be string/);
  assert.equal((await call('PUT', '/api/v1/plugins/probe-plugin/config', { settings: { colour: 'red' } })).status, 400);
  assert.equal((await call('PUT', '/api/v1/plugins/probe-plugin/config', { settings: { block: ['198.51.100.9'] } })).status, 200);
  await waitForLine(/output: config \{"block":\["198\.51\.100\.9"\]\}/);

  // Hooks: a configuration apply is announced on the event hub and reaches the plugin's log_event hook; the timer fires.
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  await waitForLine(/output: event log_event config\.applied/);
  await waitForLine(/output: timer fired/);
});

test('a plugin that crashes is restarted while the API keeps answering; disabling stops it and revokes its key', { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }) }, async () => {
  if ((await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'probe-plugin').state !== 'running') {
    assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin' })).status, 200);
  }
  const first = Number(/pid=(\d+)/.exec(await waitForLine(/output: hello pid=/))![1]);
  const seen = (await output()).length;
  process.kill(first, 'SIGKILL');
  assert.equal((await call('GET', '/api/v1/plugins')).status, 200, 'the API answers while the plugin is down');
  const again = Number(/pid=(\d+)/.exec(await waitForLine(/output: hello pid=/, seen))![1]);
  assert.notEqual(again, first, 'a new process took over');
  await waitForLine(/output: beyond 403$/, seen);

  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin', enabled: false })).status, 200);
  assert.equal((await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'probe-plugin').state, 'stopped');
  assert.throws(() => process.kill(again, 0), 'the plugin process is gone');
  assert.ok(!(await call('GET', '/api/v1/auth/api-keys')).body.some((k: { name: string }) => k.name === 'plugin:probe-plugin'), 'its key is revoked');
});

test("a plugin's key holds only what the enabler holds too", { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }) }, async () => {
  const limited = await headersWithPermissions(t.app, ['plugins:read', 'plugins:write', 'aliases:read']);
  assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/plugins/toggle', headers: limited, payload: { name: 'probe-plugin' } })).statusCode, 200);
  const pluginKey = (await call('GET', '/api/v1/auth/api-keys')).body.find((k: { name: string }) => k.name === 'plugin:probe-plugin');
  assert.deepEqual(pluginKey.permissions, ['aliases:read', 'plugins:read'], 'aliases:write is withheld: the enabler lacks it');
  await waitForLine(/withheld, the enabler lacks them: aliases:write/);
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin', enabled: false })).status, 200);
});

test('an enabled plugin is started again when Bulwark starts', { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }) }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-plugins-restart-'));
  cpSync(FIXTURE, join(dataDir, 'plugins', 'probe-plugin'), { recursive: true });
  const apps: AreaApp[] = [];
  try {
    apps.push(await startAreaApp({ dataDir }));
    assert.equal((await apps[0].request('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin' })).statusCode, 200);
    await apps[0].close();
    apps.push(await startAreaApp({ dataDir }));
    const listed = json((await apps[1].request('GET', '/api/v1/plugins'))).plugins.find((p: { name: string }) => p.name === 'probe-plugin');
    assert.equal(listed.state, 'running', 'started again with Bulwark');
    const entries = json(await apps[1].request('GET', '/api/v1/plugins/probe-plugin/logs')).entries as string[];
    assert.ok(entries.some((line) => line.endsWith('probe-plugin: started with Bulwark')), entries.join('\n'));
  } finally {
    await apps[1]?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
  }
});

test('custom-logger runs: the events it is sent are kept in its entries file and shown in its log', { skip: systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] }) }, async () => {
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'logging' })).status, 200);
  assert.equal((await call('GET', '/api/v1/plugins')).body.plugins.find((p: { name: string }) => p.name === 'custom-logger').state, 'running');
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  const deadline = Date.now() + 15_000;
  let entries: string[] = [];
  while (!entries.some((line) => /custom-logger: output: \{.*"topic":"config\.applied"/.test(line))) {
    if (Date.now() > deadline) assert.fail(`custom-logger logged no config.applied entry:\n${entries.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    entries = (await call('GET', '/api/v1/plugins/custom-logger/logs')).body.entries;
  }
  const kept = readFileSync(join(runtimeRoot({ dataDir: t.dataDir }), 'plugin-custom-logger', 'state', 'entries.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  assert.ok(kept.some((entry) => entry.topic === 'config.applied' && entry.hook === 'log_event'), JSON.stringify(kept));
  assert.equal((await call('POST', '/api/v1/plugins/toggle', { name: 'custom-logger', enabled: false })).status, 200);
});
