import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { BUILD } from '../../src/core/build-info.js';
import { checksumOf, compareVersions } from '../../src/areas/updates/appliance.js';

let t: AreaApp;
let headers: Headers;
before(async () => {
  t = await startAreaApp();
  headers = t.headers;
});
after(() => t.close());

const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

test('OS updates on the simulated platform: check finds updates, install clears them and asks for a reboot, history records it', async () => {
  const before = json(await call('GET', '/api/v1/updates/status'));
  assert.deepEqual([before.last_check, before.pending_pkg_count, before.simulated], [null, 0, true]);
  const checked = json(await call('POST', '/api/v1/updates/check'));
  assert.equal(checked.pending_pkg_count, 3);
  assert.ok(checked.last_check);
  const installed = json(await call('POST', '/api/v1/updates/install'));
  assert.equal(installed.installed.length, 3);
  assert.equal(installed.needs_reboot, true);
  const after = json(await call('GET', '/api/v1/updates/status'));
  assert.deepEqual([after.pending_pkg_count, after.needs_reboot], [0, true]);
  const reboot = json(await call('POST', '/api/v1/updates/reboot'));
  assert.equal(reboot.executed, false);
  assert.match(reboot.message, /rebooting in 10 seconds \(simulated/);
  assert.equal(json(await call('GET', '/api/v1/updates/status')).needs_reboot, false);
  assert.match(json(await call('POST', '/api/v1/updates/shutdown')).message, /shutting down/);
  assert.deepEqual(t.app.context.platform.maintenance.powerRequests().map((r) => r.action), ['reboot', 'shutdown']);
  const history = json(await call('GET', '/api/v1/updates/history'));
  assert.deepEqual(history.map((h: { action: string }) => h.action), ['shutdown', 'reboot', 'install', 'check']);
});

test('maintenance window: defaults, validation, rendered cron line', async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/updates/schedule')), { enabled: false, day_of_week: 'sun', time: '03:00', auto_install: false, auto_reboot: false, auto_check: true, auto_update_appliance: false });
  assert.match(json(await call('PUT', '/api/v1/updates/schedule', { time: '25:00' })).error, /body\.time/);
  assert.match(json(await call('PUT', '/api/v1/updates/schedule', { day_of_week: 'sunday' })).error, /body\.day_of_week/);
  const saved = json(await call('PUT', '/api/v1/updates/schedule', { enabled: true, day_of_week: 'wed', time: '04:30', auto_install: true }));
  assert.equal(saved.day_of_week, 'wed');
  assert.match(readFileSync(join(t.dataDir, 'updates', 'maintenance.cron'), 'utf8'), /^30 4 \* \* 3 root bulwark-maintenance check install$/m);
});

test('appliance self-update: check a release feed through the outbound guard, verified install, restart, rollback', async () => {
  const tarball = gzipSync(Buffer.from('bulwark release payload'));
  const digest = createHash('sha256').update(tarball).digest('hex');
  let served = 0;
  const server: Server = createServer((request, response) => {
    served++;
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (request.url === '/latest') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({
        tag_name: 'v99.1.0', body: 'Fixes. [reboot-recommended]', published_at: '2026-11-01T00:00:00Z',
        assets: [{ name: 'bulwark-99.1.0.tar.gz', browser_download_url: `${base}/t.tar.gz` }, { name: 'bulwark-99.1.0.tar.gz.sha256', browser_download_url: `${base}/t.sha256` }],
      }));
    } else if (request.url === '/t.tar.gz') response.end(tarball);
    else if (request.url === '/t.sha256') response.end(`${digest}  bulwark-99.1.0.tar.gz\n`);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const initial = json(await call('GET', '/api/v1/updates/appliance/status'));
    assert.deepEqual([initial.current_version, initial.running_version, initial.latest_version, initial.has_backup], [BUILD.version, BUILD.version, '', false]);
    // Without the admin allow-list the loopback feed is refused by the outbound guard.
    await call('PUT', '/api/v1/settings/appliance_updates', { release_url: `http://127.0.0.1:${port}/latest`, allow_http: true });
    const refused = await call('POST', '/api/v1/updates/appliance/check');
    assert.equal(refused.statusCode, 400);
    assert.match(json(refused).error, /blocked address/);
    assert.equal(served, 0);
    await call('PUT', '/api/v1/settings/appliance_updates', { allow_private: '127.0.0.1/32' });
    const checked = json(await call('POST', '/api/v1/updates/appliance/check'));
    assert.deepEqual([checked.latest_version, checked.update_available, checked.reboot_recommended], ['99.1.0', true, true]);
    const installed = json(await call('POST', '/api/v1/updates/appliance/install'));
    assert.deepEqual([installed.restart_required, installed.reboot_recommended], [true, true]);
    const staged = json(await call('GET', '/api/v1/updates/appliance/status'));
    assert.deepEqual([staged.current_version, staged.running_version, staged.restart_pending, staged.backup_version], ['99.1.0', BUILD.version, true, BUILD.version]);
    assert.deepEqual(readFileSync(join(t.dataDir, 'appliance', 'releases', 'bulwark-99.1.0.tar')), tarball);
    assert.match(json(await call('POST', '/api/v1/updates/appliance/restart')).message, /restarting/);
    assert.equal(json(await call('GET', '/api/v1/updates/appliance/status')).restart_pending, false);
    assert.equal(json(await call('POST', '/api/v1/updates/appliance/install')).message, 'Already running the latest version');
    assert.equal(json(await call('POST', '/api/v1/updates/appliance/reboot')).executed, false);
    // A local tarball whose checksum does not match is refused; a matching one is staged.
    const local = gzipSync(Buffer.from('local build'));
    const mismatch = await call('POST', '/api/v1/updates/appliance/install-local', { filename: 'bulwark-99.2.0.tar.gz', content_base64: local.toString('base64'), sha256: digest });
    assert.equal(mismatch.statusCode, 400);
    assert.match(json(mismatch).error, /checksum mismatch/);
    assert.match(json(await call('POST', '/api/v1/updates/appliance/install-local', { filename: 'evil.sh', content_base64: 'AAAA' })).error, /body\.filename/);
    const localDigest = createHash('sha256').update(local).digest('hex');
    assert.equal(json(await call('POST', '/api/v1/updates/appliance/install-local', { filename: 'bulwark-99.2.0.tar.gz', content_base64: local.toString('base64'), sha256: `SHA256 (bulwark-99.2.0.tar.gz) = ${localDigest}` })).message, 'installed 99.2.0');
    const rolled = json(await call('POST', '/api/v1/updates/appliance/rollback'));
    assert.equal(rolled.restart_required, true);
    assert.equal(json(await call('GET', '/api/v1/updates/appliance/status')).current_version, '99.1.0');
    const history = json(await call('GET', '/api/v1/updates/history')).map((h: { action: string; status: string }) => `${h.action}:${h.status}`);
    assert.ok(history.includes('appliance_install:completed') && history.includes('install_local:failed') && history.includes('appliance_rollback:ok'));
  } finally {
    server.close();
  }
});

test('version and checksum helpers', () => {
  assert.ok(compareVersions('v1.10.0', '1.9.2') > 0);
  assert.ok(compareVersions('1.0.0-rc1', '1.0.0') < 0);
  assert.equal(compareVersions('2.0', '2.0.0'), 0);
  const hex = 'a'.repeat(64);
  assert.equal(checksumOf(`${hex}  file.tar.gz`), hex);
  assert.equal(checksumOf(`SHA256 (file.tar.gz) = ${hex.toUpperCase()}`), hex);
  assert.equal(checksumOf('nonsense'), null);
});
