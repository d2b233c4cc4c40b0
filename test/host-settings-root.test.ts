/**
 * The host root (`--host-root`, BULWARK_HOST_ROOT): with a root other than `/` the linux host settings write
 * the host's files under it and leave the running system alone (host name, sysctls, sshd, update-grub), and
 * every answer says so. Existing lines of /etc/hosts are kept; only the 127.0.1.1 line is Bulwark's.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLinuxHostSettings } from '../src/platform/linux/host-settings.js';
import { loadStartupConfig, StartupError } from '../src/config.js';

const root = mkdtempSync(join(tmpdir(), 'bulwark-host-root-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('--host-root and BULWARK_HOST_ROOT choose the root; "/" by default; a relative root is refused', () => {
  assert.equal(loadStartupConfig([], {}).hostRoot, '/');
  assert.equal(loadStartupConfig([], { BULWARK_HOST_ROOT: '/srv/image' }).hostRoot, '/srv/image');
  assert.equal(loadStartupConfig(['--host-root', '/mnt/x/'], { BULWARK_HOST_ROOT: '/srv/image' }).hostRoot, '/mnt/x');
  assert.throws(() => loadStartupConfig(['--host-root', 'relative'], {}), StartupError);
});

test('linux host settings under another root: files written there, the running system untouched, the answer says so', async () => {
  mkdirSync(join(root, 'etc'), { recursive: true });
  mkdirSync(join(root, 'usr/share/zoneinfo/Asia'), { recursive: true });
  writeFileSync(join(root, 'usr/share/zoneinfo/Asia/Tokyo'), 'TZif2 (a zone file)');
  writeFileSync(join(root, 'etc/hosts'), '127.0.0.1\tlocalhost\n127.0.1.1\told-name\n10.0.0.5\tnas.lan nas\n');
  const host = createLinuxHostSettings(root);
  const name = os.hostname();
  const general = await host.general({ hostname: 'imaged', domain: 'corp.example', timezone: 'Asia/Tokyo' });
  assert.match(general.warning ?? '', /host root .*: the files were written there; the running system was not changed/);
  assert.equal(os.hostname(), name, 'the running host name is not changed');
  assert.equal(readFileSync(join(root, 'etc/hostname'), 'utf8'), 'imaged\n');
  assert.equal(readFileSync(join(root, 'etc/hosts'), 'utf8'), '127.0.0.1\tlocalhost\n127.0.1.1\timaged.corp.example imaged\n10.0.0.5\tnas.lan nas\n');
  assert.equal(readlinkSync(join(root, 'etc/localtime')), '/usr/share/zoneinfo/Asia/Tokyo');
  assert.deepEqual(general.files.sort(), ['etc/hostname', 'etc/hosts', 'etc/localtime', 'etc/timezone'].map((f) => join(root, f)).sort());

  const udpBefore = readFileSync('/proc/sys/net/netfilter/nf_conntrack_udp_timeout', 'utf8');
  const tuned = await host.stateTable({ udp: 77 });
  assert.match(tuned.warning ?? '', /running system was not changed/);
  assert.equal(readFileSync('/proc/sys/net/netfilter/nf_conntrack_udp_timeout', 'utf8'), udpBefore, 'the kernel is not changed');
  assert.equal(readFileSync(join(root, 'etc/sysctl.d/90-bulwark-state-table.conf'), 'utf8'), '# Rendered by Bulwark (/settings/pf-tuning)\nnet.netfilter.nf_conntrack_udp_timeout = 77\n');

  const ssh = await host.ssh({ enabled: true, port: 2222, password_auth: false, permit_root_login: false });
  assert.match(ssh.warning ?? '', /not checked with sshd -t/);
  assert.match(readFileSync(join(root, 'etc/ssh/sshd_config.d/00-bulwark.conf'), 'utf8'), /^Port 2222$/m);

  const resolvers = await host.resolvers({ servers: ['192.0.2.53'], search: [] });
  assert.deepEqual(resolvers.files, [join(root, 'etc/resolv.conf')]);
  const consoleReport = await host.console({ kind: 'serial', baud: 57600 });
  assert.equal(consoleReport.requires_reboot, true);
  assert.match(readFileSync(join(root, 'etc/default/grub.d/bulwark.cfg'), 'utf8'), /^GRUB_CMDLINE_LINUX="\$\{GRUB_CMDLINE_LINUX\} console=ttyS0,57600n8"$/m);
  await assert.rejects(host.general({ hostname: 'x', domain: '', timezone: 'Asia/Nowhere' }), /not in the host's zone database/);
  assert.equal(readFileSync(join(root, 'etc/hostname'), 'utf8'), 'imaged\n', 'a refused change leaves the files');
});
