/**
 * WireGuard proven from the other side: Bulwark (`--platform linux`) runs in a firewall namespace and brings a
 * tunnel up (this kernel has no WireGuard module: Bulwark supervises wireguard-go). Two client namespaces each
 * fetch their peer's configuration from `GET /vpn/wg/{tid}/peers/{pid}/config` and bring it up with their own
 * wireguard-go. Ping and TCP pass through the tunnel; `/status` shows the handshakes and bytes; a packet-filter
 * rule that blocks everything from the clients' links leaves the tunnel working (the system rule lets its UDP
 * port in) and a rule on the tunnel interface filters inside it; a peer deleted live loses its traffic while the
 * other keeps it; a killed wireguard-go is reported and restarted with its peers; the enabled tunnel goes down
 * with the server and comes back when it starts again; stop removes the interface.
 * Measured on the way: tunnel setup time and iperf3 TCP throughput through the tunnel against the same transfer
 * over the bare veth, in the same run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWgQuick, wgValue } from '../../src/areas/vpn/wireguard.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { inNamespace, NetnsLab } from '../helpers/netns-lab.js';
import { pings, pong, pongServer } from '../helpers/pong.js';
import { daemonLogWith, secretsInLogs } from '../helpers/daemon-log-file.js';

const skipReason = () => systemSkip('the WireGuard namespace lab', { root: true, programs: ['wireguard-go', 'wg', 'ip', 'busybox', 'iperf3', 'nft'] });

const TUNNEL_PORT = 51813;
const TCP_PORT = 8013;
const IPERF_PORT = 5213;

const TCP_SERVER = pongServer(TCP_PORT);
const tcp = (ns: string, host: string) => pong(ns, host, TCP_PORT);

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (check()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

/** TCP throughput (bits/s received) of a 3-second iperf3 run from `ns` to `host`, the server in `serverNs`. */
async function iperf(lab: NetnsLab, serverNs: string, ns: string, host: string): Promise<number> {
  lab.spawnIn(serverNs, 'iperf3', ['-s', '-1', '-B', host, '-p', String(IPERF_PORT)]);
  await until('iperf3 server listening', () => spawnSync('ip', ['netns', 'exec', serverNs, 'ss', '-ltn', `sport = :${IPERF_PORT}`], { encoding: 'utf8' }).stdout.includes(String(IPERF_PORT)));
  const report = JSON.parse(inNamespace(ns, 'iperf3', ['-c', host, '-p', String(IPERF_PORT), '-t', '3', '-J'], { timeoutMs: 30_000 }));
  return report.end.sum_received.bits_per_second as number;
}

/**
 * A client brings up the wg-quick file it downloaded: wireguard-go for the link, `wg setconf` with the file
 * minus its wg-quick-only keys, the Address on the link and the AllowedIPs routed through it.
 */
async function bringUpClient(lab: NetnsLab, ns: string, name: string, conf: string): Promise<void> {
  const [iface, peer] = parseWgQuick(conf);
  lab.spawnIn(ns, 'wireguard-go', ['-f', name]);
  await until(`${name} created`, () => existsSync(`/var/run/wireguard/${name}.sock`));
  const file = join(lab.dataDir, `${name}.conf`);
  const wgOnly = conf.split('\n').filter((line) => !/^(Address|DNS|MTU)\s*=/.test(line)).join('\n');
  writeFileSync(file, wgOnly, { mode: 0o600 });
  inNamespace(ns, 'wg', ['setconf', name, file]);
  inNamespace(ns, 'ip', ['address', 'add', wgValue(iface, 'Address')!, 'dev', name]);
  inNamespace(ns, 'ip', ['link', 'set', name, 'up']);
  for (const route of wgValue(peer, 'AllowedIPs')!.split(',').map((r) => r.trim())) inNamespace(ns, 'ip', ['route', 'replace', route, 'dev', name]);
}

test('a WireGuard tunnel driven by Bulwark carries ping and TCP from clients configured with its peer files', { skip: skipReason(), timeout: 300_000 }, async (t) => {
  const lab = new NetnsLab('b13');
  // Interface names are global (wireguard-go's sockets in /var/run/wireguard): all carry this run's tag.
  const short = lab.tag.slice(0, 6);
  const serverIf = `b13${short}w0`;
  try {
    const fw = lab.namespace('fw');
    const one = lab.namespace('c1');
    const two = lab.namespace('c2');
    lab.link({ ns: fw, name: `b13a${lab.tag}`, address: '192.168.131.1/24' }, { ns: one, name: `b13b${lab.tag}`, address: '192.168.131.2/24' });
    lab.link({ ns: fw, name: `b13c${lab.tag}`, address: '192.168.132.1/24' }, { ns: two, name: `b13d${lab.tag}`, address: '192.168.132.2/24' });
    lab.spawnIn(fw, process.execPath, ['-e', TCP_SERVER]);
    lab.startBulwark(fw, await freePort(), ['--wireguard-prefix', `b13${short}w`]);

    const tunnel = lab.call('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: TUNNEL_PORT, address: '10.213.0.1/24', endpoint_host: '192.168.131.1' });
    assert.equal(tunnel.interface, serverIf);
    const alice = lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { name: 'alice', allowed_ips: 'auto', auto_generate_key: true, preshared_key: 'generate' });
    const bob = lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { name: 'bob', allowed_ips: 'auto', auto_generate_key: true });
    assert.deepEqual([alice.allowed_ips, bob.allowed_ips], [['10.213.0.2/32'], ['10.213.0.3/32']]);

    const [started] = lab.api(['POST', `/api/v1/vpn/wg/${tunnel.id}/start`]);
    assert.equal(started.status, 200, JSON.stringify(started.body) + lab.log);
    const startMs = started.ms;
    assert.match(inNamespace(fw, 'ip', ['-o', 'address', 'show', 'dev', serverIf]), /inet 10\.213\.0\.1\/24/);

    const aliceConf = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${alice.id}/config?include_keys=true`).split_tunnel as string;
    assert.match(aliceConf, /^PresharedKey = /m);
    const bobConf = (lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${bob.id}/config?include_keys=true`).split_tunnel as string).replace('192.168.131.1:', '192.168.132.1:');
    const aliceIf = `b13x${lab.tag}`;
    const bobIf = `b13y${lab.tag}`;
    const clientUp = performance.now();
    await bringUpClient(lab, one, aliceIf, aliceConf);
    const firstPingMs = await until('alice pings the appliance through the tunnel', () => pings(one, '10.213.0.1'));
    const handshakeToPingMs = performance.now() - clientUp;
    await bringUpClient(lab, two, bobIf, bobConf);
    await until('bob pings the appliance through the tunnel', () => pings(two, '10.213.0.1'));
    assert.equal(tcp(one, '10.213.0.1'), 'pong 10.213.0.2', 'TCP through the tunnel arrives from the tunnel address');
    assert.equal(tcp(two, '10.213.0.1'), 'pong 10.213.0.3');

    const status = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`);
    assert.equal(status.running, true);
    assert.equal(status.backend, 'wireguard-go');
    assert.equal(typeof status.pid, 'number');
    assert.equal(status.peer_count, 2);
    const byKey = new Map(status.peers.map((p: { public_key: string }) => [p.public_key, p]));
    for (const [peer, endpoint] of [[alice, '192.168.131.2'], [bob, '192.168.132.2']] as const) {
      const live: any = byKey.get(peer.public_key);
      assert.ok(live.latest_handshake_secs_ago >= 0 && live.latest_handshake_secs_ago < 60, JSON.stringify(live));
      assert.ok(live.transfer_rx > 0 && live.transfer_tx > 0, JSON.stringify(live));
      assert.match(live.endpoint, new RegExp(`^${endpoint.replace(/\./g, '\\.')}:\\d+$`));
    }

    // Block everything that arrives on the clients' links: the tunnel's UDP port stays open (system rule),
    // while TCP straight to the appliance's link address is dropped.
    const system: string[] = lab.call('GET', '/api/v1/rules/system');
    assert.ok(system.includes(`udp dport ${TUNNEL_PORT} accept comment "system: wireguard ${serverIf}"`), system.join('\n'));
    lab.call('POST', '/api/v1/rules', { action: 'block_drop', direction: 'in', protocol: 'any', interface: `b13a${lab.tag}`, label: 'outside' });
    lab.call('POST', '/api/v1/rules', { action: 'block_drop', direction: 'in', protocol: 'any', interface: `b13c${lab.tag}`, label: 'outside-2' });
    lab.call('POST', '/api/v1/reload');
    assert.equal(tcp(one, '192.168.131.1'), 'FAIL', 'the outside link is blocked');
    assert.equal(tcp(one, '10.213.0.1'), 'pong 10.213.0.2', 'the tunnel still carries TCP');
    // A rule on the tunnel interface filters inside the tunnel.
    const inner = lab.call('POST', '/api/v1/rules', { action: 'block_drop', direction: 'in', protocol: 'tcp', interface: serverIf, dst_port_start: TCP_PORT, label: 'tunnel-tcp' });
    lab.call('POST', '/api/v1/reload');
    assert.equal(tcp(one, '10.213.0.1'), 'FAIL', 'a rule on the tunnel interface blocks TCP inside it');
    assert.equal(pings(one, '10.213.0.1'), true, 'and leaves ping alone');
    lab.call('DELETE', `/api/v1/rules/${inner.id}`, undefined, 204);
    lab.call('POST', '/api/v1/reload');

    // Throughput: the same iperf3 transfer through the tunnel and over the bare veth, in this run.
    lab.call('DELETE', `/api/v1/rules/${lab.call('GET', '/api/v1/rules').find((r: { label: string }) => r.label === 'outside').id}`, undefined, 204);
    lab.call('POST', '/api/v1/reload');
    const tunnelBps = await iperf(lab, fw, one, '10.213.0.1');
    const vethBps = await iperf(lab, fw, one, '192.168.131.1');
    assert.ok(tunnelBps > 0 && vethBps > 0);

    // Alice is deleted live: her traffic stops, Bob's carries on in the same session.
    const bobBefore: any = byKey.get(bob.public_key);
    lab.call('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${alice.id}`, undefined, 204);
    assert.equal(pings(one, '10.213.0.1', 2), false, 'a deleted peer loses its traffic');
    assert.equal(tcp(one, '10.213.0.1'), 'FAIL');
    assert.equal(pings(two, '10.213.0.1'), true, 'the other peer keeps its traffic');
    assert.equal(tcp(two, '10.213.0.1'), 'pong 10.213.0.3');
    const afterDelete = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`);
    assert.deepEqual(afterDelete.peers.map((p: { public_key: string }) => p.public_key), [bob.public_key]);
    assert.ok(afterDelete.peers[0].transfer_rx > bobBefore.transfer_rx, 'bob\'s traffic kept arriving');

    // wireguard-go killed: status reports it, the supervisor restarts it and puts the peers back.
    process.kill(status.pid, 'SIGKILL');
    await until('the death is reported', () => {
      const now = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`);
      return now.restarts >= 1 || /exited/.test(now.last_error ?? '');
    });
    await until('bob pings again after the restart', () => pings(two, '10.213.0.1'), 30_000);
    const restarted = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`);
    assert.equal(restarted.running, true);
    assert.ok(restarted.restarts >= 1);
    assert.notEqual(restarted.pid, status.pid);
    assert.deepEqual(restarted.peers.map((p: { public_key: string }) => p.public_key), [bob.public_key]);

    // The server stops: the tunnel stays up (the API is not the appliance) and still carries traffic; it starts
    // again: the same wireguard-go is adopted, with its peer.
    assert.equal(await lab.stopBulwark(), 0);
    assert.equal(spawnSync('ip', ['-n', fw, 'link', 'show', 'dev', serverIf]).status, 0, 'server stop leaves the interface up');
    assert.equal(pings(two, '10.213.0.1'), true, 'bob pings while the server is stopped');
    lab.startBulwark(fw, await freePort(), ['--wireguard-prefix', `b13${short}w`]);
    await until('bob pings after the server started again', () => pings(two, '10.213.0.1'), 60_000);
    assert.equal(tcp(two, '10.213.0.1'), 'pong 10.213.0.3');
    const adopted = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`);
    assert.equal(adopted.running, true);
    assert.equal(adopted.pid, restarted.pid, 'the wireguard-go that ran before the server stopped is adopted, not replaced');

    lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/stop`);
    assert.notEqual(spawnSync('ip', ['-n', fw, 'link', 'show', 'dev', serverIf]).status, 0, 'stop removes the interface');
    assert.equal(pings(two, '10.213.0.1', 2), false);
    assert.equal(lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/status`).running, false);
    assert.ok(!(lab.call('GET', '/api/v1/rules/system') as string[]).some((line) => line.includes('wireguard')), 'the system rule leaves with the tunnel');

    // wireguard-go's own output (detached: through its output file) is in the local log, named by interface, without a key.
    await daemonLogWith(lab.dataDir, 'wireguard-go', new RegExp(`^${serverIf}: \\S`, 'm'));
    const keys = [aliceConf, bobConf].flatMap((conf) => [...conf.matchAll(/^(?:PrivateKey|PresharedKey) = (\S+)$/gm)].map((match) => match[1]!));
    assert.ok(keys.length >= 3, 'the peer files hold the private keys and the preshared key');
    assert.deepEqual(secretsInLogs(lab.dataDir, keys), [], 'no key in any local log');
    const figures = {
      start_request_ms: Math.round(startMs),
      client_up_to_first_ping_ms: Math.round(handshakeToPingMs),
      first_ping_wait_ms: Math.round(firstPingMs),
      tcp_through_wireguard_go_mbit_s: Math.round(tunnelBps / 1e6),
      tcp_over_veth_mbit_s: Math.round(vethBps / 1e6),
      ratio: Number((tunnelBps / vethBps).toFixed(3)),
    };
    t.diagnostic(`figures ${JSON.stringify(figures)}`);
  } catch (error) {
    throw new Error(`${(error as Error).message}\nBulwark's output:\n${lab.log}`);
  } finally {
    await lab.cleanup();
    for (const name of [serverIf, `b13x${lab.tag}`, `b13y${lab.tag}`]) spawnSync('rm', ['-f', `/var/run/wireguard/${name}.sock`]);
  }
});
