/**
 * The daemons' runtime tree (src/platform/daemon-runtime.ts runtimeRoot): `--runtime-dir` or one tree per data
 * directory under /var/lib/bulwark-daemons; a folder a daemon user cannot traverse is reported in /status and
 * named (path and permission) by the 409 of an apply; an unsafe folder on the way stops the start. Loopback only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStartupConfig, StartupError } from '../../src/config.js';
import { DEFAULT_RUNTIME_BASE, runtimeRoot } from '../../src/platform/daemon-runtime.js';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { freePort } from '../helpers/free-port.js';
import { systemSkip } from '../helpers/system-skip.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));


test('--runtime-dir and BULWARK_RUNTIME_DIR set the tree; by default one tree per data directory under /var/lib/bulwark-daemons', () => {
  assert.equal(loadStartupConfig(['--runtime-dir', '/srv/rt'], {}).runtimeDir, '/srv/rt');
  assert.equal(loadStartupConfig([], { BULWARK_RUNTIME_DIR: '/srv/env' }).runtimeDir, '/srv/env');
  assert.equal(loadStartupConfig(['--runtime-dir', '/srv/flag'], { BULWARK_RUNTIME_DIR: '/srv/env' }).runtimeDir, '/srv/flag');
  assert.throws(() => loadStartupConfig(['--runtime-dir', 'relative/rt'], {}), (error: Error) => error instanceof StartupError && /--runtime-dir must be an absolute path/.test(error.message));
  const config = loadStartupConfig(['--data-dir', '/root/bulwark/data'], {});
  assert.equal(config.runtimeDir, null);
  const tree = runtimeRoot(config);
  assert.match(tree, new RegExp(`^${DEFAULT_RUNTIME_BASE}/[0-9a-f]{12}$`));
  assert.equal(runtimeRoot({ dataDir: '/root/bulwark/data' }), tree, 'the same data directory, the same tree');
  assert.notEqual(runtimeRoot({ dataDir: '/root/bulwark/other' }), tree, 'another data directory, another tree');
  assert.equal(runtimeRoot({ dataDir: '/root/bulwark/data', runtimeDir: '/srv/rt' }), '/srv/rt');
});

test('a runtime tree below a folder unbound cannot traverse: /status names it, the apply answers 409 with the path and the permission', { skip: systemSkip('running Unbound as its own user', { root: true, programs: ['unbound', 'unbound-checkconf', 'setpriv'], users: ['unbound'] }), timeout: 60_000 }, async () => {
  const parent = mkdtempSync(join(tmpdir(), 'bulwark-private-rt-'));
  const runtimeDir = join(parent, 'rt');
  const t = await startAreaApp({ config: { platform: 'linux', runtimeDir } });
  try {
    const status = json(await t.request('GET', '/api/v1/status'));
    assert.equal(status.runtime_access.root, runtimeDir);
    assert.deepEqual(status.runtime_access.problems.filter((p: { daemon: string }) => p.daemon === 'unbound'), [{ daemon: 'unbound', user: 'unbound', path: parent, missing: 'execute (traverse)' }]);
    assert.equal(status.status, 'degraded');

    const port = await freePort();
    const config = await t.request('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    assert.equal(config.statusCode, 200, config.body);
    const refused = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(refused.statusCode, 409, refused.body);
    assert.ok(json(refused).error.includes(`cannot use ${parent}: execute (traverse) permission missing`), refused.body);
    assert.doesNotMatch(refused.body, /checkconf|Permission denied/, 'no checker output reaches the client');

    // Made traversable: nothing left to report, and the same apply goes through.
    chmodSync(parent, 0o711);
    const after = json(await t.request('GET', '/api/v1/status'));
    assert.deepEqual(after.runtime_access.problems, []);
    const applied = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 200, applied.body);
    assert.equal(json(applied).config_file, join(runtimeDir, 'unbound', 'unbound.conf'));
  } finally {
    await t.close();
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a group- or world-writable folder on the way to the runtime tree stops the start with the folder named', { skip: systemSkip('creating the runtime tree', { root: true }), timeout: 60_000 }, () => {
  const parent = mkdtempSync(join(tmpdir(), 'bulwark-open-rt-'));
  const open = join(parent, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  try {
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), '--platform', 'linux', '--listen', '127.0.0.1:0', '--data-dir', join(parent, 'data'), '--runtime-dir', join(open, 'rt')], { cwd: ROOT, encoding: 'utf8', timeout: 50_000 });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, new RegExp(`${open} is group- or world-writable \\(mode 777\\)`));
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
