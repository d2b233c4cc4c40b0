/**
 * The installer (install/bulwark-install.sh) into a temporary root (`--root DIR`): the release, configuration, data
 * and runtime directories with their modes, the environment file, the systemd units (checked by
 * `systemd-analyze verify --root`), Debian's competing units masked; uninstall removes exactly what install added.
 * The release comes from a small source tree made here (dist/main.js, a production and a development
 * dependency), so the test runs the installer's own code path, npm prune included, in about a second.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers/netns-lab.js';
import { systemSkip } from './helpers/system-skip.js';

const INSTALLER = join(ROOT, 'install/bulwark-install.sh');
const SYSTEM_UNITS = '/usr/lib/systemd/system';

/** systemd-analyze (Debian's `systemd` package; this machine's PID 1 is not systemd, the tool still checks units). */
const verifySkip = systemSkip('verifying the units (apt-get install systemd)', { programs: ['systemd-analyze'], also: [[`${SYSTEM_UNITS} (Debian's systemd unit directory)`, existsSync(SYSTEM_UNITS)]] });

const work = mkdtempSync(join(tmpdir(), 'bulwark-install-'));
const source = join(work, 'source');
const root = join(work, 'root');
let before_: string[] = [];

function installer(...args: string[]): { code: number | null; out: string } {
  const result = spawnSync('bash', [INSTALLER, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}
const ok = (...args: string[]) => {
  const result = installer(...args);
  assert.equal(result.code, 0, result.out);
  return result.out;
};

/** Every entry under the root, sorted: mode, type, path, and a symlink's target or a file's digest. */
function listing(dir = root, prefix = ''): string[] {
  const lines: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const shown = `${prefix}/${name}`;
    const stat = lstatSync(path);
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isSymbolicLink()) lines.push(`link ${shown} -> ${readlinkSync(path)}`);
    else if (stat.isDirectory()) lines.push(`dir ${mode} ${shown}`, ...listing(path, shown));
    else lines.push(`file ${mode} ${shown} ${createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16)}`);
  }
  return lines;
}
const at = (path: string) => join(root, path);
const modeOf = (path: string) => (lstatSync(at(path)).mode & 0o777).toString(8);

before(() => {
  // A source tree as a build leaves it.
  mkdirSync(join(source, 'dist/console'), { recursive: true });
  writeFileSync(join(source, 'dist/main.js'), 'console.log("bulwark");\n');
  writeFileSync(join(source, 'dist/console/index.html'), '<!doctype html>\n');
  writeFileSync(join(source, 'package.json'), JSON.stringify({ name: 'bulwark', version: '9.8.7', dependencies: { 'prod-dep': '1.0.0' }, devDependencies: { 'dev-dep': '1.0.0' } }));
  for (const dep of ['prod-dep', 'dev-dep']) {
    mkdirSync(join(source, 'node_modules', dep), { recursive: true });
    writeFileSync(join(source, 'node_modules', dep, 'package.json'), JSON.stringify({ name: dep, version: '1.0.0' }));
  }
  cpSync(join(ROOT, 'install'), join(source, 'install'), { recursive: true });
  mkdirSync(join(source, 'docs'));
  cpSync(join(ROOT, 'docs/appliance.md'), join(source, 'docs/appliance.md'));

  // A root as a Debian system has it: node, systemd's own units, one unit the administrator masked, one local unit.
  mkdirSync(at('usr/bin'), { recursive: true });
  writeFileSync(at('usr/bin/node'), '#!/bin/sh\n');
  chmodSync(at('usr/bin/node'), 0o755);
  if (existsSync(SYSTEM_UNITS)) cpSync(SYSTEM_UNITS, at('usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
  mkdirSync(at('etc/systemd/system'), { recursive: true });
  symlinkSync('/dev/null', at('etc/systemd/system/chrony.service'));
  writeFileSync(at('etc/systemd/system/caddy.service'), '[Service]\nExecStart=/usr/bin/caddy run\n');
  before_ = listing();
});
after(() => rmSync(work, { recursive: true, force: true }));

test('install --root lays out the release, the configuration, the data and the runtime tree with their modes', () => {
  const out = ok('install', '--root', root, '--from', source, '--no-build', '--node', '/usr/bin/node');
  assert.match(out, /installed release 9\.8\.7/);
  assert.equal(readlinkSync(at('opt/bulwark/current')), 'releases/9.8.7');
  const release = 'opt/bulwark/releases/9.8.7';
  for (const path of ['dist/main.js', 'dist/console/index.html', 'package.json', 'node_modules/prod-dep/package.json', 'install/bulwark-boot.sh', 'docs/appliance.md']) {
    assert.ok(existsSync(at(`${release}/${path}`)), `${release}/${path} installed`);
  }
  assert.equal(existsSync(at(`${release}/node_modules/dev-dep`)), false, 'development dependencies pruned');
  assert.equal(modeOf(`${release}/install/bulwark-boot.sh`), '755');
  assert.equal(modeOf('var/lib/bulwark'), '700');
  assert.equal(modeOf('var/lib/bulwark-daemons'), '755', 'the daemons\' users traverse their runtime tree');
  assert.equal(modeOf('etc/bulwark/bulwark.env'), '640');
  const env = readFileSync(at('etc/bulwark/bulwark.env'), 'utf8');
  for (const line of ['BULWARK_DATA_DIR=/var/lib/bulwark', 'BULWARK_RUNTIME_DIR=/var/lib/bulwark-daemons', 'BULWARK_PLATFORM=linux', 'BULWARK_LISTEN=0.0.0.0:8080', 'BULWARK_TLS_LISTEN=0.0.0.0:8443']) {
    assert.ok(env.split('\n').includes(line), `bulwark.env has ${line}`);
  }
});

test('the units start the boot step before the network and the API after it, and are enabled', () => {
  const boot = readFileSync(at('etc/systemd/system/bulwark-boot.service'), 'utf8');
  assert.match(boot, /^DefaultDependencies=no$/m);
  assert.match(boot, /^Before=network-pre\.target/m);
  assert.match(boot, /^Wants=network-pre\.target$/m);
  assert.match(boot, /^Type=oneshot$/m);
  assert.match(boot, /^ExecStart=\/opt\/bulwark\/current\/install\/bulwark-boot\.sh \/etc\/bulwark\/bulwark\.env$/m);
  const api = readFileSync(at('etc/systemd/system/bulwark.service'), 'utf8');
  assert.match(api, /^EnvironmentFile=\/etc\/bulwark\/bulwark\.env$/m);
  assert.match(api, /^ExecStart=\/usr\/bin\/node \/opt\/bulwark\/current\/dist\/main\.js$/m);
  assert.match(api, /^After=bulwark-boot\.service/m);
  assert.doesNotMatch(`${boot}${api}`, /@[A-Z]+@/, 'every placeholder filled in');
  assert.equal(readlinkSync(at('etc/systemd/system/sysinit.target.wants/bulwark-boot.service')), '/etc/systemd/system/bulwark-boot.service');
  assert.equal(readlinkSync(at('etc/systemd/system/multi-user.target.wants/bulwark.service')), '/etc/systemd/system/bulwark.service');
});

test('Debian\'s competing units are masked; a unit the administrator masked or wrote stays as it was', () => {
  for (const unit of ['unbound', 'kea-dhcp4-server', 'kea-dhcp-ddns-server', 'caddy-api', 'strongswan', 'suricata', 'nftables']) {
    assert.equal(readlinkSync(at(`etc/systemd/system/${unit}.service`)), '/dev/null', `${unit} masked`);
  }
  assert.equal(readlinkSync(at('etc/systemd/system/chrony.service')), '/dev/null');
  assert.ok(lstatSync(at('etc/systemd/system/caddy.service')).isFile(), 'a local unit file is not replaced by a mask');
  const manifest = readFileSync(at('etc/bulwark/install.manifest'), 'utf8').split('\n');
  assert.ok(manifest.includes('mask /etc/systemd/system/unbound.service'));
  assert.ok(!manifest.some((line) => /chrony\.service|caddy\.service/.test(line)), 'the administrator\'s units are not in the manifest');
});

test('systemd-analyze verify --root passes on the installed units, and fails when an executable they name is missing', { skip: verifySkip }, () => {
  const verify = () => spawnSync('systemd-analyze', ['verify', `--root=${root}`, 'bulwark-boot.service', 'bulwark.service'], { encoding: 'utf8' });
  const passed = verify();
  assert.equal(passed.status, 0, passed.stderr);
  assert.equal(passed.stderr.trim(), '', 'no warning either');
  // The check is real: without the boot script the same verify fails and names it.
  const script = at('opt/bulwark/releases/9.8.7/install/bulwark-boot.sh');
  chmodSync(script, 0o644);
  try {
    const failed = verify();
    assert.notEqual(failed.status, 0);
    assert.match(failed.stderr, /bulwark-boot\.sh is not executable/);
  } finally {
    chmodSync(script, 0o755);
  }
});

test('installing again (an upgrade) keeps bulwark.env as the administrator edited it', () => {
  writeFileSync(at('etc/bulwark/bulwark.env'), 'BULWARK_DATA_DIR=/srv/bulwark\n');
  ok('install', '--root', root, '--from', source, '--no-build', '--node', '/usr/bin/node');
  assert.equal(readFileSync(at('etc/bulwark/bulwark.env'), 'utf8'), 'BULWARK_DATA_DIR=/srv/bulwark\n');
});

test('uninstall removes the release, units and masks and keeps the data and bulwark.env; uninstall --purge leaves the root exactly as before', () => {
  writeFileSync(at('var/lib/bulwark/bulwark.db'), 'data');
  ok('uninstall', '--root', root);
  assert.equal(existsSync(at('opt/bulwark')), false);
  assert.equal(existsSync(at('etc/systemd/system/bulwark.service')), false);
  assert.equal(existsSync(at('etc/systemd/system/sysinit.target.wants')), false);
  assert.throws(() => lstatSync(at('etc/systemd/system/unbound.service')), /ENOENT/, 'unmasked');
  assert.equal(readlinkSync(at('etc/systemd/system/chrony.service')), '/dev/null', 'the administrator\'s mask stays');
  assert.equal(readFileSync(at('var/lib/bulwark/bulwark.db'), 'utf8'), 'data', 'the data directory is kept');
  assert.ok(existsSync(at('etc/bulwark/bulwark.env')));
  assert.equal(existsSync(at('var/lib/bulwark-daemons')), false, 'the runtime tree is rebuilt at start: removed');

  ok('install', '--root', root, '--from', source, '--no-build', '--node', '/usr/bin/node');
  ok('uninstall', '--root', root, '--purge');
  assert.deepEqual(listing(), before_);
});

test('the installer refuses an unknown option, a Node.js the unit could not run (before writing anything), and an uninstall with nothing installed', () => {
  const unknown = installer('install', '--rooot', root);
  assert.equal(unknown.code, 2);
  assert.match(unknown.out, /unknown option --rooot/);
  const noNode = installer('install', '--root', root, '--from', source, '--no-build', '--node', '/opt/node20/bin/node');
  assert.equal(noNode.code, 1);
  assert.match(noNode.out, /node is not executable: bulwark\.service could not start/);
  assert.deepEqual(listing(), before_, 'refused before anything was written');
  const nothing = installer('uninstall', '--root', root);
  assert.equal(nothing.code, 1);
  assert.match(nothing.out, /nothing installed by this script/);
});
