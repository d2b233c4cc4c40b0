/**
 * Golden files: each configuration below compiles to exactly test/golden/<case>.pf and <case>.nft.
 * After a deliberate change of output, regenerate with UPDATE_GOLDEN=1 and review the diff; a missing file fails.
 * As root, every nftables golden file is also loaded into a fresh network namespace: the kernel accepts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePf } from '../src/compile/pf.js';
import { compileNftables } from '../src/compile/nftables.js';
import { CompileError } from '../src/compile/firewall-model.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { runCommand } from '../src/platform/exec.js';
import { alias, config, fixtureId, nat, rule, schedule } from './helpers/firewall-fixtures.js';
import { rootSkipReason } from './helpers/shared.js';
import { assertGolden, GOLDEN_DIR } from './helpers/golden.js';


const cases: Record<string, FirewallConfig> = {
  rules: config({
    rules: [
      rule({ id: fixtureId(1), action: 'pass', interface: 'igb1', ip_version: 'inet', src: '172.16.5.0/24', dst: '172.16.9.20', dport: [8080, 8090], label: 'app-tier', description: 'app servers' }),
      rule({ id: fixtureId(2), action: 'block', protocol: 'udp', dport: 161 }),
      rule({ id: fixtureId(3), action: 'blockdrop', direction: 'any', protocol: 'any', src: '2001:db8::/32', src_invert: true, interface: 'eth0', log: true }),
      rule({ id: fixtureId(4), action: 'blockreturn', protocol: 'tcp/udp', dst: '10.0.0.1-10.0.0.9', dport: 53, quick: false }),
      rule({ id: fixtureId(5), action: 'pass', protocol: 'icmp6', quick: false, state_options: { tracking: 'modulate_state', policy: 'if_bound', adaptive_timeouts: { start: 6000, end: 12000 }, timeout_tcp: 3600, timeout_udp: 60, timeout_icmp: 20 } }),
      rule({ id: fixtureId(6), action: 'pass', direction: 'out', protocol: 'gre', state_options: { tracking: 'none', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null } }),
      rule({ id: fixtureId(7), action: 'pass', sport: [1024, 65535], dport: 443, status: 'disabled' }),
    ],
    settings: { block_logging: false },
  }),
  aliases: config({
    aliases: [
      alias('web', 'host', ['192.0.2.10', '192.0.2.11', '2001:db8::10', '<more>']),
      alias('more', 'network', ['198.51.100.0/25', '198.51.100.128/25', '10.1.1.5-10.1.1.17']),
      alias('feed', 'url_table', ['https://lists.example.org/drop.txt']),
      alias('webports', 'port', ['80', '443', '8000:8080']),
      alias('off', 'host', ['192.0.2.99'], false),
    ],
    urlTables: { feed: ['203.0.113.0/24', '2001:db8:bad::/48'] },
    rules: [
      rule({ id: fixtureId(11), action: 'block', src: '<feed>' }),
      rule({ id: fixtureId(12), action: 'pass', dst: '<web>', dport: 443 }),
      rule({ id: fixtureId(13), action: 'block', dst: '<off>', dst_invert: true, dport: 25 }),
      rule({ id: fixtureId(14), action: 'pass', ip_version: 'inet6', dst: '<more>' }),
    ],
  }),
  nat: config({
    aliases: [alias('inside', 'network', ['192.168.0.0/16'])],
    nat: [
      nat(fixtureId(21), { nat_type: 'dnat', interface: 'em0', protocol: 'tcp', dst_addr: '203.0.113.1', dst_port: { start: 8443, end: 8443 }, redirect: { address: '192.168.1.10', port: { start: 443, end: 443 } } }),
      nat(fixtureId(22), { nat_type: 'dnat', interface: 'em0', protocol: 'tcp/udp', src_addr: '2001:db8:1::/64', dst_port: { start: 5000, end: 5010 }, redirect: { address: '2001:db8::20', port: { start: 5000, end: 5000 } } }),
      nat(fixtureId(23), { nat_type: 'snat', interface: 'em0', src_addr: '10.1.0.0/16', redirect: { address: '203.0.113.5', port: null }, static_port: true }),
      nat(fixtureId(24), { nat_type: 'masquerade', interface: 'em0', src_addr: '<inside>' }),
      nat(fixtureId(25), { nat_type: 'binat', interface: 'em0', src_addr: '192.168.1.7', redirect: { address: '203.0.113.7', port: null } }),
      nat(fixtureId(26), { nat_type: 'masquerade', interface: 'em1', status: 'disabled' }),
      // pf keeps only the first protocol of `binat … proto { tcp udp }`: one binat rule per protocol.
      nat(fixtureId(27), { nat_type: 'binat', interface: 'em0', protocol: 'tcp/udp', src_addr: '192.168.1.8', redirect: { address: '203.0.113.8', port: null } }),
    ],
  }),
  schedules: config({
    schedules: [schedule('sched-1', 'office', '08:00-12:00,13:00-17:00', 'mon,tue,wed,thu,fri'), schedule('sched-2', 'night', '22:00-06:00'), schedule('sched-3', 'off', '00:00-00:01', 'sun', false)],
    rules: [
      rule({ id: fixtureId(31), action: 'pass', dport: 22, schedule_id: 'sched-1' }),
      rule({ id: fixtureId(32), action: 'block', dport: 80, schedule_id: 'sched-2' }),
      rule({ id: fixtureId(33), action: 'block', dport: 81, schedule_id: 'sched-3' }),
    ],
    time: { day: 'wed', minute: 9 * 60 + 30 },
  }),
  // Free text reaches comments only, through one encoding per format: nothing in it can end a comment,
  // continue it onto the next line (pf joins a line ending in \) or close a quoted string.
  'free-text': config({
    schedules: [schedule('sched-9', 'night\npass all\r\n"x" \\', '22:00-06:00')],
    rules: [
      rule({ id: fixtureId(61), action: 'block', dport: 23, description: 'ends in a backslash \\', label: 'telnet#1' }),
      rule({ id: fixtureId(62), action: 'block', dport: 25, description: 'quotes "\' 100% {braces}; semicolons' }),
      rule({ id: fixtureId(63), action: 'block', dport: 26, schedule_id: 'sched-9', description: 'héllo wörld \u202e\u2028\u0000' }),
    ],
  }),
  // "interface address" is the rule's own interface: pf `(em0)`, nftables a fib lookup keyed by that interface.
  'interface-address': config({
    rules: [
      rule({ id: fixtureId(71), action: 'pass', interface: 'em0', dst: 'interface address', dport: 22 }),
      rule({ id: fixtureId(72), action: 'block', direction: 'any', interface: 'em1', ip_version: 'inet', protocol: 'udp', src: 'interface address', src_invert: true, dport: 53 }),
    ],
    nat: [
      nat(fixtureId(73), { nat_type: 'dnat', interface: 'em0', protocol: 'tcp', dst_addr: 'interface address', dst_port: { start: 443, end: 443 }, redirect: { address: '192.168.1.10', port: { start: 8443, end: 8443 } } }),
      nat(fixtureId(74), { nat_type: 'snat', interface: 'em0', src_addr: 'interface address', dst_addr: '198.51.100.0/24', redirect: { address: '203.0.113.5', port: null } }),
    ],
  }),
  // A fresh appliance: new connections entering a WAN interface are blocked unless a rule passes them (after
  // the user rules in nftables, before them in pf, whose last match wins); the API stays reachable from LAN.
  'wan-default-block': config({
    system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: ['lan0'], nflogGroup: 5, wanDefaultBlock: ['wan0', 'wan1'] },
    rules: [rule({ id: fixtureId(81), action: 'pass', interface: 'wan0', protocol: 'tcp', dport: 443, description: 'published web server' })],
  }),
  'wan-default-block-unlogged': config({
    system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 5, wanDefaultBlock: ['wan0'] },
    settings: { block_logging: false },
  }),
  // High availability: VRRP adverts on the virtual addresses' interfaces, state sync on the sync link (issue 39).
  cluster: config({
    system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 5, cluster: { vrrpInterfaces: ['lan0', 'wan0'], syncInterface: 'sync0', syncPort: 3780 } },
  }),
  'anti-lockout': config({
    system: { api: { host: '2001:db8::1', port: 443 }, antiLockoutInterfaces: ['lan0', 'lan1'], nflogGroup: 5 },
    rules: [rule({ id: fixtureId(41), action: 'block', protocol: 'any', direction: 'any', log: true })],
  }),
};

for (const [name, input] of Object.entries(cases)) {
  for (const [extension, compile] of [['pf', compilePf], ['nft', compileNftables]] as const) {
    test(`golden: ${name}.${extension}`, () => {
      assertGolden(`${name}.${extension}`, compile(input).text);
    });
  }
}

test('compile errors name the object: unknown alias, nesting cycle', () => {
  assert.throws(() => compileNftables(config({ rules: [rule({ id: fixtureId(51), dst: '<ghost>' })] })), (e: unknown) => e instanceof CompileError && /ghost/.test((e as Error).message));
  const cyclic = config({ aliases: [alias('a', 'network', ['<b>']), alias('b', 'network', ['<a>'])] });
  assert.throws(() => compilePf(cyclic), /alias nesting cycle: a -> b -> a/);
  // An interface name that could end a quoted word or a list never reaches the WAN default block's line.
  const hostileWan = config({ system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 1, wanDefaultBlock: ['wan0" accept'] } });
  for (const compile of [compileNftables, compilePf]) assert.throws(() => compile(hostileWan), (e: unknown) => e instanceof CompileError && /WAN-role interfaces/.test((e as Error).message));
});

const skip = rootSkipReason('loading nftables golden files into a network namespace');
test('the kernel accepts every nftables golden file (fresh network namespace, loaded twice)', { skip }, async () => {
  for (const name of Object.keys(cases)) {
    const file = `${GOLDEN_DIR}${name}.nft`;
    // Loading twice proves the create/delete/create idiom replaces an existing table.
    const result = await runCommand('unshare', ['-n', 'sh', '-c', 'nft -f "$1" && nft -f "$1" && nft list tables', 'sh', file]);
    assert.equal(result.code, 0, `${name}.nft: ${result.stderr}`);
    assert.equal(result.stdout.trim(), 'table inet bulwark');
  }
});
