/**
 * Host settings on freebsd (issue 37 item 2) through fake `sysrc`, `hostname`, `sshd`, `service` and `pfctl`
 * on PATH that record every call, against a host root in a temporary directory: rc.conf and loader.conf
 * assignments merged into the existing files, the sshd drop-in checked (sshd -t) and read back (sshd -T), the
 * state table loaded as pf options (pfctl -O) and read back (pfctl -s timeouts / -s memory). The command
 * sequences and the files are compared with golden files (test/golden/freebsd-host-*); a refusal answers 409
 * and leaves the previous files.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFreebsdHostSettings } from '../src/platform/freebsd/host-settings.js';
import { HttpError } from '../src/core/errors.js';
import { assertGolden } from './helpers/golden.js';
import { fakeTools } from './helpers/fake-tools.js';

const tools = fakeTools('host');
const fakeDir = tools.dir;
const fake = tools.fake;
const root = mkdtempSync(join(tmpdir(), 'bulwark-host-root-'));
after(() => rmSync(root, { recursive: true, force: true }));

// sysrc -f FILE -n NAME: the value of NAME="…" in FILE.
fake('sysrc', 'sed -n "s/^$4=\\"\\(.*\\)\\"$/\\1/p" "$2"');
fake('hostname', '');
fake('service', '');
// sshd -t: refused when the test says so; sshd -T: the drop-in next to the config, as sshd -T prints it.
fake('sshd', `
[ -e "$dir/sshd-refuse" ] && { echo "bad configuration option" >&2; exit 255; }
[ "$1" = -T ] && sed -e 's/^Port/port/;s/^PasswordAuthentication/passwordauthentication/;s/^PermitRootLogin/permitrootlogin/;s/prohibit-password/without-password/;/^#/d' "$(dirname "$3")/sshd_config.d/00-bulwark.conf"`);
// pfctl -O -f FILE loads the options (refused when the test says so); -s memory / -s timeouts print them.
fake('pfctl', `
case "$1 $2" in
  "-O -f") [ -e "$dir/pf-refuse" ] && { echo "pfctl: syntax error" >&2; exit 1; }; cat "$3" >> "$dir/pf-loaded" ;;
  "-s memory") limit=$(sed -n 's/^set limit states //p' "$dir/pf-loaded" 2>/dev/null | tail -1); echo "states        hard limit    \${limit:-100000}" ;;
  "-s timeouts") for t in tcp.established udp.first udp.single udp.multiple icmp.first icmp.error; do v=$(sed -n "s/^set timeout $t //p" "$dir/pf-loaded" 2>/dev/null | tail -1); echo "$t   \${v:-30}s"; done ;;
esac`);
const calls = () => tools.calls({ [root]: '<root>' });
const golden = (name: string, text: string) => assertGolden(name, text.replaceAll(root, '<root>'));
const file = (path: string) => readFileSync(join(root, path), 'utf8');

mkdirSync(join(root, 'etc/ssh/sshd_config.d'), { recursive: true });
mkdirSync(join(root, 'boot'), { recursive: true });
mkdirSync(join(root, 'usr/share/zoneinfo/Europe'), { recursive: true });
writeFileSync(join(root, 'usr/share/zoneinfo/Europe/Paris'), 'TZif2 (a zone file)');
writeFileSync(join(root, 'etc/rc.conf'), 'hostname="old.example.org"\nifconfig_vtnet0="DHCP"\npf_enable="YES"\n');
writeFileSync(join(root, 'boot/loader.conf'), 'autoboot_delay="3"\n');
writeFileSync(join(root, 'etc/hosts'), '::1\t\tlocalhost localhost.my.domain\n127.0.0.1\t\tlocalhost localhost.my.domain\n');
writeFileSync(join(root, 'etc/ssh/sshd_config'), 'Include /etc/ssh/sshd_config.d/*.conf\nSubsystem sftp /usr/libexec/sftp-server\n');

const host = createFreebsdHostSettings(root, () => undefined, { live: true });
const refusal = (pattern: RegExp) => (error: HttpError) => {
  assert.equal(error.statusCode, 409);
  assert.match(error.message, pattern);
  return true;
};

test('freebsd host name and timezone: rc.conf hostname merged and read back with sysrc, hosts line, localtime and /var/db/zoneinfo, the running name set', async () => {
  calls();
  const applied = await host.general({ hostname: 'fw1', domain: 'example.lan', timezone: 'Europe/Paris' });
  assert.equal(applied.warning, null);
  golden('freebsd-host-general.calls', `${calls().join('\n')}\n`);
  golden('freebsd-host-rc.conf', file('etc/rc.conf'));
  assert.match(file('etc/hosts'), /^127\.0\.1\.1\tfw1\.example\.lan fw1$/m);
  assert.equal(readlinkSync(join(root, 'etc/localtime')), '/usr/share/zoneinfo/Europe/Paris');
  assert.equal(file('var/db/zoneinfo'), 'Europe/Paris\n');
  await assert.rejects(host.general({ hostname: 'fw1', domain: '', timezone: 'Mars/Olympus' }), refusal(/not in the host's zone database/));
});

test('freebsd sshd: drop-in checked with sshd -t, read back with sshd -T, sshd_enable in rc.conf, service sshd reload; a refusal restores the previous drop-in', async () => {
  calls();
  await host.ssh({ enabled: true, port: 2222, password_auth: false, permit_root_login: false });
  golden('freebsd-host-ssh.calls', `${calls().join('\n')}\n`);
  golden('freebsd-host-sshd-drop-in.conf', file('etc/ssh/sshd_config.d/00-bulwark.conf'));
  assert.match(file('etc/rc.conf'), /^sshd_enable="YES"$/m);
  const kept = file('etc/ssh/sshd_config.d/00-bulwark.conf');
  writeFileSync(join(fakeDir, 'sshd-refuse'), '');
  try {
    await assert.rejects(host.ssh({ enabled: true, port: 2200, password_auth: true, permit_root_login: false }), refusal(/sshd -t refused the configuration/));
  } finally {
    rmSync(join(fakeDir, 'sshd-refuse'));
  }
  assert.equal(file('etc/ssh/sshd_config.d/00-bulwark.conf'), kept, 'the previous drop-in is back');
  assert.ok(!calls().some((call) => call.startsWith('service')), 'sshd is not reloaded after a refusal');
});

test('freebsd state table: pf options loaded with pfctl -O and read back; a refusal answers 409 and leaves the previous options file', async () => {
  calls();
  const applied = await host.stateTable({ max_states: 50000, tcp_established: 3600, udp: 45, udp_stream: 90, icmp: 20 });
  assert.deepEqual(applied.live, { max_states: 50000, tcp_established: 3600, udp: 45, udp_stream: 90, icmp: 20 });
  golden('freebsd-host-pf-options.conf', file('etc/bulwark/pf-options.conf'));
  golden('freebsd-host-state-table.calls', `${calls().join('\n')}\n`);
  const kept = file('etc/bulwark/pf-options.conf');
  writeFileSync(join(fakeDir, 'pf-refuse'), '');
  try {
    await assert.rejects(host.stateTable({ max_states: 60000 }), refusal(/pfctl refused the state-table options/));
  } finally {
    rmSync(join(fakeDir, 'pf-refuse'));
  }
  assert.equal(file('etc/bulwark/pf-options.conf'), kept);
  assert.equal((await host.readStateTable()).max_states, 50000);
});

test('freebsd console, banner and resolvers: loader.conf assignments, /etc/issue and motd.template, resolv.conf', async () => {
  calls();
  const consoleApplied = await host.console({ kind: 'dual', baud: 115200 });
  assert.equal(consoleApplied.requires_reboot, true);
  assert.match(consoleApplied.warning ?? '', /^applies at next boot/);
  golden('freebsd-host-loader.conf', file('boot/loader.conf'));
  await host.console({ kind: 'video', baud: 115200 });
  assert.equal(file('boot/loader.conf'), 'autoboot_delay="3"\nconsole="vidconsole"\n', 'serial settings removed again');

  await host.banner({ login_banner: 'Authorised use only \\l', motd: 'Welcome' });
  assert.equal(file('etc/issue'), 'Authorised use only \\\\l\n');
  assert.equal(file('etc/motd.template'), 'Welcome\n');
  await host.resolvers({ servers: ['192.0.2.53'], search: ['example.lan'] });
  assert.equal(file('etc/resolv.conf'), "# Rendered by Bulwark (the appliance's own resolvers)\nnameserver 192.0.2.53\nsearch example.lan\n");
  golden('freebsd-host-other.calls', `${calls().join('\n')}\n`);
  assert.ok(!existsSync(join(root, 'etc/ssh/sshd_config.d/.bulwark-tmp')));
});
