import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { BUILD } from '../../src/core/build-info.js';
import { checksumOf, compareVersions } from '../../src/areas/updates/appliance.js';
import { signRelease } from '../../src/areas/updates/release-signature.js';
import { takeOutcome } from '../../src/areas/updates/activation-files.js';

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

test("maintenance window: defaults, validation, armed in Bulwark's own scheduler (no cron file)", async () => {
  assert.deepEqual(json(await call('GET', '/api/v1/updates/schedule')), { enabled: false, day_of_week: 'sun', time: '03:00', auto_install: false, auto_reboot: false, auto_check: true, auto_update_appliance: false });
  assert.match(json(await call('PUT', '/api/v1/updates/schedule', { time: '25:00' })).error, /body\.time/);
  assert.match(json(await call('PUT', '/api/v1/updates/schedule', { day_of_week: 'sunday' })).error, /body\.day_of_week/);
  const saved = json(await call('PUT', '/api/v1/updates/schedule', { enabled: true, day_of_week: 'wed', time: '04:30', auto_install: true }));
  assert.equal(saved.day_of_week, 'wed');
  const next = new Date(json(await call('GET', '/api/v1/updates/status')).maintenance_next_run);
  assert.deepEqual([next.getDay(), next.getHours(), next.getMinutes()], [3, 4, 30]);
  assert.equal(existsSync(join(t.dataDir, 'updates', 'maintenance.cron')), false);
  // The simulated window: check and install, recorded.
  const ran = json(await call('POST', '/api/v1/updates/schedule/run'));
  assert.deepEqual(ran.steps, ['check', 'install']);
  assert.equal(json(await call('GET', '/api/v1/updates/history'))[0].action, 'maintenance');
});

test('appliance self-update from the feed: the signature asset is verified before anything changes; a development tree cannot switch', async () => {
  const tarball = gzipSync(Buffer.from('bulwark release payload'));
  const stranger = generateKeyPairSync('ed25519');
  const trusted = generateKeyPairSync('ed25519');
  let signature = signRelease(tarball, stranger.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  let withSignature = true;
  const server: Server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (request.url === '/latest') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({
        tag_name: 'v99.1.0', body: 'Fixes. [reboot-recommended]', published_at: '2026-11-01T00:00:00Z',
        assets: [{ name: 'bulwark-99.1.0.tar.gz', browser_download_url: `${base}/t.tar.gz` }, ...(withSignature ? [{ name: 'bulwark-99.1.0.tar.gz.sig', browser_download_url: `${base}/t.sig` }] : [])],
      }));
    } else if (request.url === '/t.tar.gz') response.end(tarball);
    else if (request.url === '/t.sig') response.end(signature);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  // An install root laid out as the installer leaves it, with one release; nothing supervises this app.
  const root = mkdtempSync(join(tmpdir(), 'bulwark-root-'));
  mkdirSync(join(root, 'opt/bulwark/releases/1.0.0/dist'), { recursive: true });
  writeFileSync(join(root, 'opt/bulwark/releases/1.0.0/dist/main.js'), '');
  symlinkSync('releases/1.0.0', join(root, 'opt/bulwark/current'));
  mkdirSync(join(root, 'etc/bulwark/trusted-keys'), { recursive: true });
  writeFileSync(join(root, 'etc/bulwark/trusted-keys/ours.pem'), trusted.publicKey.export({ type: 'spki', format: 'pem' }));
  const app = await startAreaApp({ config: { installRoot: root } });
  const send: AreaApp['request'] = (method, url, payload) => app.request(method, url, payload);
  const unchanged = () => {
    assert.deepEqual(readdirSync(join(root, 'opt/bulwark/releases')), ['1.0.0']);
    assert.equal(readlinkSync(join(root, 'opt/bulwark/current')), 'releases/1.0.0');
  };
  try {
    const initial = json(await send('GET', '/api/v1/updates/appliance/status'));
    assert.deepEqual([initial.current_version, initial.running_version, initial.installed, initial.releases, initial.service_manager, initial.signer_key_id], ['1.0.0', BUILD.version, true, ['1.0.0'], 'none', null]);
    // Without the admin allow-list the loopback feed is refused by the outbound guard.
    await send('PUT', '/api/v1/settings/appliance_updates', { release_url: `http://127.0.0.1:${port}/latest`, allow_http: true });
    const refused = await send('POST', '/api/v1/updates/appliance/check');
    assert.equal(refused.statusCode, 400);
    assert.match(json(refused).error, /blocked address/);
    await send('PUT', '/api/v1/settings/appliance_updates', { allow_private: '127.0.0.1/32' });
    const checked = json(await send('POST', '/api/v1/updates/appliance/check'));
    assert.deepEqual([checked.latest_version, checked.update_available, checked.reboot_recommended], ['99.1.0', true, true]);
    assert.match(checked.signature_url, /\/t\.sig$/);
    const unknown = await send('POST', '/api/v1/updates/appliance/install');
    assert.equal(unknown.statusCode, 409);
    assert.match(json(unknown).error, /^unknown key/);
    unchanged();
    signature = signRelease(tarball, trusted.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const noManager = await send('POST', '/api/v1/updates/appliance/install');
    assert.equal(noManager.statusCode, 409);
    assert.match(json(noManager).error, /nothing can restart Bulwark/);
    unchanged();
    withSignature = false;
    await send('POST', '/api/v1/updates/appliance/check');
    const missing = await send('POST', '/api/v1/updates/appliance/install');
    assert.equal(missing.statusCode, 400);
    assert.match(json(missing).error, /^missing signature/);
    unchanged();
    // install-local: the same checks; a checksum that does not match is refused too.
    const local = await send('POST', '/api/v1/updates/appliance/install-local', { filename: 'bulwark-99.2.0.tar.gz', content_base64: tarball.toString('base64'), sha256: createHash('sha256').update('other').digest('hex') });
    assert.equal(local.statusCode, 400);
    assert.match(json(local).error, /checksum mismatch/);
    assert.match(json(await send('POST', '/api/v1/updates/appliance/install-local', { filename: 'evil.sh', content_base64: 'AAAA' })).error, /body\.filename/);
    assert.equal((await send('POST', '/api/v1/updates/appliance/restart')).statusCode, 409);
    assert.equal((await send('POST', '/api/v1/updates/appliance/rollback')).statusCode, 409);
    const history = json(await send('GET', '/api/v1/updates/history')).map((h: { action: string; status: string }) => `${h.action}:${h.status}`);
    assert.ok(history.includes('appliance_install:refused') && history.includes('install_local:refused'), history.join(' '));
    // A development tree (no /opt/bulwark/current) says so and switches nothing.
    const dev = json(await call('GET', '/api/v1/updates/appliance/status'));
    assert.deepEqual([dev.installed, dev.current_version], [false, BUILD.version]);
    assert.match(json(await call('POST', '/api/v1/updates/appliance/restart')).error, /not installed/);
  } finally {
    server.close();
    await app.close();
    rmSync(root, { recursive: true, force: true });
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

test('the activation outcome is recorded once by the release it left serving: history and an event on the hub', async () => {
  const events: unknown[] = [];
  t.app.context.events.on('updates.appliance.activation', (event) => events.push(event.payload));
  const outcome = { mode: 'install', target: '99.0.0', previous: BUILD.version, outcome: 'rolled_back', reason: `99.0.0 did not answer ready within 45 s; ${BUILD.version} was restored`, key_id: 'abcdef0123456789', started_at: '2026-11-28T09:00:00Z', timings_ms: { verify: 3, waited: 45000 } };
  mkdirSync(join(t.dataDir, 'appliance'), { recursive: true });
  // Meant for another version (the one rolled back to): left for it.
  writeFileSync(join(t.dataDir, 'appliance', 'outcome.json'), JSON.stringify(outcome));
  assert.equal(takeOutcome(t.dataDir, '0.0.1'), null);
  assert.equal(existsSync(join(t.dataDir, 'appliance', 'outcome.json')), true);
  writeFileSync(join(t.dataDir, 'appliance', 'outcome.json'), JSON.stringify(outcome));
  const deadline = Date.now() + 10_000;
  while (events.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(events, [outcome]);
  assert.equal(existsSync(join(t.dataDir, 'appliance', 'outcome.json')), false);
  const entry = json(await call('GET', '/api/v1/updates/history'))[0];
  assert.deepEqual([entry.action, entry.status], ['appliance_install', 'rolled_back']);
  assert.match(entry.details, /did not answer ready .* \(verify 3 ms, waited 45000 ms\)/);
});
