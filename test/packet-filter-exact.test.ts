/**
 * pf and nftables output that means exactly what was asked (issue 20): for each finding, the request through
 * the HTTP API and what both compilers make of the stored result, side by side. The FreeBSD driver's side
 * (hooks, pf enabled, stale tables, counters) is in packet-filter-drivers.test.ts; kernel behaviour in
 * test/e2e/packet-filter-exact.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import { evaluateNftables, evaluatePf, pfLogicalLines, type Packet } from './helpers/ruleset-eval.js';
import { alias, config, fixtureId, rule, schedule } from './helpers/firewall-fixtures.js';
import { compilePf } from '../src/compile/pf.js';
import { compileNftables } from '../src/compile/nftables.js';
import { packetFilterOf } from './helpers/areas.js';
import type { Crossing } from '../src/compile/firewall-decision.js';

const api = adminApi();
const { call, created } = api;
const expect400 = api.refused;
/** The stored configuration compiled to both dialects. */
const compiled = () => {
  const service = packetFilterOf(api.t.app);
  const snapshot = service.storedSnapshot();
  return { pf: service.compile(snapshot, 'pf').text, nft: service.compile(snapshot, 'nftables').text };
};
const removeAll = async () => {
  for (const kind of ['rules', 'nat', 'aliases', 'schedules']) {
    for (const object of (await call('GET', `/api/v1/${kind}`)).body) await call('DELETE', `/api/v1/${kind}/${object.id}`);
  }
};
const tcp = (dport: number, dst = '10.9.0.2'): Packet => ({ dir: 'in', iface: 'eth1', proto: 'tcp', src: '10.0.0.2', dst, sport: 40000, dport });

test('1. an emptied or disabled alias compiles to an empty table (pf: persist { }), never to a bare declaration', async () => {
  const servers = await created('/api/v1/aliases', { name: 'servers', alias_type: 'host', entries: ['10.9.0.2'] });
  await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_addr: '<servers>', dst_port_start: 80 });
  assert.match(compiled().pf, /^table <servers> persist \{ 10\.9\.0\.2 \}$/m);
  assert.equal((await call('PUT', `/api/v1/aliases/${servers.id}`, { enabled: false })).status, 200);
  const { pf, nft } = compiled();
  // pf.conf(5): a table declared without a list is left as it was on load, keeping the stale addresses.
  assert.match(pf, /^table <servers> persist \{ \}$/m);
  assert.doesNotMatch(pf, /^table <servers> persist$/m);
  // nftables replaces the whole table, so the set is declared afresh without elements.
  assert.match(nft, /set alias_servers_v4 \{\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\}/);
  assert.equal(evaluatePf(pf, tcp(80)), 'pass');
  assert.equal(evaluateNftables(nft, tcp(80)), 'pass');
  await removeAll();
});

test('3. binat with tcp/udp maps both protocols: one pf binat per protocol; nftables limited to the same protocols', async () => {
  const both = await created('/api/v1/nat', { nat_type: 'binat', interface: 'em0', protocol: 'tcp/udp', src_addr: '192.168.1.7', redirect_addr: '203.0.113.7' });
  let { pf, nft } = compiled();
  assert.deepEqual(pf.split('\n').filter((l) => l.startsWith('binat ')), [
    'binat on em0 inet proto tcp from 192.168.1.7 to any -> 203.0.113.7',
    'binat on em0 inet proto udp from 192.168.1.7 to any -> 203.0.113.7',
  ]);
  assert.match(nft, /iifname "em0" ip daddr 203\.0\.113\.7 meta l4proto @l4_tcp_udp counter dnat ip to 192\.168\.1\.7/);
  assert.match(nft, /oifname "em0" ip saddr 192\.168\.1\.7 meta l4proto @l4_tcp_udp counter snat ip to 203\.0\.113\.7/);
  // A single protocol: pf's binat matches only it, and so does nftables (it used to translate everything).
  assert.equal((await call('PUT', `/api/v1/nat/${both.id}`, { protocol: 'tcp' })).status, 200);
  ({ pf, nft } = compiled());
  assert.match(pf, /^binat on em0 inet proto tcp from 192\.168\.1\.7 to any -> 203\.0\.113\.7$/m);
  assert.match(nft, /ip daddr 203\.0\.113\.7 meta l4proto tcp counter dnat ip to 192\.168\.1\.7/);
  assert.match(nft, /ip saddr 192\.168\.1\.7 meta l4proto tcp counter snat ip to 203\.0\.113\.7/);
  await removeAll();
});

test('4. static-port with a redirect port is refused (pfctl cannot load it); static-port only for snat and masquerade', async () => {
  await expect400('POST', '/api/v1/nat', { nat_type: 'snat', interface: 'em0', protocol: 'tcp', src_addr: '10.1.0.0/16', redirect_addr: '203.0.113.5', redirect_port_start: 5000, static_port: true }, /^body\.static_port cannot be combined with a redirect port/);
  await expect400('POST', '/api/v1/nat', { nat_type: 'dnat', interface: 'em0', protocol: 'tcp', dst_port_start: 80, redirect_addr: '10.0.0.5', static_port: true }, /^body\.static_port applies to snat and masquerade only/);
  const snat = await created('/api/v1/nat', { nat_type: 'snat', interface: 'em0', protocol: 'tcp', src_addr: '10.1.0.0/16', redirect_addr: '203.0.113.5', static_port: true });
  await expect400('PUT', `/api/v1/nat/${snat.id}`, { redirect_port_start: 5000 }, /^body\.static_port cannot be combined/);
  assert.match(compiled().pf, /^nat on em0 inet proto tcp from 10\.1\.0\.0\/16 to any -> 203\.0\.113\.5 static-port$/m);
  await removeAll();
});

test('5. alias names pf reads as keywords, numbers or options are refused for every platform', async () => {
  for (const name of ['all', 'any', 'user', 'group', 'tag', 'queue', 'port', 'ALL', '-x', '123', 'include']) {
    await expect400('POST', '/api/v1/aliases', { name, alias_type: 'host', entries: ['10.0.0.1'] }, /^body\.name: .*(pf keyword|is a number|starts with -)/);
  }
  const fine = await created('/api/v1/aliases', { name: 'all_hosts', alias_type: 'host', entries: ['10.0.0.1'] });
  await expect400('PUT', `/api/v1/aliases/${fine.id}`, { name: 'table' }, /^body\.name: "table" is a pf keyword/);
  assert.match(compiled().pf, /^table <all_hosts> persist \{ 10\.0\.0\.1 \}$/m);
  // A keyword name stored before this check cannot reach pfctl: the pf compiler refuses it by name.
  assert.throws(() => compilePf(config({ aliases: [alias('any', 'host', ['10.0.0.1'])] })), /alias "any" is a pf keyword/);
  await removeAll();
});

test('6. a description ending in a backslash does not swallow the next rule', async () => {
  const first = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22, description: 'ends in a backslash \\' });
  const second = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 23, description: 'next rule' });
  assert.equal(first.description, 'ends in a backslash \\', 'the description is stored as sent');
  const { pf, nft } = compiled();
  // pfctl joins a line ending in \ with the next: the comment must not end in one.
  assert.ok(pfLogicalLines(pf).includes(`block in log quick proto tcp to any port 23 label "${second.id}"`), pf);
  assert.match(pf, new RegExp(`^# ${first.id} \\| ends in a backslash %5C$`, 'm'));
  assert.equal(evaluatePf(pf, tcp(23)), 'block');
  assert.equal(evaluateNftables(nft, tcp(23)), 'block');
  await removeAll();
});

test('7. a schedule name cannot carry text into the ruleset: strict grammar (400), and the comment is encoded', async () => {
  for (const name of ['night\npass all', 'a"b', 'ends\\', 'x\ry', 'tab\tname', ' ', '#hash', '{brace}', 'semi;colon']) {
    await expect400('POST', '/api/v1/schedules', { name, time_ranges: '22:00-06:00' }, /^body\.name must be 1-64 characters/);
  }
  const night = await created('/api/v1/schedules', { name: 'Nacht (Mo-Fr) 22:00+', time_ranges: '22:00-06:00' });
  await expect400('PUT', `/api/v1/schedules/${night.id}`, { name: 'x\n}\ntable inet evil {' }, /^body\.name must be/);
  // A raw stored name (from before the grammar) is rendered encoded by both compilers.
  const stored = config({
    schedules: [schedule('sched-1', 'x\npass quick all\n# "', '22:00-06:00')],
    rules: [rule({ id: fixtureId(1), action: 'block', dport: 80, schedule_id: 'sched-1' })],
    time: { day: 'wed', minute: 12 * 60 },
  });
  for (const text of [compilePf(stored).text, compileNftables(stored).text]) {
    assert.match(text, new RegExp(`^# ${fixtureId(1)} not loaded: outside schedule "x%0Apass quick all%0A# %22"$`, 'm'));
    assert.doesNotMatch(text, /^pass quick all$/m);
  }
  await removeAll();
});

test('9. adaptive start 0 is refused; UDP and ICMP timeouts set every phase pf keeps', async () => {
  await expect400('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'udp', state_options: { adaptive_timeouts: { start: 0, end: 100 } } }, /^body\.state_options\.adaptive_timeouts\.start must be at least 1/);
  await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'udp', state_options: { adaptive_timeouts: { start: 1, end: 100 }, timeout_udp: 30, timeout_icmp: 10, timeout_tcp: 600 } });
  const { pf } = compiled();
  assert.match(pf, /keep state \(adaptive\.start 1, adaptive\.end 100, tcp\.established 600, udp\.first 30, udp\.single 30, udp\.multiple 30, icmp\.first 10, icmp\.error 10\)/);
  await removeAll();
});

test('9. interface names pf cannot read are refused for rules and NAT; a LAN role on such a name stops the compile by name', async () => {
  await expect400('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: '-x' }, /^body\.interface must be 1-15 characters of A-Z, a-z, 0-9, _, \. and -, starting with a letter/);
  await expect400('POST', '/api/v1/nat', { nat_type: 'masquerade', interface: 'all', protocol: 'any' }, /^body\.interface: "all" is a pf keyword/);
  const lan = config({ system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: ['eth0:1'], nflogGroup: 1 } });
  assert.throws(() => compilePf(lan), /LAN-role interfaces \(anti-lockout\): interface "eth0:1"/);
  assert.throws(() => compileNftables(lan), /LAN-role interfaces \(anti-lockout\): interface "eth0:1"/);
});

test('9. "interface address" stays the interface\'s addresses: pf (em0), nftables a fib lookup on that interface; a port forward to it leaves transit traffic alone', async () => {
  const forward = await created('/api/v1/nat', { nat_type: 'dnat', interface: 'eth1', protocol: 'tcp', dst_addr: 'interface address', dst_port_start: 443, redirect_addr: '10.9.0.2', redirect_port_start: 8443 });
  assert.equal(forward.dst_addr, 'interface address', 'stored as asked, not widened to any');
  const ssh = await created('/api/v1/rules', { action: 'block', direction: 'in', interface: 'eth1', protocol: 'tcp', dst_addr: 'Interface', dst_port_start: 22 });
  assert.equal(ssh.rule_match.dst_addr, 'interface address', '"interface" is the same spelling');
  const { pf, nft } = compiled();
  assert.match(pf, /^rdr on eth1 inet proto tcp to \(eth1\) port 443 -> 10\.9\.0\.2 port 8443$/m);
  assert.match(pf, new RegExp(`^block in log quick on eth1 proto tcp to \\(eth1\\) port 22 label "${ssh.id}"$`, 'm'));
  assert.match(nft, /iifname "eth1" meta nfproto ipv4 fib daddr \. iif type local tcp dport 443 counter dnat ip to 10\.9\.0\.2:8443 comment "nat [^"]+"/);
  assert.match(nft, /iifname "eth1" fib daddr \. iif type local tcp dport 22 counter/);
  const output = await call('GET', '/api/v1/nat/pf-output');
  assert.match(JSON.stringify(output.body), /fib daddr \. iif type local/);

  // A rule has to name the interface whose address it means; an alias cannot hold it; masquerade already means it.
  await expect400('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', src_addr: 'interface address' }, /^body\.src_addr: "interface address" is an address of the rule's interface; set body\.interface/);
  await expect400('PUT', `/api/v1/rules/${ssh.id}`, { interface: null }, /^body\.dst_addr: "interface address" is an address of the rule's interface/);
  await expect400('POST', '/api/v1/aliases', { name: 'mine', alias_type: 'network', entries: ['interface address'] }, /^body\.entries\.0: "interface address" is not an IPv4\/IPv6 address/);
  await expect400('POST', '/api/v1/nat', { nat_type: 'dnat', interface: 'eth1', protocol: 'tcp', dst_port_start: 80, redirect_addr: 'interface address' }, /^body\.redirect_addr must be a single IPv4 or IPv6 address/);
  const masquerade = await created('/api/v1/nat', { nat_type: 'masquerade', interface: 'eth2', protocol: 'any', redirect_addr: 'interface address' });
  assert.equal(masquerade.redirect.address, 'any');
  await removeAll();
});

test('8. a schedule edge names the states to kill: pass rules leaving their window, block rules entering theirs', async () => {
  const service = packetFilterOf(api.t.app);
  const simulated = api.t.app.context.platform.packetFilter as unknown as { lastEdge?: import('../src/compile/schedule-edges.js').ScheduleEdge };
  api.t.clock.set(new Date(2026, 0, 7, 10, 0).getTime()); // Wednesday 10:00 local
  const office = await created('/api/v1/schedules', { name: 'office', time_ranges: '09:00-17:00' });
  const evening = await created('/api/v1/schedules', { name: 'evening', time_ranges: '17:15-23:00' });
  const ssh = await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 22, schedule_id: office.id, priority: 1 });
  const games = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'udp', dst_addr: '10.9.0.0/16', dst_port_start: 27015, schedule_id: evening.id });
  await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 22 });
  // The scheduled pass rule marks what it accepts (nftables); pf's states carry its label (the rule id).
  const { pf, nft } = compiled();
  assert.match(nft, new RegExp(`tcp dport 22 counter name "rule_${ssh.id}" ct mark set 0x[0-9a-f]{8} accept comment "rule ${ssh.id}"`));
  assert.match(pf, new RegExp(`pass in quick proto tcp to any port 22 keep state label "${ssh.id}"`));
  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  simulated.lastEdge = undefined;
  assert.equal(await service.applySchedules(), false);
  assert.equal(simulated.lastEdge, undefined, 'no edge, nothing killed');

  api.t.clock.set(new Date(2026, 0, 7, 17, 30).getTime());
  assert.equal(await service.applySchedules(), true);
  const edge = simulated.lastEdge!;
  assert.deepEqual(edge.ended, [{ id: ssh.id }]);
  assert.deepEqual(edge.started.map((s) => s.id), [games.id]);
  const host = { loopback: 'lo', byInterface: new Map([['eth1', ['10.0.0.1']]]) };
  const cuts = (over: Partial<Crossing>) => edge.cuts({ direction: 'in', iface: 'eth1', protocol: 'udp', src: '10.0.0.2', dst: '10.9.3.4', sport: 5000, dport: 27015, ...over }, host);
  assert.equal(cuts({}), true);
  assert.equal(cuts({ protocol: 'tcp' }), false);
  assert.equal(cuts({ dst: '10.8.3.4' }), false);
  assert.equal(cuts({ dport: 27016 }), false);
  assert.equal(cuts({ direction: 'out' }), false, 'the rule filters inbound packets only');
  await removeAll();
  await call('POST', '/api/v1/reload');
});
