import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';

/** An apply records a configuration version only when the configuration differs from the active version. */
const api = adminApi();

const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
  const response = await api.t.app.inject({ method, url, payload: payload as object, headers: api.headers });
  return { status: response.statusCode, body: response.body ? json(response) : undefined, total: Number(response.headers['x-total-count']) };
};
const versionCount = async () => (await call('GET', '/api/v1/config/history?limit=1')).total;
const reload = async () => {
  const response = await call('POST', '/api/v1/reload');
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body as { message: string; version: number | null };
};

test('reloading with nothing changed applies again but records no duplicate version', async () => {
  const before = await versionCount();
  const first = await reload();
  const second = await reload();
  const third = await reload();
  assert.ok((await versionCount()) <= before + 1, 'three reloads in a row add at most one version');
  assert.equal(second.message, 'Changes applied successfully');
  assert.equal(second.version, first.version, 'the answer names the version that is running');
  assert.equal(third.version, first.version);
  const active = (await call('GET', '/api/v1/config/history?limit=1')).body[0];
  assert.equal(active.version, first.version);
  assert.equal(active.active, true);
});

test('a change since the active version is recorded by the next reload, once', async () => {
  await reload();
  const before = await versionCount();
  assert.equal((await call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22 })).status, 201);
  const changed = await reload();
  assert.equal(await versionCount(), before + 1);
  assert.equal((await call('GET', '/api/v1/config/history?limit=1')).body[0].version, changed.version, 'the new version is the newest');
  const again = await reload();
  assert.equal(await versionCount(), before + 1);
  assert.equal(again.version, changed.version);
});

test('a commit-confirm apply of an unchanged configuration records nothing; a restore is still recorded', async () => {
  const { version } = await reload();
  const before = await versionCount();
  const window = await call('POST', '/api/v1/config/commit-confirm', { apply: true, timeout_seconds: 60 });
  assert.equal(window.status, 200, JSON.stringify(window.body));
  assert.equal((await call('POST', '/api/v1/config/commit-confirm/confirm')).status, 200);
  assert.equal(await versionCount(), before, 'nothing changed, nothing recorded');
  // a restore is an event of its own: it is recorded even when its content equals the running one
  const restored = await call('POST', '/api/v1/config/restore', { version });
  assert.equal(restored.status, 200, JSON.stringify(restored.body));
  assert.equal(await versionCount(), before + 1);
});
