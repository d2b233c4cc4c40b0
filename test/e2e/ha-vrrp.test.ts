/**
 * High availability end to end (issue 39 items 1-2): two Bulwark firewalls, A and B, each `--platform linux` in
 * its own namespace, share a LAN (client) and a WAN (server) segment, each a bridge in a switch namespace, and a
 * direct sync link. The virtual addresses of /cluster/carp (the client's and the server's gateway) are run by
 * keepalived, conntrackd syncs the connection table over the sync link. A long TCP stream from the client to the
 * server through A keeps going when A is demoted and its LAN and WAN links are then cut (B takes both addresses, the stream is in B's
 * conntrack table and can only pass through B)
 * and when A is promoted back. Both firewalls drop packets conntrack finds invalid and do not pick up TCP
 * mid-stream (nf_conntrack_tcp_loose=0), so B forwards the stream only because conntrackd committed A's entries.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';

const skip = systemSkip('the VRRP failover namespace lab', { root: true, programs: ['ip', 'nft', 'keepalived', 'conntrackd', 'conntrack'] });
const STREAM_PORT = '8039';
const UDP_PORT = '8040';
const UDP_SOURCE_PORT = '40039';
const LAN_VIP = '10.39.1.1';
const WAN_VIP = '10.39.2.1';
const SERVER = '10.39.2.100';

let labA: NetnsLab;
let labB: NetnsLab;
const ns = { a: '', b: '', client: '', server: '', lsw: '', wsw: '' };
const ifs = { aLan: '', aWan: '', bLan: '', bWan: '', aSync: '', bSync: '' };
let stream: ChildProcess | null = null;
let streamLines: string[] = [];
let udp: ChildProcess | null = null;
let udpLines: string[] = [];

type StreamState = { echoed: number; sent: number; maxGapMs: number; ended: string | null };
const streamState = (): StreamState => JSON.parse(streamLines.at(-1) ?? '{"echoed":0,"sent":0,"maxGapMs":0,"ended":null}');
const udpState = (): StreamState => JSON.parse(udpLines.at(-1) ?? '{"echoed":0,"sent":0,"maxGapMs":0,"ended":null}');

async function until<T>(what: string, probe: () => T | undefined | false, deadlineMs = 30_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const holds = (namespace: string, iface: string, address: string) => inNamespace(namespace, 'ip', ['-4', '-o', 'addr', 'show', 'dev', iface]).includes(` ${address}/`);
const tracked = (namespace: string) => inNamespace(namespace, 'conntrack', ['-L', '-p', 'tcp', '--dport', STREAM_PORT], { timeoutMs: 10_000 });
const trackedUdp = (namespace: string) => inNamespace(namespace, 'conntrack', ['-L', '-p', 'udp', '--dport', UDP_PORT], { timeoutMs: 10_000 });
/** conntrackd's external cache on B: the flows learnt from A over the sync link. */
const externalCache = (lab: NetnsLab, namespace: string) => inNamespace(namespace, 'conntrackd', ['-C', join(lab.runtimeRoot, 'keepalived', 'conntrackd.conf'), '-e'], { timeoutMs: 10_000 });
type FailoverEntry = { cause: string; from_role: string; to_role: string };
const changes = (lab: NetnsLab) => (lab.call('GET', '/api/v1/cluster/failover-history') as FailoverEntry[]).map((e) => `${e.cause}:${e.from_role}>${e.to_role}`);

/** A bridge in a switch namespace, with one veth from each member namespace. */
function segment(lab: NetnsLab, sw: string, members: { ns: string; name: string; address: string }[]): void {
  run('ip', ['-n', sw, 'link', 'add', 'br0', 'type', 'bridge']);
  run('ip', ['-n', sw, 'link', 'set', 'br0', 'up']);
  for (const member of members) {
    const port = `p${member.name}`;
    lab.link({ ns: member.ns, name: member.name, address: member.address }, { ns: sw, name: port });
    run('ip', ['-n', sw, 'link', 'set', port, 'master', 'br0']);
  }
}

function firewallNamespace(namespace: string): void {
  for (const setting of ['net.ipv4.ip_forward=1', 'net.netfilter.nf_conntrack_tcp_loose=0']) inNamespace(namespace, 'sysctl', ['-q', '-w', setting]);
  // The proof's strictness: a packet of a flow this firewall does not know is dropped, never picked up mid-stream.
  inNamespace(namespace, 'nft', ['add table inet hatest; add chain inet hatest strict { type filter hook forward priority 10; }; add rule inet hatest strict ct state invalid drop']);
}

function configure(lab: NetnsLab, role: 'primary' | 'secondary', lan: string, wan: string, sync: string, peer: string): void {
  lab.call('POST', '/api/v1/cluster/carp', { vhid: 39, virtual_ip: LAN_VIP, prefix: 24, interface: lan, password: 'lan39pw' });
  lab.call('POST', '/api/v1/cluster/carp', { vhid: 40, virtual_ip: WAN_VIP, prefix: 24, interface: wan, password: 'wan40pw' });
  lab.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: sync, sync_peer: peer, enabled: true });
  lab.call('PUT', '/api/v1/cluster/role', { role });
  // WAN is blocked by default (new connections entering it dropped): the VRRP adverts pass by the system rule only.
  lab.call('PUT', `/api/v1/interfaces/${lan}/role`, { role: 'lan' });
  lab.call('PUT', `/api/v1/interfaces/${wan}/role`, { role: 'wan' });
  lab.call('POST', '/api/v1/reload');
  const system = lab.call('GET', '/api/v1/rules/system') as string[];
  assert.ok(system.some((line) => line.includes(`"${wan}"`) && line.includes('ip protocol vrrp') && line.includes('accept')), system.join('\n'));
  assert.ok(system.some((line) => line.startsWith(`iifname "${sync}" udp dport 3780 accept`)), system.join('\n'));
}

before(async () => {
  if (skip) return;
  labA = new NetnsLab('h9a');
  labB = new NetnsLab('h9b');
  ns.a = labA.namespace('fw');
  ns.b = labB.namespace('fw');
  ns.client = labB.namespace('cl');
  ns.server = labB.namespace('sv');
  ns.lsw = labB.namespace('ls');
  ns.wsw = labB.namespace('ws');
  const t = labA.tag.slice(-6);
  Object.assign(ifs, { aLan: `la${t}`, aWan: `wa${t}`, bLan: `lb${t}`, bWan: `wb${t}`, aSync: `sa${t}`, bSync: `sb${t}` });
  segment(labB, ns.lsw, [
    { ns: ns.a, name: ifs.aLan, address: '10.39.1.2/24' }, { ns: ns.b, name: ifs.bLan, address: '10.39.1.3/24' },
    { ns: ns.client, name: `lc${t}`, address: '10.39.1.100/24' },
  ]);
  segment(labB, ns.wsw, [
    { ns: ns.a, name: ifs.aWan, address: '10.39.2.2/24' }, { ns: ns.b, name: ifs.bWan, address: '10.39.2.3/24' },
    { ns: ns.server, name: `ws${t}`, address: `${SERVER}/24` },
  ]);
  labA.link({ ns: ns.a, name: ifs.aSync, address: '10.39.3.1/30' }, { ns: ns.b, name: ifs.bSync, address: '10.39.3.2/30' });
  inNamespace(ns.client, 'ip', ['route', 'add', 'default', 'via', LAN_VIP]);
  inNamespace(ns.server, 'ip', ['route', 'add', 'default', 'via', WAN_VIP]);
  firewallNamespace(ns.a);
  firewallNamespace(ns.b);
  const [portA, portB] = [await freePort(), await freePort()];
  labA.startBulwark(ns.a, portA);
  labB.startBulwark(ns.b, portB);
  configure(labA, 'primary', ifs.aLan, ifs.aWan, ifs.aSync, '10.39.3.2');
  configure(labB, 'secondary', ifs.bLan, ifs.bWan, ifs.bSync, '10.39.3.1');
  const server = labB.spawnIn(ns.server, process.execPath, [join(ROOT, 'test/e2e/fixtures/ha-stream.mjs'), 'server', STREAM_PORT]);
  await new Promise((resolve) => server.stdout!.once('data', resolve));
  const udpServer = labB.spawnIn(ns.server, process.execPath, [join(ROOT, 'test/e2e/fixtures/ha-stream.mjs'), 'udp-server', UDP_PORT]);
  await new Promise((resolve) => udpServer.stdout!.once('data', resolve));
});

after(async () => {
  stream?.kill();
  udp?.kill();
  // keepalived and conntrackd run detached (they outlive the API): the namespaces' cleanup ends them.
  if (labA) await labA.cleanup();
  if (labB) await labB.cleanup();
});

test('VRRP failover and failback: a TCP stream and a UDP flow through the virtual addresses survive demote and promote (conntrackd); the failover history records each change', { skip, timeout: 400_000 }, async (t) => {
  const carp = labA.call('GET', '/api/v1/cluster/carp') as Array<Record<string, unknown>>;
  assert.equal(carp.length, 2);
  assert.ok(carp.every((entry) => !('password' in entry)), 'the VRRP password is never returned');

  // A (primary, priority 150) holds both addresses, B (secondary, 100) none.
  await until('A to hold both virtual addresses', () => holds(ns.a, ifs.aLan, LAN_VIP) && holds(ns.a, ifs.aWan, WAN_VIP), 60_000);
  await until('A to report master', () => labA.call('GET', '/api/v1/cluster/status').vrrp_state === 'master', 30_000);
  // B hears A's adverts on both segments (on WAN through the system rule only) and stays backup: never a second master.
  const steadyUntil = Date.now() + 5_000;
  while (Date.now() < steadyUntil) {
    assert.ok(!holds(ns.b, ifs.bLan, LAN_VIP) && !holds(ns.b, ifs.bWan, WAN_VIP), 'B holds neither address');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const statusA = labA.call('GET', '/api/v1/cluster/status');
  assert.equal(statusA.role, 'primary');
  assert.equal(statusA.peer_reachable, true, JSON.stringify(statusA));
  assert.equal(statusA.state_sync?.running, true, JSON.stringify(statusA));

  stream = labB.spawnIn(ns.client, process.execPath, [join(ROOT, 'test/e2e/fixtures/ha-stream.mjs'), 'client', SERVER, STREAM_PORT]);
  stream.stdout!.on('data', (chunk: Buffer) => streamLines.push(...chunk.toString().split('\n').filter(Boolean)));
  await until('the stream to flow through A', () => streamState().echoed > 50, 30_000);
  assert.match(tracked(ns.a), /dport=8039/, 'the stream is in A\'s conntrack table');
  udp = labB.spawnIn(ns.client, process.execPath, [join(ROOT, 'test/e2e/fixtures/ha-stream.mjs'), 'udp-client', SERVER, UDP_PORT, UDP_SOURCE_PORT]);
  udp.stdout!.on('data', (chunk: Buffer) => udpLines.push(...chunk.toString().split('\n').filter(Boolean)));
  await until('the UDP flow to pass through A', () => udpState().echoed > 50, 30_000);
  assert.match(trackedUdp(ns.a), /dport=8040/, 'the UDP flow is in A\'s conntrack table');
  // A's entry reaches B's external cache over the sync link (FTFW).
  await until('B to hold the synced state', () => (labB.call('GET', '/api/v1/cluster/status').pfsync_state_count ?? 0) >= 1, 30_000);
  // The bytes on the sync link (the dashboard's cluster `metrics` frame), as conntrackd counts them.
  const syncA = labA.call('GET', '/api/v1/cluster/status').state_sync;
  assert.ok(syncA.bytes_sent > 0 && syncA.bytes_received > 0, JSON.stringify(syncA));
  // The dashboard WebSocket's cluster `metrics` frame (wire-format §5.1) as an ha:manage account receives it.
  const metrics = JSON.parse(inNamespace(ns.a, process.execPath, [join(ROOT, 'test/e2e/fixtures/ws-cluster-frame.mjs'), labA.base, 'metrics'], { timeoutMs: 60_000 })).event;
  assert.ok(metrics.pfsync_in > 0 && metrics.pfsync_out > 0 && metrics.state_count >= 1 && metrics.ts_ms > 0, JSON.stringify(metrics));
  assert.doesNotMatch(tracked(ns.b), /dport=8039/, 'B\'s kernel table does not have it yet (it is in the external cache)');
  await until('B\'s external cache to hold the UDP flow', () => new RegExp(`udp.*sport=${UDP_SOURCE_PORT} dport=${UDP_PORT}`).test(externalCache(labB, ns.b)), 30_000);
  assert.doesNotMatch(trackedUdp(ns.b), /dport=8040/, 'nor the UDP flow');

  // Demote A: B takes both addresses; conntrackd commits the synced flows into B's kernel table.
  const before = streamState();
  stream.kill('SIGUSR2');
  streamLines = [];
  udp!.kill('SIGUSR2');
  udpLines = [];
  const udpBefore = udpState().echoed;
  const demotedAt = Date.now();
  labA.call('POST', '/api/v1/cluster/demote', undefined, 204);
  await until('B to hold both virtual addresses', () => holds(ns.b, ifs.bLan, LAN_VIP) && holds(ns.b, ifs.bWan, WAN_VIP), 30_000);
  const takeoverMs = Date.now() - demotedAt;
  await until('A to give the addresses away', () => !holds(ns.a, ifs.aLan, LAN_VIP) && !holds(ns.a, ifs.aWan, WAN_VIP), 30_000);
  // A's LAN and WAN links cut: from here the stream can only pass through B.
  for (const name of [ifs.aLan, ifs.aWan]) inNamespace(ns.a, 'ip', ['link', 'set', name, 'down']);
  const cutAt = streamState().echoed;
  await until('the stream to flow through B', () => streamState().echoed > Math.max(before.echoed, cutAt) + 100, 30_000);
  const failover = streamState();
  assert.equal(failover.ended, null, 'the stream was not reset');
  assert.match(tracked(ns.b), /dport=8039/, 'the stream is in B\'s conntrack table');
  const statusB = labB.call('GET', '/api/v1/cluster/status');
  assert.equal(statusB.role, 'primary', JSON.stringify(statusB));
  assert.equal(labA.call('GET', '/api/v1/cluster/status').role, 'secondary');
  t.diagnostic(`failover (demote): B held both addresses after ${takeoverMs} ms; longest silence in the TCP stream ${failover.maxGapMs} ms`);
  await until('the UDP flow to pass through B', () => udpState().echoed > udpBefore + 100, 30_000);
  assert.match(trackedUdp(ns.b), new RegExp(`sport=${UDP_SOURCE_PORT} dport=${UDP_PORT}`), 'the UDP flow (same source port) is in B\'s conntrack table');
  t.diagnostic(`failover (demote): longest silence in the UDP flow ${udpState().maxGapMs} ms`);
  assert.deepEqual(changes(labA).slice(-2), ['demote:primary>secondary', 'vrrp:primary>secondary'], 'A recorded the demote and the transition');
  await until('B to record its takeover', () => changes(labB).at(-1) === 'vrrp:secondary>primary', 10_000);

  // A's links back, then A promoted: failback.
  for (const name of [ifs.aLan, ifs.aWan]) inNamespace(ns.a, 'ip', ['link', 'set', name, 'up']);
  await until('B to hear A again (A back to backup)', () => labA.call('GET', '/api/v1/cluster/status').vrrp_state === 'backup', 30_000);
  stream.kill('SIGUSR2');
  streamLines = [];
  udp!.kill('SIGUSR2');
  const udpBack = udpState().echoed;
  const promotedAt = Date.now();
  labA.call('POST', '/api/v1/cluster/promote', undefined, 204);
  await until('A to hold both virtual addresses again', () => holds(ns.a, ifs.aLan, LAN_VIP) && holds(ns.a, ifs.aWan, WAN_VIP), 30_000);
  const failbackMs = Date.now() - promotedAt;
  await until('B to give the addresses back', () => !holds(ns.b, ifs.bLan, LAN_VIP) && !holds(ns.b, ifs.bWan, WAN_VIP), 30_000);
  await until('the stream to flow through A again', () => streamState().echoed > failover.echoed + 100, 30_000);
  const failback = streamState();
  assert.equal(failback.ended, null, 'the stream was not reset by the failback');
  t.diagnostic(`failback (promote): A held both addresses after ${failbackMs} ms; longest silence in the TCP stream ${failback.maxGapMs} ms`);
  await until('the UDP flow to pass through A again', () => udpState().echoed > udpBack + 100, 30_000);
  assert.match(trackedUdp(ns.a), new RegExp(`sport=${UDP_SOURCE_PORT} dport=${UDP_PORT}`), 'the UDP flow is in A\'s conntrack table again');
  t.diagnostic(`failback (promote): longest silence in the UDP flow ${udpState().maxGapMs} ms`);
  await until('A to record the failback', () => changes(labA).at(-1) === 'vrrp:secondary>primary', 10_000);
  assert.equal(changes(labA).at(-2), 'promote:secondary>primary');
  await until('B to record giving the addresses back', () => changes(labB).at(-1) === 'vrrp:primary>secondary', 10_000);

  // keepalived outlives A's API and is adopted by the next start (the same process, the addresses never given up).
  const pidFile = join(labA.runtimeRoot, 'keepalived', 'keepalived.pid');
  const pid = readFileSync(pidFile, 'utf8').trim();
  await labA.stopBulwark();
  const stoppedAt = streamState().echoed;
  await until('the stream to keep flowing through A without its API', () => streamState().echoed > stoppedAt + 100, 30_000);
  assert.ok(holds(ns.a, ifs.aLan, LAN_VIP) && holds(ns.a, ifs.aWan, WAN_VIP), 'A still holds both addresses');
  labA.startBulwark(ns.a, await freePort());
  const adopted = labA.call('GET', '/api/v1/cluster/status');
  assert.equal(adopted.running, true, JSON.stringify(adopted));
  assert.equal(readFileSync(pidFile, 'utf8').trim(), pid, 'the same keepalived, adopted');
  assert.equal(streamState().ended, null);

  // A failing health check lowers A's priority below B's: B takes over; removing it hands the addresses back.
  const check = labA.call('POST', '/api/v1/cluster/health', { name: 'closed port', check_type: 'tcp_port', target: '10.39.3.2:9', interval_secs: 1, timeout_secs: 1, failures_before_down: 2 });
  await until('B to take over from the unhealthy A', () => holds(ns.b, ifs.bLan, LAN_VIP) && holds(ns.b, ifs.bWan, WAN_VIP), 30_000);
  assert.deepEqual(labA.call('GET', '/api/v1/cluster/status').failing_checks, ['closed port']);
  labA.call('DELETE', `/api/v1/cluster/health/${check.id}`, undefined, 204);
  await until('A, healthy again, to take the addresses back', () => holds(ns.a, ifs.aLan, LAN_VIP) && holds(ns.a, ifs.aWan, WAN_VIP), 30_000);
  const healthy = streamState().echoed;
  await until('the stream to keep flowing', () => streamState().echoed > healthy + 50, 30_000);
  assert.equal(streamState().ended, null);
});
