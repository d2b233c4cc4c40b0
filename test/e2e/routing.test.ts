/**
 * Routing proven from a client's side. Bulwark (`--platform linux`) runs in a firewall namespace with a LAN
 * towards a client namespace and two WAN namespaces behind it; each WAN namespace answers TCP on the same
 * "internet" address (198.51.100.1) with its own name, so the client sees which WAN carried it. The firewall's
 * main table has no default route: only what Bulwark installs carries traffic.
 *
 * - an interface address set through the API answers the client's ping; a change that would cut the
 *   management address is refused (409) and changes nothing;
 * - a static route created through the API carries the client's traffic, and stops when deleted;
 * - a failover group's policy sends the client through WAN A; dropping everything in WAN A's namespace makes
 *   the ping probe mark it down and the traffic move to WAN B within the configured window, and back when it
 *   recovers; /gateways/{id}/events shows the transitions; /flows shows the connection with its gateway; a
 *   refused apply leaves the kernel as it was; a weighted group spreads client sources over both WANs;
 * - a geo-IP block rule drops a client whose address is in the blocked country and passes one outside it.
 * On a kernel with 802.1Q, a VLAN created through the API exists and carries an address (skipped here: this
 * kernel has no vlan link type, see docs/networking.md; the commands are tested with a fake ip).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { allowedSkip, systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';

const skip = systemSkip('the routing namespace lab', { root: true, programs: ['ip', 'nft', 'ping', 'conntrack'] });
const SERVICE = '198.51.100.1';
const PORT = '8015';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let lab: NetnsLab;
let fw = '';
let client = '';
let wanA = '';
let wanB = '';
const links = { lan: '', client: '', a: '', aPeer: '', b: '', bPeer: '' };

/** What the service said to a connection from the client (`failed: …` when none got through). */
function ask(host = SERVICE, source?: string, timeoutMs = 700): string {
  const args = [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), host, PORT, String(timeoutMs), ...(source ? [source] : [])];
  return inNamespace(client, process.execPath, args, { timeoutMs: timeoutMs + 5000 }).trim();
}

/** Asks until the answer is `want`; the milliseconds it took, or -1 after `limitMs`. */
async function untilAnswer(want: string, limitMs: number, source?: string): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if (ask(SERVICE, source, 400) === want) return Date.now() - started;
    await sleep(100);
  }
  return -1;
}

// One answer within `seconds`, asking every 0.2 s (a single echo and a one-second wait failed under CI load).
const pingFromClient = (address: string, seconds = 1) =>
  spawnSync('ip', ['netns', 'exec', client, 'ping', '-n', '-c', '1', '-i', '0.2', '-w', String(seconds), address], { encoding: 'utf8' }).status === 0;

before(async () => {
  if (skip) return;
  lab = new NetnsLab('b15');
  fw = lab.namespace('fw');
  client = lab.namespace('cl');
  wanA = lab.namespace('wa');
  wanB = lab.namespace('wb');
  const t = lab.tag.slice(-8);
  Object.assign(links, { lan: `b15l${t}`, client: `b15c${t}`, a: `b15a${t}`, aPeer: `b15A${t}`, b: `b15b${t}`, bPeer: `b15B${t}` });
  // The LAN side of the firewall gets its address through the API (first test).
  lab.link({ ns: fw, name: links.lan }, { ns: client, name: links.client, address: '10.15.1.2/24' });
  lab.link({ ns: fw, name: links.a, address: '10.15.10.1/24' }, { ns: wanA, name: links.aPeer, address: '10.15.10.2/24' });
  lab.link({ ns: fw, name: links.b, address: '10.15.20.1/24' }, { ns: wanB, name: links.bPeer, address: '10.15.20.2/24' });
  run('ip', ['-n', client, 'route', 'add', 'default', 'via', '10.15.1.1']);
  // Addresses outside and inside a blocked country, for the geo-IP test (the namespaces are isolated).
  for (const address of ['81.2.69.142/32', '8.8.8.8/32']) run('ip', ['-n', client, 'addr', 'add', address, 'dev', links.client]);
  // Sixteen more client sources, for weighted balancing (a flow hash spreads them over the members).
  for (let i = 0; i < 16; i++) run('ip', ['-n', client, 'addr', 'add', `10.15.1.${100 + i}/24`, 'dev', links.client]);
  inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  for (const [ns, peer, fwAddress, word] of [[wanA, links.aPeer, '10.15.10.1', 'A'], [wanB, links.bPeer, '10.15.20.1', 'B']] as const) {
    run('ip', ['-n', ns, 'addr', 'add', `${SERVICE}/32`, 'dev', 'lo']);
    run('ip', ['-n', ns, 'addr', 'add', word === 'A' ? '192.0.2.1/32' : '192.0.2.2/32', 'dev', 'lo']);
    run('ip', ['-n', ns, 'route', 'add', 'default', 'via', fwAddress, 'dev', peer]);
    const server = lab.spawnIn(ns, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), PORT, word]);
    await new Promise((resolve) => server.stdout!.once('data', resolve));
  }
  lab.startBulwark(fw, await freePort());
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('an interface address set through the API answers ping; a change that cuts the management address is 409 unless confirmed', { skip, timeout: 90_000 }, () => {
  assert.equal(pingFromClient('10.15.1.1'), false, 'no address yet');
  const answer = lab.call('PUT', `/api/v1/interfaces/config/${links.lan}`, { ipv4_mode: 'static', ipv4_address: '10.15.1.1/24', mtu: 1400, description: 'b15 lan' });
  assert.equal(answer.applied, true, JSON.stringify(answer));
  // The negative check above left a failed ARP entry on the client, which answers 'unreachable' at once for a while.
  spawnSync('ip', ['-n', client, 'neigh', 'flush', 'to', '10.15.1.1']);
  assert.equal(pingFromClient('10.15.1.1', 5), true, 'the address set through the API answers');
  const shown = lab.call('GET', `/api/v1/interfaces/config/${links.lan}`);
  assert.deepEqual([shown.ipv4, shown.ipv4_prefix, shown.mtu, shown.description, shown.status], ['10.15.1.1', 24, 1400, 'b15 lan', 'up']);
  const kernel = JSON.parse(inNamespace(fw, 'ip', ['-j', 'link', 'show', 'dev', links.lan]))[0];
  assert.deepEqual([kernel.mtu, kernel.ifalias], [1400, 'b15 lan'], 'read back from the kernel');

  // The API listens on 127.0.0.1 in this namespace: taking lo down would cut the request's own address.
  const [refused] = lab.api(['PUT', '/api/v1/interfaces/config/lo', { enabled: false }]);
  assert.equal(refused.status, 409, JSON.stringify(refused));
  assert.match(refused.body.error, /management address 127\.0\.0\.1.*confirm_management_cut=true/);
  assert.ok(JSON.parse(inNamespace(fw, 'ip', ['-j', 'link', 'show', 'dev', 'lo']))[0].flags.includes('UP'), 'lo is still up');
  const [hostile] = lab.api(['PUT', `/api/v1/interfaces/config/${links.lan}`, { description: 'x\nlink set dev lo down' }]);
  assert.equal(hostile.status, 400);
  assert.match(hostile.body.error, /body\.description/);
});

test('a static route created through the API carries the client\'s traffic; deleting it withdraws it', { skip, timeout: 90_000 }, () => {
  assert.match(ask('192.0.2.1'), /^failed/, 'no route to 192.0.2.0/24 yet');
  const route = lab.call('POST', '/api/v1/routes', { destination: '192.0.2.0/24', gateway: '10.15.10.2', interface: links.a, metric: 5 });
  assert.equal(ask('192.0.2.1'), 'A', 'the route carries a TCP connection to WAN A');
  const system = lab.call('GET', '/api/v1/routes/system');
  assert.ok(system.some((r: { destination: string; gateway: string; interface: string }) => r.destination === '192.0.2.0/24' && r.gateway === '10.15.10.2' && r.interface === links.a), JSON.stringify(system));
  // A route the kernel refuses (gateway on no connected network) is 409 and is not stored.
  const [refused] = lab.api(['POST', '/api/v1/routes', { destination: '192.0.2.128/25', gateway: '172.31.99.1' }]);
  assert.equal(refused.status, 409, JSON.stringify(refused));
  assert.ok(!lab.call('GET', '/api/v1/routes').some((r: { destination: string }) => r.destination === '192.0.2.128/25'), 'the refused route is not kept');
  lab.call('DELETE', `/api/v1/routes/${route.id}`, undefined, 204);
  assert.match(ask('192.0.2.1'), /^failed/, 'withdrawn');
});


test('multi-WAN: a failover group sends the client through WAN A, fails over to WAN B when A stops answering, and back', { skip, timeout: 210_000 }, async (t) => {
  const instance = '61696677-0000-0000-0000-000000000000';
  const monitor = { monitor_kind: 'icmp', interval_ms: 300, timeout_ms: 300, consec_fail_down: 3, consec_ok_up: 3 };
  const a = lab.call('POST', '/api/v1/multiwan/gateways', { name: 'wan-a', instance_id: instance, interface: links.a, next_hop: '10.15.10.2', ...monitor });
  const b = lab.call('POST', '/api/v1/multiwan/gateways', { name: 'wan-b', instance_id: instance, interface: links.b, next_hop: '10.15.20.2', ...monitor });
  const group = lab.call('POST', '/api/v1/multiwan/groups', { name: 'uplinks', policy: 'failover' });
  lab.call('POST', `/api/v1/multiwan/groups/${group.id}/members`, { gateway_id: a.id, tier: 1, weight: 1 });
  lab.call('POST', `/api/v1/multiwan/groups/${group.id}/members`, { gateway_id: b.id, tier: 2, weight: 1 });
  const policy = lab.call('POST', '/api/v1/multiwan/policies', { priority: 10, name: 'lan-out', iface_in: links.lan, action_kind: 'set_group', target_id: group.id });
  const states = () => lab.call('GET', '/api/v1/multiwan/gateways').map((g: { name: string; state: string }) => `${g.name}:${g.state}`).sort().join(' ');
  for (let i = 0; i < 50 && states() !== 'wan-a:up wan-b:up'; i++) await sleep(200);
  assert.equal(states(), 'wan-a:up wan-b:up', 'both gateways answer the ping probe');

  const preview = lab.call('POST', '/api/v1/multiwan/preview', { policies: [{ priority: 10, name: 'lan-out', iface_in: links.lan, action_kind: 'set_group', target_id: group.id }] }, 200);
  assert.deepEqual(preview.apply_commands.map((c: { command: string }) => c.command), ['nft -f -', 'ip -4 -batch -', 'ip -6 -batch -']);
  assert.match(preview.apply_commands[0].input, /table inet bulwark_mwan \{\n\tchain steer \{\n\t\ttype filter hook prerouting priority mangle; policy accept;\n\t\tct direction original iifname "b15l/);
  // Gateway tables are numbered from 65536 in gateway-id order.
  const tableA = Number(/^route replace default via 10\.15\.10\.2 dev b15a\S+ table (6553[67])$/m.exec(preview.apply_commands[1].input)?.[1]);
  assert.ok(tableA, preview.apply_commands[1].input);
  assert.match(preview.apply_commands[1].input, /^rule add fwmark 0x00010000\/0x00010000 lookup main suppress_prefixlength 0 priority 14990$/m);
  const applied = lab.call('POST', '/api/v1/multiwan/apply');
  assert.ok(applied.rules > 0, JSON.stringify(applied));
  assert.equal(ask(), 'A', 'the policy sends the client through WAN A');
  const rules = inNamespace(fw, 'ip', ['rule', 'show']);
  assert.match(rules, new RegExp(`15000:\\s+from all fwmark 0x${tableA.toString(16)} lookup ${tableA}`), rules);
  assert.match(rules, new RegExp(`158\\d\\d:\\s+from 10\\.15\\.10\\.1 lookup ${tableA}`), 'probes from WAN A leave through WAN A');

  const flows = lab.call('GET', '/api/v1/multiwan/flows');
  const flow = flows.find((f: { dst: string }) => f.dst === `${SERVICE}:${PORT}`);
  assert.ok(flow, `the connection is listed: ${JSON.stringify(flows)}`);
  assert.deepEqual([flow.iface, flow.rtable, flow.protocol], [links.a, tableA, 'tcp']);
  assert.ok(lab.call('POST', `/api/v1/multiwan/flows/pbr:${policy.id}/migrate`, undefined, 200).killed >= 1, 'its conntrack entries are cut by label');

  // Drop everything in WAN A's namespace: probes and the client's traffic alike.
  inNamespace(wanA, 'nft', ['add table inet b15blk']);
  inNamespace(wanA, 'nft', ['add chain inet b15blk in { type filter hook input priority -300; policy drop; }']);
  inNamespace(wanA, 'nft', ['add chain inet b15blk blockforward { type filter hook forward priority -300; policy drop; }']);
  const blockedAt = Date.now();
  assert.match(ask(), /^failed/, 'WAN A carries nothing now');
  const failoverMs = (await untilAnswer('B', 15_000)) < 0 ? -1 : Date.now() - blockedAt;
  // A deadline, not a timing assertion: the time taken (about consec_fail_down probes of interval + ping's
  // one-second timeout, plus the apply) is reported as a figure below.
  assert.ok(failoverMs > 0, 'failed over to WAN B within the 15 s deadline');
  assert.equal(lab.call('GET', `/api/v1/multiwan/groups/${group.id}/active`).gateways[0], b.id);

  inNamespace(wanA, 'nft', ['delete table inet b15blk']);
  const recoveredAt = Date.now();
  const recoveryMs = (await untilAnswer('A', 15_000)) < 0 ? -1 : Date.now() - recoveredAt;
  assert.ok(recoveryMs > 0, 'back on WAN A within the 15 s deadline');

  const events = lab.call('GET', `/api/v1/multiwan/gateways/${a.id}/events`).reverse()
    .map((e: { from_state: string; to_state: string }) => `${e.from_state}->${e.to_state}`);
  assert.ok(events.includes('up->warning') && events.includes('warning->down') && events.includes('down->up'), `transitions: ${events.join(', ')}`);
  const down = lab.call('GET', `/api/v1/multiwan/gateways/${a.id}/events`).find((e: { to_state: string }) => e.to_state === 'down');
  assert.match(down.reason, /no reply from 10\.15\.10\.2/);
  assert.equal(typeof JSON.parse(down.probe_snapshot_json).consec_fail, 'number');
  t.diagnostic(`failover ${failoverMs} ms, recovery ${recoveryMs} ms`);

  // Apply is all or nothing. A gateway on an interface the kernel does not have is refused before anything is
  // touched; one whose next hop is on no connected network makes the route batch fail half-way, and the previous
  // table, rules and routes are put back. Either way traffic keeps flowing through WAN A, and a gateway's state
  // change does not retry the refused plan (each retry would cut traffic while it is put back).
  const kernelState = () => [inNamespace(fw, 'ip', ['rule', 'show']), inNamespace(fw, 'ip', ['route', 'show', 'table', 'all']), inNamespace(fw, 'nft', ['list', 'table', 'inet', 'bulwark_mwan'])];
  const kernelBefore = kernelState();
  const refusals = [
    [{ name: 'wan-x', interface: 'b15nosuch0', next_hop: '10.15.30.1' }, /stored, but applying it was refused: multi-WAN apply refused: no interface b15nosuch0 for a gateway; nothing was changed/],
    [{ name: 'wan-y', interface: links.a, next_hop: '10.15.30.1' }, /stored, but applying it was refused: multi-WAN apply refused by the kernel \(.*\); the previous routing is put back/],
  ] as const;
  for (const [gateway, refusal] of refusals) {
    const [broken] = lab.api(['POST', '/api/v1/multiwan/gateways', { instance_id: instance, enabled: true, ...monitor, ...gateway }]);
    assert.equal(broken.status, 409, JSON.stringify(broken));
    assert.match(broken.body.error, refusal);
    assert.deepEqual(kernelState(), kernelBefore, `${gateway.name}: rules, routes and the multi-WAN table are as they were`);
    assert.equal(ask(), 'A', `${gateway.name}: traffic still goes through WAN A`);
    // Its probes fail (up, warning, then down) and the refused plan is not retried on either change: the table
    // keeps its kernel handles (a retry deletes and loads it again) and the client's traffic is never cut.
    const handles = () => inNamespace(fw, 'nft', ['-a', 'list', 'table', 'inet', 'bulwark_mwan']);
    const handlesBefore = handles();
    const state = () => lab.call('GET', '/api/v1/multiwan/gateways').find((g: { name: string }) => g.name === gateway.name).state as string;
    for (let waited = 0; state() !== 'down' && waited < 15_000; waited += 200) await sleep(200);
    assert.equal(state(), 'down', `${gateway.name}: its probes fail`);
    assert.equal(handles(), handlesBefore, `${gateway.name}: the refused plan was not loaded again`);
    assert.equal(ask(), 'A', `${gateway.name}: traffic still goes through WAN A after its probes failed`);
    const [again] = lab.api(['POST', '/api/v1/multiwan/apply']);
    assert.equal(again.status, 409, 'an explicit apply tries again');
    const stored = lab.call('GET', '/api/v1/multiwan/gateways').find((g: { name: string }) => g.name === gateway.name);
    lab.call('DELETE', `/api/v1/multiwan/gateways/${stored.id}`, undefined, 204);
  }
  assert.equal(lab.call('POST', '/api/v1/multiwan/apply').message.includes('bulwark_mwan'), true);

  // Weighted balancing: both gateways in one tier with equal weights; the group's change re-applies at once and
  // the connections of sixteen client sources are hashed over both WANs, each source staying on one.
  lab.call('POST', `/api/v1/multiwan/groups/${group.id}/members`, { gateway_id: b.id, tier: 1, weight: 1 });
  lab.call('PUT', `/api/v1/multiwan/groups/${group.id}`, { policy: 'weighted' });
  const answers = Array.from({ length: 16 }, (_, i) => ask(SERVICE, `10.15.1.${100 + i}`));
  assert.deepEqual([...new Set(answers)].sort(), ['A', 'B'], `both WANs carry some sources: ${answers.join(' ')}`);
  assert.deepEqual(Array.from({ length: 16 }, (_, i) => ask(SERVICE, `10.15.1.${100 + i}`)), answers, 'each source stays on its WAN');
  // A re-apply (any change of a policy, group or gateway, or a gateway's state) loads the table again: the hash
  // keeps its seed, so no source moves (the kernel would draw a new seed for a jhash without one).
  for (let i = 0; i < 2; i++) assert.equal(lab.call('POST', '/api/v1/multiwan/apply').message.includes('bulwark_mwan'), true);
  assert.deepEqual(Array.from({ length: 16 }, (_, i) => ask(SERVICE, `10.15.1.${100 + i}`)), answers, 'each source stays on its WAN across re-applies');
  lab.call('PUT', `/api/v1/multiwan/groups/${group.id}`, { policy: 'failover' });
  lab.call('POST', `/api/v1/multiwan/groups/${group.id}/members`, { gateway_id: b.id, tier: 2, weight: 1 });
});

test('multi-WAN at start: the routing last applied is put back after a reboot\'s flush, never an edit the kernel refused', { skip, timeout: 210_000 }, async () => {
  // An edit stored but refused (its interface does not exist): pending, never in force.
  const [refused] = lab.api(['POST', '/api/v1/multiwan/gateways', { name: 'wan-z', instance_id: '61696677-0000-0000-0000-000000000000', interface: 'b15nosuch1', next_hop: '10.15.30.1', monitor_kind: 'icmp', interval_ms: 300, timeout_ms: 300 }]);
  assert.equal(refused.status, 409, JSON.stringify(refused));
  assert.equal(ask(), 'A', 'the applied routing still sends the client through WAN A');
  assert.equal(await lab.stopBulwark('SIGTERM'), 0, lab.log);
  // What a reboot forgets: the multi-WAN table, the policy rules and the gateways' routing tables.
  inNamespace(fw, 'nft', ['delete', 'table', 'inet', 'bulwark_mwan']);
  for (const rule of JSON.parse(inNamespace(fw, 'ip', ['-j', 'rule', 'show'])) as { priority: number }[]) {
    if (![0, 32766, 32767].includes(rule.priority)) run('ip', ['-n', fw, 'rule', 'del', 'priority', String(rule.priority)]);
  }
  for (const table of ['65536', '65537']) spawnSync('ip', ['-n', fw, 'route', 'flush', 'table', table]);
  assert.match(ask(), /^failed/, 'no multi-WAN routing in the kernel: the main table has no default route');

  lab.startBulwark(fw, await freePort());
  let status: { ready: boolean; services: { name: string; running: boolean; waiting_for: string | null; error: string | null }[] } | undefined;
  for (let waited = 0; waited < 180_000 && status?.ready !== true; waited += 500) {
    status = lab.call('GET', '/api/v1/status');
    if (status?.ready !== true) await sleep(500);
  }
  const multiwan = status?.services.find((s) => s.name === 'multiwan');
  assert.deepEqual([status?.ready, multiwan?.running, multiwan?.waiting_for, multiwan?.error], [true, true, null, null], JSON.stringify(status?.services));
  assert.equal(await untilAnswer('A', 15_000) >= 0, true, 'the client goes through WAN A again, by the applied routing');
  const refusedGateway = lab.call('GET', '/api/v1/multiwan/gateways').find((g: { name: string }) => g.name === 'wan-z');
  assert.ok(refusedGateway, 'the refused edit is still stored');
  assert.doesNotMatch(inNamespace(fw, 'ip', ['route', 'show', 'table', 'all']), /10\.15\.30\.1/, 'and not in force');
  lab.call('DELETE', `/api/v1/multiwan/gateways/${refusedGateway.id}`, undefined, 204);
});

test('geo-IP: a block rule drops a client whose address is in the blocked country and passes one outside it', { skip, timeout: 120_000 }, () => {
  assert.equal(lab.call('GET', '/api/v1/geoip/lookup/81.2.69.142').country, 'GB');
  assert.equal(lab.call('GET', '/api/v1/geoip/lookup/8.8.8.8').country, 'US');
  // Replies to those client addresses go back over the LAN (static routes through the API).
  for (const destination of ['81.2.69.142/32', '8.8.8.8/32']) lab.call('POST', '/api/v1/routes', { destination, gateway: '10.15.1.2', interface: links.lan });
  lab.call('POST', '/api/v1/reload');
  assert.match(ask(SERVICE, '81.2.69.142'), /^[AB]$/, 'before the rule, the GB address gets through');
  const rule = lab.call('POST', '/api/v1/geoip', { country_code: 'GB', action: 'block' });
  assert.match(ask(SERVICE, '81.2.69.142'), /^failed/, 'the GB address is dropped');
  assert.match(ask(SERVICE, '8.8.8.8'), /^[AB]$/, 'the US address passes');
  assert.match(ask(SERVICE, '10.15.1.2'), /^[AB]$/, 'an address in no country passes');
  const table = inNamespace(fw, 'nft', ['list', 'set', 'inet', 'bulwark', 'geoip_block_v4']);
  assert.match(table, /81\.2\.\d+\.\d+/, 'the kernel set holds GB networks');
  lab.call('DELETE', `/api/v1/geoip/${rule.id}`, undefined, 204);
  assert.match(ask(SERVICE, '81.2.69.142'), /^[AB]$/, 'deleting the rule lets it through again');
});

test('VLAN: created through the API on a kernel with 802.1Q', { skip, timeout: 60_000 }, (t) => {
  // Probed inside the lab's own namespace: this kernel has no vlan link type (docs/networking.md).
  if (spawnSync('ip', ['-n', fw, 'link', 'add', 'link', links.lan, 'name', 'b15vlprobe', 'type', 'vlan', 'id', '2']).status !== 0) {
    allowedSkip(t, 'vlan-8021q');
    return;
  }
  spawnSync('ip', ['-n', fw, 'link', 'del', 'b15vlprobe']);
  const vlan = lab.call('POST', '/api/v1/vlans', { vlan_id: 15, parent: links.lan, mtu: 1400 });
  const link = JSON.parse(inNamespace(fw, 'ip', ['-j', '-d', 'link', 'show', 'dev', 'vlan15']))[0];
  assert.deepEqual([link.linkinfo.info_kind, link.linkinfo.info_data.id, link.mtu], ['vlan', 15, 1400]);
  lab.call('DELETE', `/api/v1/vlans/${vlan.id}`, undefined, 204);
  assert.notEqual(spawnSync('ip', ['-n', fw, 'link', 'show', 'dev', 'vlan15']).status, 0);
});
