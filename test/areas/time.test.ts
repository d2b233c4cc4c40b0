import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

test('time sources: four seeded, create → list → update → delete, duplicates 409, validation', async () => {
  const seeded = json(await call('GET', '/api/v1/time/sources'));
  assert.deepEqual(seeded.map((s: { address: string }) => s.address), ['time.cloudflare.com', 'time.google.com', 'pool.ntp.org', 'time.apple.com']);
  assert.equal(seeded[0].nts, true);
  const created = await call('POST', '/api/v1/time/sources', { address: 'ntp.example.org' });
  assert.equal(created.statusCode, 201, created.body);
  assert.deepEqual([json(created).min_poll, json(created).max_poll, json(created).enabled], [4, 10, true]);
  assert.equal((await call('POST', '/api/v1/time/sources', { address: 'ntp.example.org' })).statusCode, 409);
  assert.match(json(await call('POST', '/api/v1/time/sources', { address: 'bad name!' })).error, /body\.address/);
  assert.match(json(await call('POST', '/api/v1/time/sources', { address: '10.0.0.1', min_poll: 12, max_poll: 6 })).error, /min_poll/);
  assert.equal(json(await call('PUT', `/api/v1/time/sources/${json(created).id}`, { nts: true })).nts, true);
  assert.equal((await call('DELETE', `/api/v1/time/sources/${json(created).id}`)).statusCode, 204);
  assert.equal((await call('DELETE', `/api/v1/time/sources/${json(created).id}`)).statusCode, 404);
});

test('time config: defaults, partial PUT, NTS needs certificate paths', async () => {
  const config = json(await call('GET', '/api/v1/time/config'));
  assert.equal(config.ntp_listen, '0.0.0.0:123');
  assert.equal(config.clock_step_threshold_ms, 128);
  assert.match(json(await call('PUT', '/api/v1/time/config', { nts_enabled: true })).error, /nts_certificate/);
  assert.match(json(await call('PUT', '/api/v1/time/config', { ntp_listen: 'everywhere' })).error, /body\.ntp_listen/);
  assert.match(json(await call('PUT', '/api/v1/time/config', { ptp_delay_mechanism: 'x' })).error, /must be one of: e2e, p2p/);
  assert.equal(json(await call('PUT', '/api/v1/time/config', { enabled: true, ntp_listen: '127.0.0.1:10123' })).enabled, true);
});

test('apply renders chrony.conf accepted by chronyd -p; the simulated service runs and reports its sources; stop/start/restart', async () => {
  const applied = await call('POST', '/api/v1/time/apply');
  assert.equal(applied.statusCode, 200, applied.body);
  const report = json(applied);
  assert.equal(report.check.checked, true, 'chronyd is installed here');
  assert.equal(report.check.ok, true, report.check.output);
  assert.equal(report.running, true);
  const rendered = readFileSync(join(t.dataDir, 'time', 'chrony.conf'), 'utf8');
  assert.match(rendered, /^server time\.cloudflare\.com iburst minpoll 4 maxpoll 10 nts$/m);
  assert.match(rendered, /^pool pool\.ntp\.org iburst/m);
  assert.match(rendered, /^port 10123$/m);
  assert.match(rendered, /^bindaddress 127\.0\.0\.1$/m);
  const status = json(await call('GET', '/api/v1/time/status'));
  assert.equal(status.running, true);
  assert.equal(status.simulated, true);
  assert.equal(status.sources_count, 4);
  assert.equal(status.synchronized, true);
  assert.equal(status.reference, 'time.cloudflare.com');
  assert.equal(status.sources.length, 4);
  assert.equal(json(await call('POST', '/api/v1/time/stop')).running, false);
  const stopped = json(await call('GET', '/api/v1/time/status'));
  assert.equal(stopped.running, false);
  assert.equal(stopped.synchronized, false);
  assert.equal(json(await call('POST', '/api/v1/time/start')).running, true);
  assert.equal(json(await call('POST', '/api/v1/time/restart')).running, true);
  const logs = json(await call('GET', '/api/v1/time/logs?search=stopped'));
  assert.ok(logs.length >= 1);
  await call('PUT', '/api/v1/time/config', { enabled: false });
  const disabled = json(await call('POST', '/api/v1/time/apply'));
  assert.equal(disabled.running, false);
  assert.equal(disabled.message, 'Time config saved, chronyd stopped');
});
