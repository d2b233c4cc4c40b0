/**
 * Which established connections a block rule entering its window cuts: the whole ruleset decides, before and
 * after the edge, with the interface and direction each packet crosses (compile/schedule-edges.ts). The
 * drivers' side (conntrack on Linux, pf states on FreeBSD) is in packet-filter-drivers.test.ts and, in the
 * kernel, test/e2e/packet-filter-exact.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleEdge, type Crossing, type HostAddresses } from '../src/compile/schedule-edges.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { config, rule, schedule } from './helpers/firewall-fixtures.js';

const host: HostAddresses = { loopback: 'lo', byInterface: new Map([['eth1', ['10.0.0.1']], ['eth2', ['10.9.0.1']]]) };
const crossing = (over: Partial<Crossing> = {}): Crossing => ({ direction: 'in', iface: 'eth1', protocol: 'tcp', src: '10.0.0.2', dst: '10.9.0.2', sport: 40000, dport: 8081, ...over });
const evening = schedule('evening', 'evening', '17:15-23:00');
/** The edge at 17:30 on a Wednesday, the scheduled rules (all outside their window before it) entering. */
const edgeFor = (parts: Partial<FirewallConfig>) => scheduleEdge(config({ schedules: [evening], time: { day: 'wed', minute: 17 * 60 + 30 }, ...parts }), new Set());

test('a block rule entering its window cuts only what it matches: interface, direction, protocol, addresses, ports', () => {
  const block = rule({ action: 'block', interface: 'eth1', direction: 'in', dst: '10.9.0.0/24', dport: 8081, schedule_id: 'evening' });
  const edge = edgeFor({ rules: [block] });
  assert.deepEqual(edge.started, [{ id: block.id }]);
  assert.equal(edge.cuts(crossing(), host), true);
  assert.equal(edge.cuts(crossing({ iface: 'eth2' }), host), false, 'another interface');
  assert.equal(edge.cuts(crossing({ direction: 'out' }), host), false, 'the other direction');
  assert.equal(edge.cuts(crossing({ protocol: 'udp' }), host), false);
  assert.equal(edge.cuts(crossing({ dst: '10.8.0.2' }), host), false);
  assert.equal(edge.cuts(crossing({ dport: 8080 }), host), false);
  // When the connection table does not name the interface (pf floating states), a rule naming one is taken to match.
  assert.equal(edge.cuts(crossing({ iface: null }), host), true);
  assert.equal(edge.touches(crossing({ iface: 'eth2' }), host), true, 'the cheap first test leaves interfaces aside');
  assert.equal(edge.touches(crossing({ dport: 8080 }), host), false);
});

test('an earlier quick pass rule, or a later non-quick pass rule, keeps its connections through the edge', () => {
  const admin = rule({ action: 'pass', src: '10.0.0.5', dport: 8081 });
  const block = rule({ action: 'block', quick: false, dport: 8081, schedule_id: 'evening' });
  const later = rule({ action: 'pass', quick: false, src: '10.0.0.7', dport: 8081 });
  const edge = edgeFor({ rules: [admin, block, later] });
  assert.equal(edge.cuts(crossing(), host), true);
  assert.equal(edge.cuts(crossing({ src: '10.0.0.5' }), host), false, 'the quick pass rule before it still decides');
  assert.equal(edge.cuts(crossing({ src: '10.0.0.7' }), host), false, 'the last match decides: the later pass rule');
});

test('connections blocked before the edge are not "cut"; the API stays reachable through a block-all entering its window', () => {
  const always = rule({ action: 'block', dport: 8082 });
  const all = rule({ action: 'block', direction: 'any', protocol: 'any', schedule_id: 'evening' });
  const edge = edgeFor({ rules: [always, all] });
  assert.equal(edge.cuts(crossing({ dport: 8082 }), host), false, 'already blocked');
  assert.equal(edge.cuts(crossing({ dport: 443 }), host), true);
  assert.equal(edge.cuts(crossing({ dst: '10.0.0.1', dport: 8080 }), host), false, 'anti-lockout: the API port on an own address');
  assert.equal(edge.cuts(crossing({ dst: '10.9.0.2', dport: 8080 }), host), true, 'the same port elsewhere is not the API');
  assert.equal(edge.cuts(crossing({ iface: 'lo', src: '127.0.0.1', dst: '127.0.0.1' }), host), false, 'loopback is never filtered');
});

test('"interface address" at an edge means the rule interface\'s own addresses', () => {
  const block = rule({ action: 'block', interface: 'eth1', dst: 'interface address', dport: 22, schedule_id: 'evening' });
  const edge = edgeFor({ rules: [block] });
  assert.equal(edge.cuts(crossing({ dst: '10.0.0.1', dport: 22 }), host), true);
  assert.equal(edge.cuts(crossing({ dst: '10.9.0.1', dport: 22 }), host), false, 'the firewall, but on another interface');
  assert.equal(edge.cuts(crossing({ dst: '10.9.0.2', dport: 22 }), host), false, 'transit');
  assert.equal(edge.cuts(crossing({ dst: '10.0.0.1', dport: 22, iface: null }), host), true);
});

test('a pass rule leaving its window is listed as ended; a rule whose window goes on is neither', () => {
  const office = schedule('office', 'office', '09:00-17:00');
  const ssh = rule({ action: 'pass', dport: 22, schedule_id: 'office' });
  const late = rule({ action: 'block', dport: 23, schedule_id: 'evening' });
  const edge = scheduleEdge(config({ schedules: [office, evening], rules: [ssh, late], time: { day: 'wed', minute: 17 * 60 + 30 } }), new Set([ssh.id, late.id]));
  assert.deepEqual(edge.ended, [{ id: ssh.id }]);
  assert.deepEqual(edge.started, [], 'the block rule was in force before');
});
