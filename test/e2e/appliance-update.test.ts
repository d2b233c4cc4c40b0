/**
 * Signed self-update with automatic rollback (issue 38 items 1-2), on an appliance laid out by
 * install/bulwark-install.sh --root in a throw-away root and run by install/bulwark-supervise.sh (systemd is not PID
 * 1 here). Every release is the real server, compiled from this tree once (tsc) and copied with its own
 * package.json version; its node_modules is a link to this repository's (a test shortcut: a real release carries its
 * production node_modules, `npm run release`). The broken release's dist/main.js exits at once.
 *
 * Through the API of the running appliance: a tampered archive, an unknown key and a missing signature are refused
 * with nothing changed; a release signed by a key made here installs, the restarted server reports the new version
 * and its signer; a release that cannot start is rolled back automatically and the old version serves again;
 * rollback to the first release works. The timings each activation recorded are printed (docs/updates.md figures).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT } from '../helpers/netns-lab.js';
import { ADMIN } from '../helpers/auth.js';
import { keyIdOf, signRelease } from '../../src/areas/updates/release-signature.js';

const work = mkdtempSync(join(tmpdir(), 'bulwark-update-'));
const root = join(work, 'root');
const build = join(work, 'build');
const dataDir = join(root, 'var/lib/bulwark');
const trusted = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const trustedPem = trusted.privateKey.export({ type: 'pkcs8', format: 'pem' });
let base = '';
let headers: Record<string, string> = {};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}${path}`, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls until `check` answers something, or fails after `seconds` (the API restarts in between). */
async function until<T>(what: string, seconds: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(250);
  }
  throw new Error(`${what}: not within ${seconds} s (${String(last ?? '')}); supervisor log:\n${readFileSync(join(work, 'supervisor.log'), 'utf8').slice(-3000)}`);
}

/**
 * A source tree as a build leaves it, at `version`; `broken`: its server changes the database (as a failed
 * migration would) and exits.
 */
function sourceTree(version: string, broken = false): string {
  const dir = join(work, `source-${version}`);
  cpSync(build, join(dir, 'dist'), { recursive: true });
  if (broken) {
    writeFileSync(join(dir, 'dist/main.js'), [
      "import Database from 'better-sqlite3';",
      "const db = new Database(`${process.env.BULWARK_DATA_DIR}/bulwark.db`);",
      "db.exec('CREATE TABLE IF NOT EXISTS half_migrated (x)');",
      'db.close();',
      "process.stderr.write('this release cannot start\\n');",
      'process.exit(1);', '',
    ].join('\n'));
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, version, type: pkg.type, dependencies: {} }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** The release archive of a tree (what `npm run release` packs): its files at the top. */
function archiveOf(tree: string): Buffer {
  const file = join(work, `${Math.random().toString(36).slice(2)}.tar.gz`);
  const tar = spawnSync('tar', ['-czf', file, '-C', tree, '.'], { encoding: 'utf8' });
  assert.equal(tar.status, 0, tar.stderr);
  return readFileSync(file);
}

function installLocal(version: string, archive: Buffer, signature?: string) {
  return call('POST', '/api/v1/updates/appliance/install-local', { filename: `bulwark-${version}.tar.gz`, content_base64: archive.toString('base64'), ...(signature === undefined ? {} : { signature }) });
}

const running = async () => (await call('GET', '/api/v1/updates/appliance/status')).body;
const layoutNow = () => ({ current: readlinkSync(join(root, 'opt/bulwark/current')), releases: readdirSync(join(root, 'opt/bulwark/releases')).sort() });

before(async () => {
  mkdirSync(root, { recursive: true });
  const tsc = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(ROOT, 'tsconfig.build.json'), '--outDir', build], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(tsc.status, 0, `${tsc.stdout}${tsc.stderr}`);
  // The first release, installed by the installer from a tree with a small node_modules (it prunes it), then
  // pointed at this repository's dependencies.
  const first = join(work, 'source-1.0.0');
  mkdirSync(join(first, 'node_modules/prod-dep'), { recursive: true });
  writeFileSync(join(first, 'node_modules/prod-dep/package.json'), JSON.stringify({ name: 'prod-dep', version: '1.0.0' }));
  cpSync(build, join(first, 'dist'), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(first, 'package.json'), JSON.stringify({ name: pkg.name, version: '1.0.0', type: pkg.type, dependencies: { 'prod-dep': '1.0.0' } }));
  cpSync(join(ROOT, 'install'), join(first, 'install'), { recursive: true });
  // The unit's Node inside the root (the unit is not run here: the supervisor runs this process's node).
  mkdirSync(join(root, 'usr/bin'), { recursive: true });
  writeFileSync(join(root, 'usr/bin/node'), '#!/bin/sh\n', { mode: 0o755 });
  const installed = spawnSync('bash', [join(ROOT, 'install/bulwark-install.sh'), '--root', root, '--from', first, '--no-build', '--node', '/usr/bin/node'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(installed.status, 0, `${installed.stdout}${installed.stderr}`);
  const release = join(root, 'opt/bulwark/releases/1.0.0');
  rmSync(join(release, 'node_modules'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(release, 'node_modules'));
  writeFileSync(join(root, 'etc/bulwark/trusted-keys/release-test.pub'), trusted.publicKey.export({ type: 'spki', format: 'pem' }));

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  writeFileSync(join(root, 'etc/bulwark/bulwark.env'), [
    `BULWARK_DATA_DIR=${dataDir}`, `BULWARK_RUNTIME_DIR=${join(root, 'var/lib/bulwark-daemons')}`, 'BULWARK_PLATFORM=simulated',
    `BULWARK_LISTEN=127.0.0.1:${port}`, 'BULWARK_LOG_LEVEL=warn', 'BULWARK_UPDATE_READY_TIMEOUT=45', '',
  ].join('\n'));
  const log = openSync(join(work, 'supervisor.log'), 'a');
  spawn('sh', [join(root, 'opt/bulwark/current/install/bulwark-supervise.sh'), '--root', root, '--node', process.execPath], { detached: true, stdio: ['ignore', log, log] }).unref();
  closeSync(log);
  await until('the first release answers', 90, async () => ((await fetch(`${base}/api/v1/status`)).status === 401 ? true : undefined));
  await call('POST', '/api/v1/auth/register', ADMIN);
  const login = await call('POST', '/api/v1/auth/login', ADMIN);
  headers = { authorization: `Bearer ${login.body.access_token as string}` };
  const key = await call('POST', '/api/v1/auth/api-keys', { name: 'updates', permissions: ['updates:read', 'updates:install'] });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  headers = { authorization: `ApiKey ${key.body.key as string}` };
});

after(() => {
  try {
    process.kill(Number(readFileSync(join(root, 'run/bulwark/supervisor.pid'), 'utf8')), 'SIGTERM');
  } catch {
    // not running
  }
  const deadline = Date.now() + 10_000;
  while (existsSync(join(root, 'run/bulwark/supervisor.pid')) && Date.now() < deadline) spawnSync('sleep', ['0.2']);
  rmSync(work, { recursive: true, force: true });
});

test('a tampered archive, an unknown key and a missing signature are refused, each named, and nothing changes', async () => {
  const status = await running();
  assert.deepEqual([status.running_version, status.current_version, status.installed, status.service_manager], ['1.0.0', '1.0.0', true, 'bulwark-supervise.sh']);
  const before = layoutNow();
  const archive = archiveOf(sourceTree('1.5.0'));
  const missing = await installLocal('1.5.0', archive);
  assert.equal(missing.status, 400);
  assert.match(missing.body.error, /^missing signature/);
  const unknown = await installLocal('1.5.0', archive, signRelease(archive, stranger.privateKey.export({ type: 'pkcs8', format: 'pem' })));
  assert.equal(unknown.status, 409);
  assert.match(unknown.body.error, new RegExp(`^unknown key: .*${keyIdOf(stranger.publicKey)}`));
  const signature = signRelease(archive, trustedPem);
  const tampered = Buffer.from(archive);
  tampered[tampered.length - 20] ^= 0x01;
  const bad = await installLocal('1.5.0', tampered, signature);
  assert.equal(bad.status, 400);
  assert.match(bad.body.error, /^bad signature/);
  assert.deepEqual(layoutNow(), before);
  assert.equal(existsSync(join(dataDir, 'appliance/snapshots')), false, 'no database snapshot was taken');
  assert.equal((await running()).running_version, '1.0.0');
  const history = (await call('GET', '/api/v1/updates/history')).body.slice(0, 3).map((h: { action: string; status: string }) => `${h.action}:${h.status}`);
  assert.deepEqual(history, ['install_local:refused', 'install_local:refused', 'install_local:refused']);
});

test('a signed release installs: unpacked beside, switched, restarted, the new version answers with its signer', async (t) => {
  const archive = archiveOf(sourceTree('2.0.0'));
  const started = await installLocal('2.0.0', archive, signRelease(archive, trustedPem));
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.equal(started.body.signer_key_id, keyIdOf(trusted.publicKey));
  const status = await until('2.0.0 serves', 120, async () => {
    const now = await running();
    return now.running_version === '2.0.0' && now.last_activation?.target === '2.0.0' ? now : undefined;
  });
  assert.deepEqual([status.current_version, status.signer_key_id, status.last_activation.outcome], ['2.0.0', keyIdOf(trusted.publicKey), 'activated']);
  assert.deepEqual(status.releases, ['1.0.0', '2.0.0']);
  assert.equal(readlinkSync(join(root, 'opt/bulwark/current')), 'releases/2.0.0');
  assert.equal(readdirSync(join(dataDir, 'appliance/snapshots')).length, 1);
  t.diagnostic(`update timings (ms): ${JSON.stringify(status.last_activation.timings_ms)}`);
  const history = await until('the activation is recorded', 20, async () => {
    const entries = (await call('GET', '/api/v1/updates/history')).body as { action: string; status: string }[];
    return entries.find((h) => h.action === 'appliance_install' && h.status === 'activated');
  });
  assert.ok(history);
});

test('a release whose server cannot start is rolled back automatically: the old version and its database serve again', async (t) => {
  const archive = archiveOf(sourceTree('3.0.0', true));
  const started = await installLocal('3.0.0', archive, signRelease(archive, trustedPem));
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const status = await until('the rollback to 2.0.0', 180, async () => {
    const now = await running();
    return now.last_activation?.target === '3.0.0' ? now : undefined;
  });
  assert.equal(status.last_activation.outcome, 'rolled_back', JSON.stringify(status.last_activation));
  assert.match(status.last_activation.reason, /3\.0\.0 did not answer ready within 45 s; 2\.0\.0 was restored with the database snapshot/);
  assert.deepEqual([status.running_version, status.current_version], ['2.0.0', '2.0.0']);
  assert.equal(readlinkSync(join(root, 'opt/bulwark/current')), 'releases/2.0.0');
  // The broken release had changed the database; the snapshot taken before the switch is back.
  assert.match(readFileSync(join(work, 'supervisor.log'), 'utf8'), /database restored from .*snapshots\/before-3\.0\.0-/);
  const db = new Database(join(dataDir, 'bulwark.db'), { readonly: true });
  try {
    assert.equal(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half_migrated'").get(), undefined);
  } finally {
    db.close();
  }
  t.diagnostic(`rollback timings (ms): ${JSON.stringify(status.last_activation.timings_ms)}`);
  const history = (await call('GET', '/api/v1/updates/history')).body as { action: string; status: string; details: string }[];
  assert.ok(history.some((h) => h.action === 'appliance_install' && h.status === 'rolled_back' && /did not answer ready/.test(h.details)), JSON.stringify(history.slice(0, 5)));
});

test('rollback returns to the first installed release', async (t) => {
  const listed = await running();
  assert.ok(listed.releases.includes('1.0.0'));
  const answer = await call('POST', '/api/v1/updates/appliance/rollback', { version: '1.0.0' });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const status = await until('1.0.0 serves', 120, async () => {
    const now = await running();
    return now.running_version === '1.0.0' && now.last_activation?.mode === 'rollback' ? now : undefined;
  });
  assert.deepEqual([status.current_version, status.last_activation.outcome], ['1.0.0', 'activated']);
  // Pruned after the switch (--keep-releases 2): the release returned to and the one left stay; the failed 3.0.0 goes.
  assert.deepEqual(layoutNow().releases, ['1.0.0', '2.0.0'], status.last_activation.reason);
  assert.match(status.last_activation.reason, /older releases removed: 3\.0\.0/);
  t.diagnostic(`rollback (API) timings (ms): ${JSON.stringify(status.last_activation.timings_ms)}`);
  const unknown = await call('POST', '/api/v1/updates/appliance/rollback', { version: '9.9.9' });
  assert.equal(unknown.status, 404);
});

test('restart really restarts: a new API process of the same release answers, and the restart is recorded', async () => {
  const before = JSON.parse(readFileSync(join(dataDir, 'appliance/ready.json'), 'utf8')) as { pid: number; version: string };
  const answer = await call('POST', '/api/v1/updates/appliance/restart');
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.match(answer.body.message, /bulwark-supervise\.sh/);
  const status = await until('the restarted API answers', 120, async () => {
    const now = await running();
    return now.last_activation?.mode === 'restart' ? now : undefined;
  });
  assert.deepEqual([status.last_activation.outcome, status.running_version], ['activated', before.version]);
  const after = JSON.parse(readFileSync(join(dataDir, 'appliance/ready.json'), 'utf8')) as { pid: number };
  assert.notEqual(after.pid, before.pid);
  assert.throws(() => process.kill(before.pid, 0), 'the previous API process is gone');
});
