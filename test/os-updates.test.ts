/**
 * OS updates through apt, for real but never on the machine's own packages (issue 38 item 3): the test builds
 * packages with dpkg-deb, a local apt repository (a `file:` source with a Packages index written here) and a
 * throw-away root with its own dpkg database, and points the Linux maintenance at that root (BULWARK_APT_ROOT /
 * --apt-root: apt's -o Dir=… options, dpkg --root). Check lists the upgradable packages by simulation, the preview
 * changes nothing, install upgrades, reboot_required comes from the root's /var/run/reboot-required, and the
 * maintenance window's executor (Bulwark's own scheduler) runs check and install.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { systemSkip } from './helpers/system-skip.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import { createLinuxMaintenance } from '../src/platform/linux/maintenance.js';
import { loadStartupConfig } from '../src/config.js';

const skip = systemSkip('apt in a throw-away root', { root: true, programs: ['apt-get', 'dpkg', 'dpkg-deb'] });
const work = mkdtempSync(join(tmpdir(), 'bulwark-apt-'));
const root = join(work, 'root');
const repo = join(work, 'repo');
let t: AreaApp;

function run(program: string, args: string[]): string {
  const result = spawnSync(program, args, { encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `${program} ${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** A package `name` at `version` holding /usr/share/doc/<name>/version. */
function buildPackage(name: string, version: string): string {
  const tree = join(work, `tree-${name}-${version}`);
  mkdirSync(join(tree, 'DEBIAN'), { recursive: true });
  mkdirSync(join(tree, 'usr/share/doc', name), { recursive: true });
  writeFileSync(join(tree, 'DEBIAN/control'), `Package: ${name}\nVersion: ${version}\nArchitecture: all\nMaintainer: Bulwark tests <tests@example.invalid>\nDescription: a package of the OS-update test\n`);
  writeFileSync(join(tree, 'usr/share/doc', name, 'version'), `${version}\n`);
  const deb = join(work, `${name}_${version}_all.deb`);
  run('dpkg-deb', ['--build', '--root-owner-group', tree, deb]);
  return deb;
}

/** The repository's Packages index for the given .deb files (what dpkg-scanpackages writes). */
function publish(debs: string[]): void {
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo);
  const stanzas = debs.map((deb) => {
    const name = deb.split('/').pop()!;
    writeFileSync(join(repo, name), readFileSync(deb));
    const control = run('dpkg-deb', ['--field', deb]).trimEnd();
    return `${control}\nFilename: ./${name}\nSize: ${statSync(deb).size}\nSHA256: ${createHash('sha256').update(readFileSync(deb)).digest('hex')}\n`;
  });
  writeFileSync(join(repo, 'Packages'), `${stanzas.join('\n')}`);
}

const installedVersion = (name: string) => readFileSync(join(root, 'usr/share/doc', name, 'version'), 'utf8').trim();
const call: AreaApp['request'] = (method, url, payload) => t.request(method, url, payload);

before(async () => {
  if (skip) return;
  for (const dir of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/lib/apt/lists/partial', 'var/cache/apt/archives/partial', 'etc/apt/sources.list.d', 'etc/apt/preferences.d', 'etc/apt/apt.conf.d', 'var/log/apt', 'var/run']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'var/lib/dpkg/status'), '');
  run('dpkg', ['--root', root, '--force-not-root', '--force-script-chrootless', '--install', buildPackage('bulwark-test-a', '1.0'), buildPackage('bulwark-test-b', '1.0')]);
  publish([buildPackage('bulwark-test-a', '2.0'), join(work, 'bulwark-test-b_1.0_all.deb')]);
  writeFileSync(join(root, 'etc/apt/sources.list'), `deb [trusted=yes] file:${repo} ./\n`);
  const platform = { ...createSimulatedPlatform(), simulated: false, maintenance: createLinuxMaintenance(root) };
  t = await startAreaApp({ platform });
});
after(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

test('the apt root is a startup option (--apt-root / BULWARK_APT_ROOT), / by default', () => {
  assert.equal(loadStartupConfig([], {}).aptRoot, '/');
  assert.equal(loadStartupConfig([], { BULWARK_APT_ROOT: '/srv/x' }).aptRoot, '/srv/x');
  assert.equal(loadStartupConfig(['--apt-root', '/srv/y'], { BULWARK_APT_ROOT: '/srv/x' }).aptRoot, '/srv/y');
});

test('check lists the upgradable packages by simulation; the preview changes nothing; install upgrades; reboot_required from the root', { skip }, async () => {
  assert.equal(json(await call('GET', '/api/v1/updates/status')).pending_pkg_count, 0, 'nothing is known before the index is fetched');
  const checked = json(await call('POST', '/api/v1/updates/check'));
  assert.deepEqual(checked.pending_packages, ['bulwark-test-a 2.0']);
  assert.equal(checked.needs_reboot, false);
  const statusBefore = readFileSync(join(root, 'var/lib/dpkg/status'), 'utf8');
  const preview = json(await call('GET', '/api/v1/updates/preview'));
  assert.deepEqual(preview.changes, [{ action: 'upgrade', name: 'bulwark-test-a', from: '1.0', to: '2.0' }]);
  assert.equal(readFileSync(join(root, 'var/lib/dpkg/status'), 'utf8'), statusBefore, 'the preview changed the dpkg database');
  assert.equal(installedVersion('bulwark-test-a'), '1.0');

  const installed = json(await call('POST', '/api/v1/updates/install'));
  assert.deepEqual(installed.installed, ['bulwark-test-a 2.0'], JSON.stringify(installed));
  assert.equal(installedVersion('bulwark-test-a'), '2.0');
  assert.equal(installedVersion('bulwark-test-b'), '1.0');
  assert.equal(json(await call('GET', '/api/v1/updates/status')).pending_pkg_count, 0);
  // The machine's own dpkg never heard of it.
  assert.notEqual(spawnSync('dpkg-query', ['--show', 'bulwark-test-a']).status, 0);

  writeFileSync(join(root, 'var/run/reboot-required'), '*** System restart required ***\n');
  assert.equal(json(await call('GET', '/api/v1/updates/status')).needs_reboot, true);
  rmSync(join(root, 'var/run/reboot-required'));
});

test("the maintenance window is run by Bulwark's own scheduler: armed from the schedule, its steps check and install", { skip }, async () => {
  publish([buildPackage('bulwark-test-a', '3.0'), join(work, 'bulwark-test-b_1.0_all.deb')]);
  assert.equal(json(await call('GET', '/api/v1/updates/status')).maintenance_next_run, null);
  const saved = await call('PUT', '/api/v1/updates/schedule', { enabled: true, day_of_week: 'wed', time: '04:30', auto_check: true, auto_install: true });
  assert.equal(saved.statusCode, 200, saved.body);
  const next = new Date(json(await call('GET', '/api/v1/updates/status')).maintenance_next_run);
  assert.deepEqual([next.getDay(), next.getHours(), next.getMinutes()], [3, 4, 30]);
  assert.ok(next.getTime() > Date.now());
  const ran = json(await call('POST', '/api/v1/updates/schedule/run'));
  assert.deepEqual(ran.steps, ['check', 'install']);
  assert.match(ran.message, /check: 1 updates available; install: 1 packages updated/);
  assert.equal(installedVersion('bulwark-test-a'), '3.0');
  const history = json(await call('GET', '/api/v1/updates/history'));
  assert.equal(`${history[0].action}:${history[0].status}`, 'maintenance:completed');
  await call('PUT', '/api/v1/updates/schedule', { enabled: false });
  assert.equal(json(await call('GET', '/api/v1/updates/status')).maintenance_next_run, null);
});
