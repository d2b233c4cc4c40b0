import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadStartupConfig, StartupError } from '../src/config.js';
import type { Area } from '../src/areas/area.js';
import { startTestApp } from './helpers/app.js';
import { freePort } from './helpers/free-port.js';

test('flags win over environment variables, which win over defaults', () => {
  const defaults = loadStartupConfig([], {});
  assert.equal(defaults.host, '0.0.0.0');
  assert.equal(defaults.port, 8080);
  assert.equal(defaults.platform, 'simulated');
  assert.equal(defaults.dataDir, resolve('./data'));
  assert.deepEqual(defaults.trustedProxies, []);
  const env = { BULWARK_LISTEN: '127.0.0.1:9000', BULWARK_PLATFORM: 'linux', BULWARK_TRUSTED_PROXIES: '10.0.0.1, 192.168.0.0/16', BULWARK_DATA_DIR: '/tmp/x' };
  const fromEnv = loadStartupConfig([], env);
  assert.equal(fromEnv.port, 9000);
  assert.equal(fromEnv.platform, 'linux');
  assert.deepEqual(fromEnv.trustedProxies, ['10.0.0.1', '192.168.0.0/16']);
  const fromFlags = loadStartupConfig(['--listen', '[::1]:18080', '--platform', 'freebsd', '--data-dir', '/tmp/y', '--log-level', 'warn'], env);
  assert.equal(fromFlags.host, '::1');
  assert.equal(fromFlags.port, 18080);
  assert.equal(fromFlags.platform, 'freebsd');
  assert.equal(fromFlags.dataDir, '/tmp/y');
  assert.equal(fromFlags.logLevel, 'warn');
});

test('bad startup options are refused with a clear message', () => {
  assert.throws(() => loadStartupConfig(['--listen', 'nope'], {}), StartupError);
  assert.throws(() => loadStartupConfig(['--platform', 'windows'], {}), /--platform must be one of/);
  assert.throws(() => loadStartupConfig(['--trusted-proxies', '10.0.0.1/33'], {}), /not an IP address or CIDR/);
  assert.throws(() => loadStartupConfig(['--log-level', 'loud'], {}), /--log-level/);
  assert.throws(() => loadStartupConfig(['--unknown'], {}));
  assert.throws(() => loadStartupConfig(['--drift-check-interval', '1m'], {}), /--drift-check-interval must be a whole number of seconds/);
  assert.throws(() => loadStartupConfig([], { BULWARK_DRIFT_CHECK_INTERVAL: '-5' }), /--drift-check-interval/);
});

test('the drift check runs every 60 s unless --drift-check-interval or BULWARK_DRIFT_CHECK_INTERVAL says otherwise (0: off)', () => {
  assert.equal(loadStartupConfig([], {}).driftCheckSeconds, 60);
  assert.equal(loadStartupConfig([], { BULWARK_DRIFT_CHECK_INTERVAL: '0' }).driftCheckSeconds, 0);
  assert.equal(loadStartupConfig(['--drift-check-interval', '15'], { BULWARK_DRIFT_CHECK_INTERVAL: '0' }).driftCheckSeconds, 15);
});

test('the HTTPS listener is off by default and set by --tls-listen or BULWARK_TLS_LISTEN (off: none)', () => {
  assert.equal(loadStartupConfig([], {}).tlsListen, null);
  assert.deepEqual(loadStartupConfig([], { BULWARK_TLS_LISTEN: '0.0.0.0:8443' }).tlsListen, { host: '0.0.0.0', port: 8443 });
  assert.deepEqual(loadStartupConfig(['--tls-listen', '[::1]:9443'], { BULWARK_TLS_LISTEN: '0.0.0.0:8443' }).tlsListen, { host: '::1', port: 9443 });
  assert.equal(loadStartupConfig([], { BULWARK_TLS_LISTEN: 'off' }).tlsListen, null);
  assert.throws(() => loadStartupConfig(['--tls-listen', '8443'], {}), /--tls-listen must be HOST:PORT/);
});

test('enrolment at start: --enrol and --enrol-token-file (or their variables) go together, https and an absolute path', () => {
  assert.equal(loadStartupConfig([], {}).fleetEnrol, null);
  assert.deepEqual(loadStartupConfig(['--enrol', 'https://controller.example:8443', '--enrol-token-file', '/etc/bulwark/enrol.token'], {}).fleetEnrol, { controllerUrl: 'https://controller.example:8443', tokenFile: '/etc/bulwark/enrol.token' });
  assert.deepEqual(loadStartupConfig([], { BULWARK_FLEET_ENROL_URL: 'https://10.0.0.5', BULWARK_FLEET_ENROL_TOKEN_FILE: '/run/token' }).fleetEnrol, { controllerUrl: 'https://10.0.0.5', tokenFile: '/run/token' });
  assert.throws(() => loadStartupConfig(['--enrol', 'https://controller.example'], {}), /--enrol and --enrol-token-file go together/);
  assert.throws(() => loadStartupConfig(['--enrol', 'http://controller.example', '--enrol-token-file', '/t'], {}), /--enrol must be https:\/\/host\[:port\]/);
  assert.throws(() => loadStartupConfig(['--enrol', 'https://user@controller.example', '--enrol-token-file', '/t'], {}), /--enrol must be/);
  assert.throws(() => loadStartupConfig(['--enrol', 'https://controller.example', '--enrol-token-file', 'token'], {}), /--enrol-token-file must be an absolute path/);
});

test('the real binary starts with --listen and --data-dir, logs its URL, and exits 0 on SIGTERM', { timeout: 180_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-start-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    // A deadline only: from TypeScript sources on a loaded machine the start can take most of a minute.
    const deadline = Date.now() + 120_000;
    while (!output.includes(`Bulwark listening on http://127.0.0.1:${port}`)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(existsSync(join(dataDir, 'bulwark.db')), 'database created on first start');
    assert.match(output, /No account exists yet: the first POST .*\/api\/v1\/auth\/register claims this appliance/, 'first boot is announced');
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    assert.equal(response.status, 200);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    // 0, not the 1 of the forced exit main.ts takes when shutting down outlasts 5 s: the shutdown was graceful.
    assert.equal(await exited, 0);
    t.diagnostic(`exited ${Date.now() - stoppedAt} ms after SIGTERM`);
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('closing the server finishes a request in flight before it stops', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const inHandler = new Promise<void>((r) => (arrived = r));
  const slow: Area = {
    name: 'slow',
    routes: [{ method: 'GET', path: '/api/v1/test/slow', access: 'public', summary: 'slow', handler: async () => { arrived(); await gate; return { done: true }; } }],
  };
  const t = await startTestApp({ areas: () => [slow] });
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const inFlight = fetch(`${address}/api/v1/test/slow`).then((r) => r.json());
  await inHandler;
  const closing = t.close();
  setTimeout(release, 200);
  assert.deepEqual(await inFlight, { done: true });
  await closing;
});
