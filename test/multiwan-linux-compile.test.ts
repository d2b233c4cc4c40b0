/**
 * Multi-WAN compiled for Linux (areas/multiwan/compile-nftables.ts): the chain lines, ip rules and gateway
 * routes for gateways, failover and weighted groups, instances and leaks, checked line by line and (as root)
 * by `nft -c`; and every value that reaches the table or the rules refused when it is not one token of its kind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileLinuxRouting, withoutNftLabel, type LinuxCompileInput } from '../src/areas/multiwan/compile-nftables.js';
import type { GatewayView } from '../src/areas/multiwan/compile.js';
import { HttpError } from '../src/core/errors.js';
import { runCommand } from '../src/platform/exec.js';
import { ruleWords } from '../src/platform/routing.js';

const ids = { a: '00000000-0000-0000-0000-00000000000a', b: '00000000-0000-0000-0000-00000000000b', lte: '00000000-0000-0000-0000-00000000000c' };
const gateway = (id: string, iface: string, hop: string, state = 'up', extra: Record<string, unknown> = {}): [string, GatewayView] =>
  [id, { id, name: id, interface: iface, next_hop: hop, ip_version: 'v4', enabled: true, state, last_mos: 4.2, ...extra }];

function input(overrides: Partial<LinuxCompileInput> = {}): LinuxCompileInput {
  return {
    policies: [],
    instances: new Map([['i0', { name: 'default', fib_number: 0 }], ['i5', { name: 'guests', fib_number: 5 }]]),
    gateways: new Map([gateway(ids.a, 'wan0', '192.0.2.1'), gateway(ids.b, 'wan1', '198.51.100.1'), gateway(ids.lte, 'lte0', '203.0.113.1', 'down')]),
    groups: new Map([['fo', { name: 'fo', policy: 'failover', sticky: 'none' }], ['lb', { name: 'lb', policy: 'weighted_lb', sticky: 'src' }]]),
    members: [
      { group_id: 'fo', gateway_id: ids.a, tier: 1, weight: 1 }, { group_id: 'fo', gateway_id: ids.b, tier: 2, weight: 1 },
      { group_id: 'lb', gateway_id: ids.a, tier: 1, weight: 3 }, { group_id: 'lb', gateway_id: ids.b, tier: 1, weight: 1 },
      { group_id: 'lb', gateway_id: ids.lte, tier: 1, weight: 5 },
    ],
    leaks: [],
    instanceMembers: [],
    ...overrides,
  };
}

const policy = (id: string, priority: number, fields: Record<string, unknown>) =>
  ({ id, priority, name: id, status: 'active', ip_version: 'both', src_addr: 'any', dst_addr: 'any', protocol: 'any', iface_in: null, src_port: null, dst_port: null, ...fields });

test('gateways get tables from 65536 in id order; policies compile in priority order to marks, a failover group to its selected gateway, a weighted group to a flow hash', async () => {
  const plan = compileLinuxRouting(input({
    policies: [
      policy('p2', 20, { action_kind: 'set_group', target_id: 'lb', iface_in: 'lan0', src_addr: '10.0.0.0/8' }),
      policy('p1', 10, { action_kind: 'set_gateway', target_id: ids.b, protocol: 'tcp', dst_port: '443', iface_in: 'lan0' }),
      policy('p3', 30, { action_kind: 'set_group', target_id: 'fo', ip_version: 'v4' }),
      policy('p4', 40, { action_kind: 'set_instance', target_id: 'i5', iface_in: 'guest0' }),
      policy('off', 5, { action_kind: 'set_gateway', target_id: ids.a, status: 'disabled' }),
    ],
  }));
  assert.deepEqual(plan.gateways.map((g) => [g.interface, g.table]), [['wan0', 65536], ['wan1', 65537], ['lte0', 65538]]);
  assert.deepEqual(plan.ruleLines.map(withoutNftLabel), [
    'ct direction original iifname "lan0" meta nfproto ipv4 meta l4proto tcp th dport 443 ct mark 0x00000000',
    'ct direction original iifname "lan0" meta nfproto ipv4 meta l4proto tcp th dport 443 meta mark set 65537 accept',
    'ct direction original iifname "lan0" meta nfproto ipv4 ip saddr 10.0.0.0/8 ct mark 0x00000000',
    // The down LTE gateway is left out; weights 3:1 over the healthy members, hashed on the source (sticky src)
    // with a seed of the policy's own, so a re-apply moves no source to another gateway.
    'ct direction original iifname "lan0" meta nfproto ipv4 ip saddr 10.0.0.0/8 meta mark set jhash ip saddr mod 4 seed 0x3946ca64 map { 0-2 : 65536, 3-3 : 65537 } accept',
    'ct direction original meta nfproto ipv4 ct mark 0x00000000',
    'ct direction original meta nfproto ipv4 meta mark set 65536 accept',
    'ct direction original iifname "guest0" meta nfproto ipv4 ct mark 0x00000000',
    'ct direction original iifname "guest0" meta nfproto ipv4 meta mark set 5 accept',
    'ct direction original iifname "guest0" meta nfproto ipv6 ct mark 0x00000000',
    'ct direction original iifname "guest0" meta nfproto ipv6 meta mark set 5 accept',
  ]);
  assert.match(plan.ruleLines[0], / ct mark set 0x15000001 comment "pbr:p1"$/);
  assert.deepEqual(Object.entries(plan.labels).map(([label, entry]) => [label, entry.mark.toString(16), entry.table]),
    [['pbr:p1', '15000001', 65537], ['pbr:p2', '15000002', -1], ['pbr:p3', '15000003', 65536], ['pbr:p4', '15000004', 5]]);
  assert.deepEqual(plan.rules.map((rule) => ruleWords(rule).join(' ')), [
    'fwmark 0x00010000/0x00010000 lookup main suppress_prefixlength 0 priority 14990',
    'fwmark 0x00010001 lookup 65537 priority 15000',
    'fwmark 0x00010000 lookup 65536 priority 15001',
    'fwmark 0x00000005 lookup 5 priority 15002',
  ]);
  assert.deepEqual(plan.routes.map((r) => `${r.table} default via ${r.via} dev ${r.dev}`), ['65536 default via 192.0.2.1 dev wan0', '65537 default via 198.51.100.1 dev wan1', '65538 default via 203.0.113.1 dev lte0']);
  assert.match(plan.nft, /^table inet bulwark_mwan \{\}\ndelete table inet bulwark_mwan\ntable inet bulwark_mwan \{\n\tchain steer \{\n\t\ttype filter hook prerouting priority mangle; policy accept;\n/);
  if (process.getuid?.() === 0) {
    const checked = await runCommand('nft', ['-c', '-f', '-'], { input: plan.nft });
    assert.equal(checked.code, 0, checked.stderr);
  }
});

test('leaks steer traffic entering the source instance\'s interfaces to the destination table (and back when bidirectional); members pin interfaces', () => {
  const plan = compileLinuxRouting(input({
    leaks: [{ id: 'l1', name: 'to-mgmt', src_instance_id: 'i5', dst_instance_id: 'i0', prefix: '10.9.0.0/16', protocol: 'udp', ports: '53', direction: 'bidirectional', enabled: true }],
    instanceMembers: [{ instance_id: 'i5', interface: 'guest0' }, { instance_id: 'i0', interface: 'lan0' }],
  }));
  assert.deepEqual(plan.ruleLines.map(withoutNftLabel).filter((l) => l.includes('meta mark set')), [
    'ct direction original iifname "guest0" meta nfproto ipv4 ip daddr 10.9.0.0/16 meta l4proto udp th dport 53 meta mark set 254 accept',
    'ct direction original iifname "lan0" meta nfproto ipv4 ip saddr 10.9.0.0/16 meta l4proto udp th dport 53 meta mark set 5 accept',
  ]);
  assert.deepEqual(plan.rules.filter((r) => r.selector[0] === 'iif').map((rule) => ruleWords(rule).join(' ')), ['iif guest0 lookup 5 priority 15900']);
});

test('a stored value that is not one token of its kind is refused (409 naming the field), never written', () => {
  const HOSTILE = ['"', '\n', 'x" accept', 'lan0"\n\tchain x {', '1.2.3.4 accept', '443 accept', '{', '}', ';', '#', 'a b', '$(reboot)', ''];
  const cases: [string, (value: string) => Partial<LinuxCompileInput>][] = [
    ['policy iface_in', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, iface_in: v })] })],
    ['src_addr', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, src_addr: v })] })],
    ['dst_addr', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, dst_addr: v })] })],
    ['src_port', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, src_port: v })] })],
    ['dst_port', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, dst_port: v })] })],
    ['protocol', (v) => ({ policies: [policy('p', 1, { action_kind: 'set_gateway', target_id: ids.a, protocol: v })] })],
    ['gateway interface', (v) => ({ gateways: new Map([gateway(ids.a, v, '192.0.2.1')]) })],
    ['gateway next_hop', (v) => ({ gateways: new Map([gateway(ids.a, 'wan0', v)]) })],
    ['instance member', (v) => ({ instanceMembers: [{ instance_id: 'i5', interface: v }] })],
    ['prefix', (v) => ({ instanceMembers: [{ instance_id: 'i5', interface: 'g0' }], leaks: [{ id: 'l', src_instance_id: 'i5', dst_instance_id: 'i0', prefix: v, protocol: 'any', ports: null, direction: 'one_way', enabled: true }] })],
    ['ports', (v) => ({ instanceMembers: [{ instance_id: 'i5', interface: 'g0' }], leaks: [{ id: 'l', src_instance_id: 'i5', dst_instance_id: 'i0', prefix: '10.0.0.0/8', protocol: 'any', ports: v, direction: 'one_way', enabled: true }] })],
  ];
  for (const [field, build] of cases) {
    for (const value of HOSTILE) {
      if (value === '' && ['src_port', 'dst_port', 'ports', 'policy iface_in', 'protocol'].includes(field)) continue; // empty means "not set" there
      assert.throws(() => compileLinuxRouting(input(build(value))), (error: HttpError) => {
        assert.equal(error.statusCode, 409, `${field} ${JSON.stringify(value)}`);
        assert.ok(error.message.startsWith(`${field}:`), error.message);
        assert.ok(!error.message.includes(value) || value.length < 2, 'the value is not echoed');
        return true;
      }, `${field} ${JSON.stringify(value)}`);
    }
  }
});
