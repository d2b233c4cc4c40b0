/**
 * Property test for the writers of the host's own files (issue 37 item 2): sysctl.d lines, the boot loader's
 * shell drop-in, rc.conf/loader.conf assignments, pf option lines, systemd-resolved lines, and the sshd,
 * hosts, resolv.conf and terminal text writers they share with the simulated platform. Each writer is fed a
 * fixed list of hostile strings and a few hundred seeded random ones built from the characters that end or
 * extend a directive in these formats; it must either refuse (409 naming the field, never echoing the value)
 * or emit exactly one directive of the intended shape, whose value reads back unchanged through the format's
 * own parser (`sh` for the shell-sourced files).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpError } from '../../src/core/errors.js';
import { sysctlLine } from '../../src/render/system/sysctl-conf.js';
import { grubConsoleDefaults } from '../../src/render/system/grub-default.js';
import { rcConfAssignment } from '../../src/render/system/rc-conf.js';
import { pfOptionLine } from '../../src/compile/pf-options.js';
import { resolvedLine } from '../../src/render/system/resolved-conf.js';
import { sshdLine } from '../../src/render/sshd/sshd-config.js';
import { mergeHostsFile, resolvConfText, issueText, stateTableSysctlText } from '../../src/platform/host-texts.js';
import { mergeAssignments } from '../../src/platform/freebsd/host-settings.js';

const FIXED = [
  'a"b', "a'b", 'a\nb', 'a\rb', 'a\u0000b', '$(touch /tmp/bulwark-pwned)', '`id`', 'a\\', '${HOME}', 'a;b', 'a b', '#x',
  '1\nnet.ipv4.ip_forward = 1', '30 # comment', '-1', '1e3', '0x10', ' 30', '30 ', 'tcp.established 1\nset skip on lo', 'x\n[Resolve]\nDNS=6.6.6.6',
  'console=tty0 init=/bin/sh', 'console=ttyS0,115200n8"; rm -rf /; "', '\u001b[31m', 'a\u2028b', 'Port 22\nMatch all',
];
/** Seeded so a failure reproduces: strings of 1-12 characters from the characters that matter in these formats. */
function randomStrings(count: number): string[] {
  const alphabet = ['a', 'Z', '0', '9', ' ', '\t', '\n', '\r', '"', "'", '\\', '$', '`', '(', ')', ';', '#', '=', '.', '-', '_', ',', '/', '\u0000', '\u001b', 'é'];
  let seed = 37;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: count }, () => Array.from({ length: 1 + (next() % 12) }, () => alphabet[next() % alphabet.length]).join(''));
}
const HOSTILE = [...FIXED, ...randomStrings(300)];

/** Runs `render`; a refusal must be a 409 naming the field without the value. */
function renderOrRefuse(render: () => string, field: string, value: string): string | null {
  try {
    return render();
  } catch (error) {
    assert.ok(error instanceof HttpError, `${field}: ${(error as Error).message}`);
    assert.equal(error.statusCode, 409);
    assert.match(error.message, new RegExp(field.replaceAll('.', '\\.')));
    if (value.length > 3) assert.ok(!error.message.includes(value), `${field}: the refusal echoes the value`);
    return null;
  }
}

/** What `sh` reads from a file of assignments: the variables' values, and whether anything ran. */
function sourced(text: string, names: string[]): { values: string[]; ran: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-sh-'));
  try {
    writeFileSync(join(dir, 'f'), text);
    const script = `cd "${dir}" && . ./f && ${names.map((name) => `printf '%s\\0' "\${${name}-UNSET}"`).join(' && ')}`;
    const result = spawnSync('sh', ['-c', script], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent' } });
    assert.equal(result.status, 0, `sh refused: ${text}`);
    const ran = spawnSync('sh', ['-c', 'ls /tmp/bulwark-pwned 2>/dev/null'], { encoding: 'utf8' }).stdout !== '';
    return { values: result.stdout.split('\0').slice(0, names.length), ran };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('sysctl.d lines: a hostile key or value is refused, or the line is `key = number`', () => {
  for (const value of HOSTILE) {
    const asValue = renderOrRefuse(() => sysctlLine('net.netfilter.nf_conntrack_udp_timeout', value, 'settings.pf_tuning.udp'), 'settings.pf_tuning.udp', value);
    if (asValue !== null) assert.match(asValue, /^net\.netfilter\.nf_conntrack_udp_timeout = (0|[1-9]\d*)$/);
    const asKey = renderOrRefuse(() => sysctlLine(value, 30, 'settings.pf_tuning.key'), 'settings.pf_tuning.key', value);
    if (asKey !== null) assert.match(asKey, /^[a-z][a-z0-9_.]* = 30$/);
  }
  assert.equal(stateTableSysctlText({ udp: 45 }).split('\n').filter((line) => line && !line.startsWith('#')).length, 1);
});

test('boot loader drop-in: only the console arguments Bulwark renders are written; sh reads exactly them', () => {
  for (const value of HOSTILE) {
    const text = renderOrRefuse(() => grubConsoleDefaults([value], null, 'system.console'), 'system.console', value);
    assert.equal(text, null, `a hostile argument was written: ${JSON.stringify(value)}`);
  }
  const text = grubConsoleDefaults(['console=tty0', 'console=ttyS0,9600n8'], 9600, 'system.console');
  const { values, ran } = sourced(text, ['GRUB_CMDLINE_LINUX', 'GRUB_TERMINAL', 'GRUB_SERIAL_COMMAND']);
  assert.deepEqual(values, [' console=tty0 console=ttyS0,9600n8', 'console serial', 'serial --unit=0 --speed=9600 --word=8 --parity=no --stop=1']);
  assert.equal(ran, false);
});

test('rc.conf / loader.conf assignments: sh reads back exactly the value, or it is refused; nothing runs', () => {
  // One sh run for every accepted value (each a variable of its own), so the property stays cheap.
  const accepted: { name: string; value: string }[] = [];
  for (const [index, value] of HOSTILE.entries()) {
    const line = renderOrRefuse(() => rcConfAssignment(`v${index}`, value, 'system.general.hostname'), 'system.general.hostname', value);
    if (line === null) continue;
    assert.equal(line.split('\n').length, 1);
    accepted.push({ name: `v${index}`, value });
    const asName = renderOrRefuse(() => rcConfAssignment(value, 'x', 'system.console'), 'system.console', value);
    if (asName !== null) assert.match(value, /^[A-Za-z_]\w*$/, 'only a shell variable name is written as a name');
  }
  const text = accepted.map(({ name, value }) => rcConfAssignment(name, value, 'f')).join('\n');
  const { values, ran } = sourced(`${text}\n`, accepted.map(({ name }) => name));
  assert.deepEqual(values, accepted.map(({ value }) => value));
  assert.equal(ran, false);
  assert.ok(accepted.length > 10, 'the property saw accepted values too');
  // Merging keeps the other lines and never lets a value add a line.
  const merged = mergeAssignments('a="1"\n# kept\nb="2"\n', { b: 'x y', c: null }, 'f');
  assert.equal(merged, 'a="1"\n# kept\nb="x y"\n');
});

test('pf option lines: a hostile timeout name or value is refused, or the line is one `set` statement', () => {
  for (const value of HOSTILE) {
    const asValue = renderOrRefuse(() => pfOptionLine({ timeout: 'udp.first' }, value, 'settings.pf_tuning.udp'), 'settings.pf_tuning.udp', value);
    if (asValue !== null) assert.match(asValue, /^set timeout udp\.first (0|[1-9]\d*)$/);
    const asName = renderOrRefuse(() => pfOptionLine({ timeout: value }, 30, 'settings.pf_tuning.udp'), 'settings.pf_tuning.udp', value);
    assert.equal(asName, null);
    const limit = renderOrRefuse(() => pfOptionLine({ limit: 'states' }, value, 'settings.pf_tuning.max_states'), 'settings.pf_tuning.max_states', value);
    if (limit !== null) assert.match(limit, /^set limit states (0|[1-9]\d*)$/);
  }
});

test('resolver files: resolved.conf, resolv.conf, hosts and sshd lines take only addresses, names and their grammar', () => {
  for (const value of HOSTILE) {
    const dns = renderOrRefuse(() => resolvedLine('DNS', [value], 'dns.servers'), 'dns.servers', value);
    assert.equal(dns, null);
    const domains = renderOrRefuse(() => resolvedLine('Domains', [value], 'system.general.domain'), 'system.general.domain', value);
    if (domains !== null) assert.match(domains, /^Domains=[A-Za-z0-9.-]+$/);
    const resolv = renderOrRefuse(() => resolvConfText({ servers: ['192.0.2.1'], search: [value] }), 'system.general.domain', value);
    if (resolv !== null) assert.deepEqual(resolv.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(' ')[0]), ['nameserver', 'search']);
    const hosts = renderOrRefuse(() => mergeHostsFile('127.0.0.1\tlocalhost\n', { hostname: value, domain: '', timezone: 'UTC' }), 'system.general.hostname', value);
    if (hosts !== null) assert.equal(hosts.split('\n').filter(Boolean).length, 2);
    const port = renderOrRefuse(() => sshdLine('Port', value, 'system.ssh.port'), 'system.ssh.port', value);
    if (port !== null) assert.match(port, /^Port [1-9]\d*$/);
    const issue = issueText({ login_banner: value, motd: '' });
    assert.ok(!/[\r\u0000\u001b]/.test(issue) && !/(^|[^\\])(\\\\)*\\[^\\]/.test(issue.replace(/\n$/, '')), `an escape agetty would expand survived: ${JSON.stringify(issue)}`);
  }
});
