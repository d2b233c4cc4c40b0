/**
 * One table of configurations and packets, fed to both compilers: the pf text and the nftables text must
 * decide every packet the same way, and as expected. (Interpreters: test/helpers/ruleset-eval.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePf } from '../src/compile/pf.js';
import { compileNftables } from '../src/compile/nftables.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { buildModel } from '../src/compile/firewall-model.js';
import { decide } from '../src/compile/firewall-decision.js';
import { asCrossing, evaluateNftables, evaluatePf, translateNftables, translatePf, type Packet, type Verdict } from './helpers/ruleset-eval.js';
import { alias, config, nat, rule, schedule } from './helpers/firewall-fixtures.js';

const tcp = (dport: number, extra: Partial<Packet> = {}): Packet => ({ dir: 'in', iface: 'eth1', proto: 'tcp', src: '10.0.0.2', dst: '10.9.0.2', sport: 40000, dport, ...extra });
const udp = (dport: number, extra: Partial<Packet> = {}): Packet => ({ ...tcp(dport, extra), proto: 'udp', ...extra });
const v6 = (dport: number, extra: Partial<Packet> = {}): Packet => tcp(dport, { src: '2001:db8:1::2', dst: '2001:db8:9::2', ...extra });

interface Case {
  name: string;
  config: FirewallConfig;
  packets: [Packet, Verdict][];
  /** Inbound packets and where destination NAT sends them (`address port N`; undefined: not translated). */
  translations?: [Packet, string | undefined][];
}

/** The firewall's own addresses: eth1 faces the clients (10.0.0.0/24), eth2 the servers (10.9.0.0/24). */
const HOST = { eth1: ['10.0.0.1', '2001:db8:1::1'], eth2: ['10.9.0.1', '2001:db8:9::1'] };
const onHost = (packet: Packet): Packet => ({ ...packet, host: HOST });

const cases: Case[] = [
  { name: 'no rules: default pass', config: config(), packets: [[tcp(80), 'pass'], [v6(80), 'pass']] },
  {
    name: 'block one port, the other works',
    config: config({ rules: [rule({ action: 'block', dport: 8081 })] }),
    packets: [[tcp(8081), 'block'], [tcp(8080), 'pass'], [udp(8081), 'pass'], [v6(8081), 'block']],
  },
  {
    name: 'quick pass above a quick block wins; reversed it loses',
    config: config({ rules: [rule({ action: 'pass', dport: 8081 }), rule({ action: 'block', dport: 8081 })] }),
    packets: [[tcp(8081), 'pass']],
  },
  {
    name: 'reversed order',
    config: config({ rules: [rule({ action: 'block', dport: 8081 }), rule({ action: 'pass', dport: 8081 })] }),
    packets: [[tcp(8081), 'block']],
  },
  {
    name: 'without quick the last match decides',
    config: config({ rules: [rule({ action: 'block', quick: false }), rule({ action: 'pass', quick: false, dport: 22 })] }),
    packets: [[tcp(22), 'pass'], [tcp(80), 'block'], [udp(80), 'pass']],
  },
  {
    name: 'without quick, a later catch-all overrides',
    config: config({ rules: [rule({ action: 'pass', quick: false, dport: 22 }), rule({ action: 'block', quick: false })] }),
    packets: [[tcp(22), 'block']],
  },
  {
    name: 'a quick rule beats non-quick rules before and after it',
    config: config({ rules: [rule({ action: 'pass', quick: false, dport: 22 }), rule({ action: 'block', dport: [20, 30] }), rule({ action: 'pass', quick: false })] }),
    packets: [[tcp(22), 'block'], [tcp(80), 'pass']],
  },
  {
    name: 'direction and interface',
    config: config({ rules: [rule({ action: 'block', direction: 'in', interface: 'eth1' }), rule({ action: 'block', direction: 'out', interface: 'eth2', dport: 25 })] }),
    packets: [
      [tcp(80), 'block'], [tcp(80, { iface: 'eth2' }), 'pass'], [tcp(80, { dir: 'out' }), 'pass'],
      [tcp(25, { dir: 'out', iface: 'eth2' }), 'block'], [tcp(25, { dir: 'in', iface: 'eth2' }), 'pass'],
    ],
  },
  {
    name: 'direction any covers both',
    config: config({ rules: [rule({ action: 'blockdrop', direction: 'any', interface: 'eth3', protocol: 'any' })] }),
    packets: [[tcp(80, { iface: 'eth3' }), 'block'], [udp(53, { iface: 'eth3', dir: 'out' }), 'block'], [tcp(80), 'pass']],
  },
  {
    name: 'aliases: nested, both families, ranges',
    config: config({
      aliases: [alias('web', 'host', ['10.9.0.2', '2001:db8:9::2', '<more>']), alias('more', 'network', ['172.16.0.0/24', '192.168.5.10-192.168.5.20'])],
      rules: [rule({ action: 'block', dst: '<web>' })],
    }),
    packets: [
      [tcp(80), 'block'], [v6(80), 'block'], [tcp(80, { dst: '172.16.0.77' }), 'block'], [tcp(80, { dst: '192.168.5.15' }), 'block'],
      [tcp(80, { dst: '192.168.5.21' }), 'pass'], [v6(80, { dst: '2001:db8:9::3' }), 'pass'],
    ],
  },
  {
    name: 'a disabled alias is empty',
    config: config({ aliases: [alias('off', 'host', ['10.9.0.2'], false)], rules: [rule({ action: 'block', dst: '<off>' })] }),
    packets: [[tcp(80), 'pass']],
  },
  {
    // pfctl joins a line ending in \ with the next, comments included: the rule line after a rule's
    // comment must stay a rule.
    name: 'free text ending in a backslash does not swallow the rule after it',
    config: config({ rules: [rule({ action: 'block', dport: 22, description: 'trailing \\' }), rule({ action: 'block', dport: 23, label: 'l\\' })] }),
    packets: [[tcp(22), 'block'], [tcp(23), 'block'], [tcp(24), 'pass']],
  },
  {
    name: 'negation of an address and of a one-family alias',
    config: config({
      aliases: [alias('lan', 'network', ['10.0.0.0/8'])],
      rules: [rule({ action: 'block', src: '10.0.0.0/8', src_invert: true, dport: 22 }), rule({ action: 'block', dst: '<lan>', dst_invert: true, dport: 23 })],
    }),
    packets: [
      [tcp(22), 'pass'], [tcp(22, { src: '192.168.1.1' }), 'block'], [v6(22), 'pass'],
      [tcp(23), 'pass'], [tcp(23, { dst: '8.8.8.8' }), 'block'], [v6(23), 'block'],
    ],
  },
  {
    name: 'address family restriction and icmp',
    config: config({ rules: [rule({ action: 'block', ip_version: 'inet6', dport: 80 }), rule({ action: 'block', protocol: 'icmp' })] }),
    packets: [[v6(80), 'block'], [tcp(80), 'pass'], [{ ...tcp(0), proto: 'icmp', dport: undefined }, 'block']],
  },
  {
    name: 'tcp/udp, port ranges, source ports, address ranges',
    config: config({ rules: [rule({ action: 'block', protocol: 'tcp/udp', dport: 53 }), rule({ action: 'block', protocol: 'udp', sport: [1000, 2000] }), rule({ action: 'block', dst: '10.9.0.10-10.9.0.20' })] }),
    packets: [
      [udp(53), 'block'], [tcp(53), 'block'], [udp(54), 'pass'], [udp(54, { sport: 1500 }), 'block'], [udp(54, { sport: 2001 }), 'pass'],
      [tcp(80, { dst: '10.9.0.15' }), 'block'], [tcp(80, { dst: '10.9.0.21' }), 'pass'],
    ],
  },
  {
    name: 'block return blocks every protocol it names',
    config: config({ rules: [rule({ action: 'blockreturn', protocol: 'any', dst: '10.9.0.2' })] }),
    packets: [[tcp(80), 'block'], [udp(53), 'block'], [{ ...tcp(0), proto: 'gre', dport: undefined }, 'block'], [tcp(80, { dst: '10.9.0.3' }), 'pass']],
  },
  {
    name: 'disabled rules and rules outside their schedule are not loaded',
    config: config({
      schedules: [schedule('sched-office', 'office', '08:00-12:00', 'mon,tue,wed'), schedule('sched-night', 'night', '22:00-06:00', 'tue')],
      rules: [
        rule({ action: 'block', dport: 81, status: 'disabled' }),
        rule({ action: 'block', dport: 82, schedule_id: 'sched-office' }),
        rule({ action: 'block', dport: 83, schedule_id: 'sched-night' }),
      ],
    }),
    packets: [[tcp(81), 'pass'], [tcp(82), 'block'], [tcp(83), 'pass']],
  },
  {
    name: 'anti-lockout and loopback survive a block-all',
    config: config({ rules: [rule({ action: 'block', protocol: 'any', direction: 'any' })] }),
    packets: [
      [tcp(8080, { local: true }), 'pass'], [tcp(8081, { local: true }), 'block'], [tcp(8080), 'block'],
      [tcp(80, { iface: 'lo', src: '127.0.0.1', dst: '127.0.0.1' }), 'pass'], [tcp(80, { dir: 'out' }), 'block'],
    ],
  },
  {
    name: 'anti-lockout restricted to LAN-role interfaces keeps the API reachable from those only',
    config: config({
      rules: [rule({ action: 'block', protocol: 'any', direction: 'any' })],
      system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: ['eth1', 'eth3'], nflogGroup: 1 },
    }),
    packets: [
      [tcp(8080, { local: true }), 'pass'], [tcp(8080, { local: true, iface: 'eth3' }), 'pass'],
      [tcp(8080, { local: true, iface: 'eth0' }), 'block'], [tcp(8081, { local: true }), 'block'],
    ],
  },
  {
    name: 'interface address: the addresses of the rule\'s interface, not any, nor another interface\'s',
    config: config({ rules: [rule({ action: 'block', interface: 'eth1', dst: 'interface address', dport: 22 })] }),
    packets: [
      [onHost(tcp(22, { dst: '10.0.0.1' })), 'block'], [onHost(v6(22, { dst: '2001:db8:1::1' })), 'block'],
      [onHost(tcp(22)), 'pass'], [onHost(tcp(22, { dst: '10.9.0.1' })), 'pass'], [onHost(tcp(23, { dst: '10.0.0.1' })), 'pass'],
    ],
  },
  {
    name: 'interface address negated, as a source, limited to one family',
    config: config({
      rules: [
        rule({ action: 'block', interface: 'eth1', dst: 'interface address', dst_invert: true, dport: 80 }),
        rule({ action: 'block', direction: 'out', interface: 'eth2', protocol: 'udp', src: 'interface address', dport: 53 }),
        rule({ action: 'block', interface: 'eth1', ip_version: 'inet', dst: 'interface address', dport: 25 }),
      ],
    }),
    packets: [
      [onHost(tcp(80)), 'block'], [onHost(tcp(80, { dst: '10.0.0.1' })), 'pass'],
      [onHost(udp(53, { dir: 'out', iface: 'eth2', src: '10.9.0.1' })), 'block'], [onHost(udp(53, { dir: 'out', iface: 'eth2' })), 'pass'],
      [onHost(tcp(25, { dst: '10.0.0.1' })), 'block'], [onHost(v6(25, { dst: '2001:db8:1::1' })), 'pass'],
    ],
  },
  {
    name: 'a port forward to interface address translates traffic to the firewall only, not transit traffic',
    config: config({ nat: [nat('fwd', { nat_type: 'dnat', interface: 'eth1', protocol: 'tcp', dst_addr: 'interface address', dst_port: { start: 443, end: 443 }, redirect: { address: '10.9.0.2', port: { start: 8443, end: 8443 } } })] }),
    packets: [],
    translations: [
      [onHost(tcp(443, { dst: '10.0.0.1' })), '10.9.0.2 port 8443'],
      [onHost(tcp(443)), undefined],
      [onHost(tcp(443, { dst: '10.9.0.1' })), undefined],
      [onHost(tcp(443, { dst: '10.0.0.1', iface: 'eth2' })), undefined],
      [onHost(tcp(444, { dst: '10.0.0.1' })), undefined],
    ],
  },
  {
    name: 'a port forward to any translates transit traffic too',
    config: config({ nat: [nat('fwd', { nat_type: 'dnat', interface: 'eth1', protocol: 'tcp', dst_port: { start: 443, end: 443 }, redirect: { address: '10.9.0.2', port: { start: 8443, end: 8443 } } })] }),
    packets: [],
    translations: [[onHost(tcp(443, { dst: '10.0.0.1' })), '10.9.0.2 port 8443'], [onHost(tcp(443)), '10.9.0.2 port 8443']],
  },
];

// pf names its loopback lo0 where Linux says lo: the same packet, the platform's name.
const forPf = (packet: Packet): Packet => (packet.iface === 'lo' ? { ...packet, iface: 'lo0' } : packet);

for (const c of cases) {
  test(`pf and nftables agree: ${c.name}`, () => {
    const pf = compilePf(c.config).text;
    const nft = compileNftables(c.config).text;
    const model = buildModel(c.config);
    for (const [packet, expected] of c.packets) {
      const label = JSON.stringify(packet);
      assert.equal(evaluatePf(pf, forPf(packet)), expected, `pf: ${label}\n${pf}`);
      assert.equal(evaluateNftables(nft, packet), expected, `nftables: ${label}\n${nft}`);
      const { crossing, host } = asCrossing(packet);
      assert.equal(decide(model, model.rules, crossing, host).verdict, expected, `decision model: ${label}`);
    }
    for (const [packet, expected] of c.translations ?? []) {
      const label = JSON.stringify(packet);
      assert.equal(translatePf(pf, packet), expected, `pf: ${label}\n${pf}`);
      assert.equal(translateNftables(nft, packet), expected, `nftables: ${label}\n${nft}`);
    }
  });
}

test('schedules follow the local time the ruleset is compiled for, including ranges past midnight', () => {
  const base = { schedules: [schedule('s', 'night', '22:00-06:00', 'tue')], rules: [rule({ action: 'block', dport: 83, schedule_id: 's' })] };
  const at = (day: FirewallConfig['time']['day'], minute: number) => config({ ...base, time: { day, minute } });
  for (const [time, expected] of [[at('tue', 23 * 60), 'block'], [at('wed', 5 * 60), 'block'], [at('wed', 7 * 60), 'pass'], [at('tue', 5 * 60), 'pass']] as const) {
    assert.equal(evaluatePf(compilePf(time).text, tcp(83)), expected, JSON.stringify(time.time));
    assert.equal(evaluateNftables(compileNftables(time).text, tcp(83)), expected, JSON.stringify(time.time));
  }
});
