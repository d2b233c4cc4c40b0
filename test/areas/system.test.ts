import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
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

test('system info comes from the OS', async () => {
  const info = json(await call('GET', '/api/v1/system/info'));
  assert.equal(info.hostname, os.hostname());
  assert.equal(info.cpu_count, os.cpus().length);
  assert.equal(info.mem_total_bytes, os.totalmem());
  assert.ok(info.disk_total_bytes > 0 && info.disk_used_bytes <= info.disk_total_bytes);
  assert.ok(info.cpu_usage_pct >= 0 && info.cpu_usage_pct <= 100);
  assert.equal(info.load_avg.length, 3);
  assert.equal(info.simulated, true);
});

test('timezones come from the system zone database, sorted, with UTC', async () => {
  const zones = json(await call('GET', '/api/v1/system/timezones'));
  assert.ok(zones.includes('UTC'));
  assert.ok(zones.includes('Europe/Paris'));
  assert.ok(zones.includes('America/Argentina/Buenos_Aires'));
  assert.ok(!zones.some((z: string) => z.startsWith('posix/') || z.startsWith('right/') || z.endsWith('.tab')));
  assert.deepEqual(zones, [...zones].sort());
});

test('general, banner, ssh and console: defaults, validation, rendered files and apply reports', async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/system/general')), { hostname: '', domain: '', timezone: 'UTC' });
  assert.match(json(await call('PUT', '/api/v1/system/general', { hostname: '-bad' })).error, /body\.hostname/);
  assert.match(json(await call('PUT', '/api/v1/system/general', { domain: '.lan' })).error, /body\.domain/);
  assert.match(json(await call('PUT', '/api/v1/system/general', { timezone: 'Mars/Olympus' })).error, /body\.timezone/);
  const report = json(await call('PUT', '/api/v1/system/general', { hostname: 'fw1', domain: 'example.lan', timezone: 'Europe/Paris' }));
  assert.deepEqual([report.ok, report.requires_reboot, report.requires_service_restart], [true, false, null]);
  assert.match(report.warning, /simulated/);
  assert.match(readFileSync(join(t.dataDir, 'system', 'hosts'), 'utf8'), /fw1\.example\.lan fw1/);
  assert.equal(json(await call('GET', '/api/v1/system/general')).timezone, 'Europe/Paris');
  assert.equal(json(await call('GET', '/api/v1/system/info')).domain, 'example.lan');

  assert.match(json(await call('PUT', '/api/v1/system/banner', { motd: 'x'.repeat(9000) })).error, /body\.motd/);
  await call('PUT', '/api/v1/system/banner', { login_banner: 'Authorised use only' });
  assert.equal(readFileSync(join(t.dataDir, 'system', 'issue'), 'utf8'), 'Authorised use only\n');

  assert.deepEqual(json(await call('GET', '/api/v1/system/ssh')), { enabled: true, port: 22, password_auth: false, permit_root_login: false });
  assert.match(json(await call('PUT', '/api/v1/system/ssh', { port: 0 })).error, /body\.port/);
  const ssh = json(await call('PUT', '/api/v1/system/ssh', { port: 2222 }));
  assert.equal(ssh.requires_service_restart, 'sshd');
  assert.match(readFileSync(join(t.dataDir, 'system', 'sshd_config.d-bulwark.conf'), 'utf8'), /^Port 2222$/m);

  assert.match(json(await call('PUT', '/api/v1/system/console', { kind: 'teletype' })).error, /must be one of: video, serial, dual/);
  assert.match(json(await call('PUT', '/api/v1/system/console', { baud: 1200 })).error, /body\.baud/);
  const consoleReport = json(await call('PUT', '/api/v1/system/console', { kind: 'dual', baud: 9600 }));
  assert.equal(consoleReport.requires_reboot, true);
  assert.equal(readFileSync(join(t.dataDir, 'system', 'kernel-console.args'), 'utf8'), 'console=tty0 console=ttyS0,9600n8\n');
});
