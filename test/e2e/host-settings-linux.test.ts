/**
 * Host settings on linux, put in force and seen from the host's side (issue 37 item 2). Bulwark runs with
 * `--platform linux` in a network namespace of this test, inside `unshare --mount --uts` with a private copy
 * of /etc bind-mounted over /etc and a private /run: its hostname, /etc files, sshd configuration and
 * conntrack sysctls are its own, and this machine is never changed (checked at the end). Each setting changed
 * through the API is then read inside those namespaces (nsenter): `hostname`, `date +%Z`, /etc/resolv.conf,
 * `sysctl`, `sshd -T`, the boot loader drop-in; refused changes (409) leave the files as they were.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetnsLab } from '../helpers/netns-lab.js';
import { freePort } from '../helpers/free-port.js';
import { systemSkip } from '../helpers/system-skip.js';

const skip = systemSkip('the linux host settings namespace lab', { root: true, programs: ['ip', 'unshare', 'nsenter', 'sshd', 'ssh-keygen', 'hostname', 'sysctl', 'date'] });

/** What this machine holds before the test: compared after it. */
function machineState() {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  };
  return {
    hostname: os.hostname(),
    etcHostname: read('/etc/hostname'),
    hosts: read('/etc/hosts'),
    resolv: read('/etc/resolv.conf'),
    localtime: readlinkSync('/etc/localtime'),
    issue: read('/etc/issue'),
    motd: read('/etc/motd'),
    sshdDropIns: spawnSync('ls', ['/etc/ssh/sshd_config.d'], { encoding: 'utf8' }).stdout,
    udpTimeout: read('/proc/sys/net/netfilter/nf_conntrack_udp_timeout'),
    conntrackMax: read('/proc/sys/net/netfilter/nf_conntrack_max'),
  };
}

test('linux host settings: hostname, timezone, resolvers, conntrack sysctls, banner, sshd and the boot console are in force in the namespace; refusals leave the files as they were; this machine is untouched', { skip, timeout: 300_000 }, async () => {
  const before = machineState();
  const lab = new NetnsLab('hs');
  const work = mkdtempSync(join(tmpdir(), 'bulwark-host-'));
  try {
    // A private /etc: a copy of this machine's, with an administrator (sudo member) whose home is in the work dir.
    const etc = join(work, 'etc');
    cpSync('/etc', etc, { recursive: true, verbatimSymlinks: true });
    const home = join(work, 'home', 'bwadmin');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    appendFileSync(join(etc, 'passwd'), `bwadmin:x:4242:4242::${home}:/bin/sh\n`);
    const groups = readFileSync(join(etc, 'group'), 'utf8');
    writeFileSync(join(etc, 'group'), /^sudo:/m.test(groups)
      ? groups.replace(/^sudo:x:(\d+):(.*)$/m, (_, gid, members) => `sudo:x:${gid}:${members ? `${members},` : ''}bwadmin`)
      : `${groups}sudo:x:27:bwadmin\n`);

    const ns = lab.namespace('a');
    const port = await freePort();
    const launcher = ['unshare', '--mount', '--uts', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc && mount -t tmpfs bulwark-run /run && exec "$@"', etc];
    let bulwark = lab.startBulwark(ns, port, [], launcher);
    /** Runs a program inside Bulwark's own namespaces (mount, UTS, network). */
    const inside = (file: string, args: string[]) => {
      const result = spawnSync('nsenter', ['-t', String(bulwark.pid), '--mount', '--uts', '--net', '--', file, ...args], { encoding: 'utf8' });
      assert.equal(result.status, 0, `${file} ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    // Up once it warns that no account exists yet (start-up under tsx on a busy machine can take a while).
    for (let waited = 0; !/No account exists yet/.test(lab.log) && bulwark.exitCode === null && waited < 180_000; waited += 250) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.match(lab.log, /No account exists yet/, `Bulwark did not start: ${lab.log}`);

    // Hostname, domain and timezone.
    const general = lab.call('PUT', '/api/v1/system/general', { hostname: 'fw-ns', domain: 'example.lan', timezone: 'Europe/Paris' });
    assert.equal(general.warning, null, 'applied to the host, not merely rendered');
    assert.ok(general.files.includes('/etc/hostname') && general.files.includes('/etc/localtime'), JSON.stringify(general.files));
    assert.equal(inside('hostname', []).trim(), 'fw-ns');
    assert.match(inside('date', ['+%Z']).trim(), /^CES?T$/);
    assert.equal(readFileSync(join(etc, 'hostname'), 'utf8'), 'fw-ns\n');
    assert.match(readFileSync(join(etc, 'hosts'), 'utf8'), /^127\.0\.1\.1\tfw-ns\.example\.lan fw-ns$/m);
    assert.equal(readlinkSync(join(etc, 'localtime')), '/usr/share/zoneinfo/Europe/Paris');
    assert.equal(readFileSync(join(etc, 'timezone'), 'utf8'), 'Europe/Paris\n');
    assert.equal(lab.call('GET', '/api/v1/system/info').hostname, 'fw-ns');

    // The appliance's own resolvers, with the domain as search domain.
    const dns = lab.call('PUT', '/api/v1/dns', { servers: ['192.0.2.53', '2001:db8::53'] });
    assert.equal(dns.message, 'DNS configuration updated', 'the specification\'s answer, now true of the host');
    const resolv = inside('cat', ['/etc/resolv.conf']);
    assert.deepEqual(resolv.split('\n').filter((line) => line && !line.startsWith('#')), ['nameserver 192.0.2.53', 'nameserver 2001:db8::53', 'search example.lan']);
    assert.equal(lab.call('GET', '/api/v1/dns').file, '/etc/resolv.conf');

    // Conntrack timeouts as sysctls of the namespace, read back into the answer.
    const tuned = lab.call('PUT', '/api/v1/settings/pf-tuning', { tcp_established: 3600, udp: 45, udp_stream: 90, icmp: 20 });
    assert.deepEqual(tuned.live_timeouts, { tcp_established: 3600, udp: 45, udp_stream: 90, icmp: 20 });
    assert.deepEqual(tuned.configured_timeouts, tuned.live_timeouts);
    assert.equal(inside('sysctl', ['-n', 'net.netfilter.nf_conntrack_udp_timeout']).trim(), '45');
    assert.equal(inside('sysctl', ['-n', 'net.netfilter.nf_conntrack_tcp_timeout_established']).trim(), '3600');
    const sysctlFile = readFileSync(join(etc, 'sysctl.d', '90-bulwark-state-table.conf'), 'utf8');
    assert.match(sysctlFile, /^net\.netfilter\.nf_conntrack_udp_timeout = 45$/m);
    // nf_conntrack_max is read-only outside the initial network namespace: 409 saying so, nothing changed.
    const [refusedMax] = lab.api(['PUT', '/api/v1/settings/pf-tuning', { max_states: 50000, udp: 60 }]);
    assert.equal(refusedMax.status, 409, JSON.stringify(refusedMax.body));
    assert.match(refusedMax.body.error, /nf_conntrack_max.*read-only outside the initial network namespace/);
    const afterRefusal = lab.call('GET', '/api/v1/settings/pf-tuning');
    assert.notEqual(afterRefusal.configured_max_states, 50000);
    assert.equal(afterRefusal.configured_timeouts.udp, 45, 'the stored settings are the previous ones');
    assert.equal(inside('sysctl', ['-n', 'net.netfilter.nf_conntrack_udp_timeout']).trim(), '45', 'the kernel holds the previous value');
    assert.equal(readFileSync(join(etc, 'sysctl.d', '90-bulwark-state-table.conf'), 'utf8'), sysctlFile, 'the sysctl.d file is the previous one');
    // At start the stored values are put back in force (at boot, sysctl.d is read before conntrack is loaded).
    inside('sysctl', ['-q', '-w', 'net.netfilter.nf_conntrack_udp_timeout=99']);
    assert.equal(await lab.stopBulwark(), 0);
    bulwark = lab.startBulwark(ns, port, [], launcher);
    let udp = '';
    for (let waited = 0; udp !== '45' && waited < 180_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      udp = inside('sysctl', ['-n', 'net.netfilter.nf_conntrack_udp_timeout']).trim();
    }
    assert.equal(udp, '45', `the stored UDP timeout is in force again after a restart\n${lab.log}`);
    const kernelSettings = lab.call('GET', '/api/v1/status').services.find((s: { name: string }) => s.name === 'kernel-settings');
    assert.deepEqual([kernelSettings?.enabled, kernelSettings?.running, kernelSettings?.waiting_for, kernelSettings?.error], [true, true, null, null], JSON.stringify(kernelSettings));

    // Login banner and motd: getty's backslash escapes cannot be formed in /etc/issue.
    lab.call('PUT', '/api/v1/system/banner', { login_banner: 'Authorised use only \\e[31m \\l', motd: 'Welcome to fw-ns' });
    assert.equal(inside('cat', ['/etc/issue']), 'Authorised use only \\\\e[31m \\\\l\n');
    assert.equal(inside('cat', ['/etc/issue.net']), 'Authorised use only \\e[31m \\l\n');
    assert.equal(inside('cat', ['/etc/motd']), 'Welcome to fw-ns\n');

    // sshd: a drop-in checked with sshd -t and read back with sshd -T.
    const dropIn = join(etc, 'ssh', 'sshd_config.d', '00-bulwark.conf');
    const ssh = lab.call('PUT', '/api/v1/system/ssh', { port: 2222, password_auth: true });
    assert.equal(ssh.warning, 'sshd is not running: the settings apply when it starts');
    const effective = () => inside('sshd', ['-T', '-f', '/etc/ssh/sshd_config']);
    assert.match(effective(), /^port 2222$/m);
    assert.match(effective(), /^passwordauthentication yes$/m);
    const kept = { text: readFileSync(dropIn, 'utf8'), mtime: statSync(dropIn).mtimeMs };
    const untouched = (why: string) => {
      assert.equal(readFileSync(dropIn, 'utf8'), kept.text, why);
      assert.equal(statSync(dropIn).mtimeMs, kept.mtime, why);
      assert.match(effective(), /^passwordauthentication yes$/m, why);
      assert.equal(lab.call('GET', '/api/v1/system/ssh').password_auth, true, why);
    };
    // Password authentication off while no administrator has a key: the only way in would be gone.
    const [lockout] = lab.api(['PUT', '/api/v1/system/ssh', { password_auth: false }]);
    assert.equal(lockout.status, 409, JSON.stringify(lockout.body));
    assert.match(lockout.body.error, /refused: password authentication off, and no administrator/);
    untouched('a refused lockout leaves the drop-in untouched');
    // sshd on the API's own port would have no address to listen on.
    const [samePort] = lab.api(['PUT', '/api/v1/system/ssh', { port }]);
    assert.equal(samePort.status, 409);
    assert.match(samePort.body.error, /API's own port/);
    untouched('a refused port leaves the drop-in untouched');
    // With a key, but an earlier drop-in that wins: sshd -T reads back the other value, so the change is rolled back.
    const key = join(work, 'key');
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    writeFileSync(join(home, '.ssh', 'authorized_keys'), readFileSync(`${key}.pub`));
    writeFileSync(join(etc, 'ssh', 'sshd_config.d', '0-admin.conf'), 'PasswordAuthentication yes\n');
    const [shadowed] = lab.api(['PUT', '/api/v1/system/ssh', { password_auth: false }]);
    assert.equal(shadowed.status, 409, JSON.stringify(shadowed.body));
    assert.match(shadowed.body.error, /sshd would not use passwordauthentication no/);
    assert.equal(readFileSync(dropIn, 'utf8'), kept.text, 'the drop-in is the previous one again');
    assert.match(effective(), /^passwordauthentication yes$/m);
    rmSync(join(etc, 'ssh', 'sshd_config.d', '0-admin.conf'));
    lab.call('PUT', '/api/v1/system/ssh', { password_auth: false });
    assert.match(effective(), /^passwordauthentication no$/m);
    assert.match(effective(), /^port 2222$/m);

    // A restore puts the stored host sections of the version back in force (the apply coordinator's host-settings applier).
    const saved = lab.call('POST', '/api/v1/config/save', { comment: 'host settings' }, 200);
    lab.call('PUT', '/api/v1/system/general', { hostname: 'fw-other', timezone: 'Asia/Tokyo' });
    assert.equal(inside('hostname', []).trim(), 'fw-other');
    assert.equal(inside('date', ['+%Z']).trim(), 'JST');
    const [restored] = lab.api(['POST', '/api/v1/config/restore', { version: saved.version }]);
    assert.equal(restored.status, 200, `${JSON.stringify(restored.body)}\n${lab.log}`);
    assert.equal(inside('hostname', []).trim(), 'fw-ns', 'the restored hostname is in force');
    assert.match(inside('date', ['+%Z']).trim(), /^CES?T$/);

    // Serial console: the boot loader's drop-in, marked as applying at next boot.
    const consoleReport = lab.call('PUT', '/api/v1/system/console', { kind: 'dual', baud: 115200 });
    assert.equal(consoleReport.requires_reboot, true);
    assert.match(consoleReport.warning, /^applies at next boot/);
    const grub = inside('sh', ['-c', '. /etc/default/grub.d/bulwark.cfg && printf "%s|%s" "$GRUB_CMDLINE_LINUX" "$GRUB_TERMINAL"']);
    assert.equal(grub, ' console=tty0 console=ttyS0,115200n8|console serial');
  } finally {
    await lab.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
  assert.deepEqual(machineState(), before, 'this machine is unchanged');
});
