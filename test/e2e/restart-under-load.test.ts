/**
 * Restart under load: DNS (Unbound), DHCP (Kea), time (chronyd), a WireGuard tunnel (wireguard-go) and the
 * reverse proxy (Caddy) configured and applied by Bulwark (`--platform linux`) in a firewall namespace. A client
 * namespace asks DNS every 50 ms, pings through the tunnel and fetches through the proxy while Bulwark is stopped
 * (SIGTERM), left down for 5 s and started again; a DHCP client renews its lease during the gap. Proven: no DNS
 * query and no fetch fails, at most one ping is lost, the renewal succeeds, every daemon keeps its pid (adopted,
 * not restarted), /status answers ready with every service running its applied version, and edits stored but not
 * applied (a DNS host, a time source, a proxy route) are still not in force. Then the same after a crash of the
 * API (SIGKILL).
 *
 * Besides: a rule blocks and logs a port range (ulogd2 on its NFLOG group) and flow export (softflowd) sends the
 * client link's flows to an IPFIX collector (nfcapd) in the client namespace. ulogd and softflowd keep their pids,
 * a packet blocked before, during and after each gap is listed by GET /blocked, and a marked datagram sent before,
 * during and after each gap reaches the collector as a flow record.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keaHookLibrary } from '../../src/platform/kea-hooks.js';
import { unboundPythonDir } from '../../src/platform/unbound-python.js';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { inNamespace, NetnsLab, ROOT } from '../helpers/netns-lab.js';

const skipReason = () => systemSkip('the restart-under-load namespace lab', {
  root: true,
  programs: ['unbound', 'unbound-control', 'kea-dhcp4', 'chronyd', 'chronyc', 'caddy', 'wireguard-go', 'wg', 'busybox', 'dig', 'ip', 'setpriv', 'ulogd', 'softflowd', 'softflowctl', 'nfcapd', 'nfdump'],
  users: ['unbound', '_kea', '_chrony', 'caddy', 'nobody'],
  also: [['python3-unbound', unboundPythonDir()], ['libdhcp_lease_cmds.so (kea-common)', keaHookLibrary('libdhcp_lease_cmds.so')]],
});

const FW = '10.238.0.1';
const CLIENT = '10.238.0.2';
const DHCP_SERVER = '10.239.0.1';
const CLIENT_MAC = '02:42:0a:ef:00:42';
const TUNNEL_PORT = 51871;
const PROXY_PORT = 8088;
const BACKEND_PORT = 18089;
/** The rule blocks and logs these ports; each probe uses its own, so each is found in /blocked by its port. */
const BLOCKED_PORTS = { from: 9001, to: 9010 };
const COLLECTOR_PORT = 4739;

/** One TCP SYN from the client to a blocked port of the firewall (dropped: the attempt gives up after 300 ms). */
function probeBlocked(ns: string, port: number): void {
  inNamespace(ns, process.execPath, ['-e', `const s = require('net').connect(${port}, '${FW}'); const end = () => process.exit(0); s.setTimeout(300, end); s.on('error', end); s.on('connect', end);`], { timeoutMs: 10_000 });
}

/**
 * A burst of 4 MB of UDP from another source port: softflowd's capture ring hands packets over a block at a time,
 * so a lone datagram can sit in a block that only later traffic fills; the burst makes every packet before it count.
 */
function flushCapture(ns: string): void {
  inNamespace(ns, process.execPath, ['-e', `const s = require('dgram').createSocket('udp4'); const b = Buffer.alloc(1400); let n = 0; s.bind(40199, function go() { if (n++ >= 3000) return s.close(); s.send(b, 9, '${FW}', go); });`], { timeoutMs: 60_000 });
}

/** One UDP datagram from a marked source port (its flow record is found at the collector by that port). */
function sendMarked(ns: string, sourcePort: number): void {
  inNamespace(ns, process.execPath, ['-e', `const s = require('dgram').createSocket('udp4'); s.bind(${sourcePort}, () => s.send('mark', 9, '${FW}', () => s.close()));`], { timeoutMs: 10_000 });
}

const until = async <T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** One DHCP exchange by busybox udhcpc; `requested` asks for that address (a renewal). */
function udhcpc(ns: string, link: string, requested?: string): { address: string | null; output: string } {
  const args = ['netns', 'exec', ns, 'busybox', 'udhcpc', '-i', link, '-f', '-q', '-n', '-t', '5', '-T', '1', '-s', '/bin/true', ...(requested ? ['-r', requested] : [])];
  const result = spawnSync('ip', args, { encoding: 'utf8', timeout: 30_000 });
  const output = `${result.stdout}${result.stderr}`;
  return { address: /lease of (\S+) obtained/.exec(output)?.[1] ?? null, output };
}

/** wg-quick's `[Interface]`/`[Peer]` sections as key → value maps. */
function wgSections(conf: string): Record<string, string>[] {
  return conf.split(/^\[(?:Interface|Peer)\]$/m).slice(1).map((section) => Object.fromEntries(
    section.split('\n').map((line) => /^(\w+)\s*=\s*(.+)$/.exec(line.trim())).filter((m): m is RegExpExecArray => m !== null).map((m) => [m[1], m[2]]),
  ));
}

/**
 * A continuous ping through the tunnel (busybox, 5 a second, each answer awaited up to 1 s). Its output goes to a
 * file, not a pipe to this process: while the test waits in a synchronous call (lab.api waits for a slow start
 * with spawnSync) nothing drains a pipe, busybox blocks writing its reply lines once the pipe is full, and the
 * replies that arrive meanwhile (through the tunnel, counted by both ends) are never read: lost pings that the
 * tunnel never lost.
 */
const PING_INTERVAL_S = 0.2;
const PING_WAIT_S = 1;
function startPing(ns: string, host: string, outputFile: string): ChildProcess & { outputFile: string } {
  const output = openSync(outputFile, 'w', 0o600);
  try {
    const ping = spawn('ip', ['netns', 'exec', ns, 'busybox', 'ping', '-i', String(PING_INTERVAL_S), '-W', String(PING_WAIT_S), host], { stdio: ['ignore', output, 'ignore'] });
    return Object.assign(ping, { outputFile });
  } finally {
    closeSync(output);
  }
}

/**
 * Stops the ping and counts the echoes that were never answered. The requests sent within the last second
 * (PING_WAIT_S) may still be on their way when the ping is stopped — on a loaded machine more than one — so
 * they are left out rather than counted as lost; every earlier request had its whole second to be answered.
 */
async function stopPing(ping: ChildProcess & { outputFile: string }): Promise<{ sent: number; received: number; lost: number; lostSeqs: number[] }> {
  const exited = new Promise((resolve) => ping.once('exit', resolve));
  ping.kill('SIGINT');
  await exited;
  const output = readFileSync(ping.outputFile, 'utf8');
  const summary = /(\d+) packets transmitted, (\d+) packets received/.exec(output);
  if (!summary) throw new Error(`no ping summary: ${output.slice(-300)}`);
  const sent = Number(summary[1]);
  const answered = new Set([...output.matchAll(/seq=(\d+)/g)].map((match) => Number(match[1])));
  const settled = sent - Math.ceil(PING_WAIT_S / PING_INTERVAL_S) - 1;
  const lostSeqs: number[] = [];
  for (let seq = 0; seq < settled; seq++) if (!answered.has(seq)) lostSeqs.push(seq);
  return { sent, received: Number(summary[2]), lost: lostSeqs.length, lostSeqs };
}

interface LoadSummary {
  duration_ms: number;
  dns: { ok: number; failed: number; failures: { at_ms: number; reason: string }[] };
  http: { ok: number; failed: number; failures: { at_ms: number; reason: string }[] };
}

function startLoad(ns: string): { child: ChildProcess; started: Promise<void>; stop: () => Promise<LoadSummary> } {
  const child = spawn('ip', ['netns', 'exec', ns, process.execPath, join(ROOT, 'test/e2e/fixtures/restart-load.mjs'), FW, 'nas.home.lan', '192.168.1.10', `http://${FW}:${PROXY_PORT}/`, 'app.lab.test'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = until('the load generator to start', () => output.includes('started'), 10_000).then(() => undefined);
  const stop = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    return JSON.parse(output.trim().split('\n').pop()!) as LoadSummary;
  };
  return { child, started, stop };
}

test('restart under load: Bulwark stopped (SIGTERM, then SIGKILL) and started again drops no DNS query, fetch or lease, at most one ping, and keeps every daemon\'s pid', { skip: skipReason(), timeout: 420_000 }, async (t) => {
  const lab = new NetnsLab('b36', { privateParent: true });
  const short = lab.tag.slice(0, 6);
  const clientWg = `b36${short}c`;
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const dhcpClient = lab.namespace('dh');
    lab.link({ ns: fw, name: `f${lab.tag}`, address: `${FW}/24` }, { ns: client, name: `c${lab.tag}`, address: `${CLIENT}/24` });
    const dhcpLink = `d${lab.tag}`;
    const dhcpClientLink = `e${lab.tag}`;
    lab.link({ ns: fw, name: dhcpLink, address: `${DHCP_SERVER}/24` }, { ns: dhcpClient, name: dhcpClientLink, mac: CLIENT_MAC });
    // The proxy's backend, in the firewall namespace on loopback.
    lab.spawnIn(fw, process.execPath, ['-e', `require('http').createServer((q, r) => r.end('backend ' + q.headers.host)).listen(${BACKEND_PORT}, '127.0.0.1')`]);
    const startBulwark = async () => lab.startBulwark(fw, await freePort(), ['--wireguard-prefix', `b36${short}w`]);
    await startBulwark();

    // DNS
    lab.call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: [FW, '127.0.0.1'], port: 53, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    lab.call('POST', '/api/v1/dns/resolver/acls', { network: '10.238.0.0/24', action: 'allow' });
    lab.call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'nas', domain: 'home.lan', value: '192.168.1.10' });
    assert.equal(lab.call('POST', '/api/v1/dns/resolver/apply').running, true);
    // DHCP
    lab.call('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: [dhcpLink] });
    lab.call('POST', '/api/v1/dhcp/v4/subnets', { network: '10.239.0.0/24', pool_start: '10.239.0.100', pool_end: '10.239.0.150', gateway: DHCP_SERVER });
    assert.equal(lab.call('POST', '/api/v1/dhcp/v4/apply').running, true);
    // Time (its source never answers here: chronyd runs and serves its state regardless)
    for (const source of lab.call('GET', '/api/v1/time/sources')) lab.call('DELETE', `/api/v1/time/sources/${source.id}`, undefined, 204);
    lab.call('POST', '/api/v1/time/sources', { address: CLIENT, min_poll: -2, max_poll: 0 });
    lab.call('PUT', '/api/v1/time/config', { enabled: true, clock_discipline: false, ntp_enabled: false });
    assert.equal(lab.call('POST', '/api/v1/time/apply').running, true);
    // Reverse proxy: plain HTTP on the LAN address to the backend on loopback (named in the outbound allow-list)
    lab.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32', `${CLIENT}/32`] });
    const rp = '/api/v1/reverse-proxy';
    lab.call('POST', `${rp}/entrypoints`, { name: 'web', address: `${FW}:${PROXY_PORT}` });
    lab.call('POST', `${rp}/http/services`, { name: 'app', service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url: `http://127.0.0.1:${BACKEND_PORT}` }] }) });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-app', rule: 'Host(`app.lab.test`)', service: 'app', entry_points: '["web"]' });
    lab.call('PUT', `${rp}/config`, { enabled: true });
    lab.call('POST', `${rp}/apply`);
    // WireGuard: the appliance's tunnel, and the client's wireguard-go configured from its peer file
    const tunnel = lab.call('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: TUNNEL_PORT, address: '10.240.0.1/24', endpoint_host: FW });
    const peer = lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { name: 'laptop', allowed_ips: 'auto', auto_generate_key: true });
    lab.call('POST', `/api/v1/vpn/wg/${tunnel.id}/start`);
    const peerConf = lab.call('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config?include_keys=true`).split_tunnel as string;
    const [iface, server] = wgSections(peerConf);
    lab.spawnIn(client, 'wireguard-go', ['-f', clientWg]);
    await until(`${clientWg} created`, () => existsSync(`/var/run/wireguard/${clientWg}.sock`));
    const wgFile = join(lab.dataDir, `${clientWg}.conf`);
    writeFileSync(wgFile, `[Interface]\nPrivateKey = ${iface.PrivateKey}\n\n[Peer]\nPublicKey = ${server.PublicKey}\nEndpoint = ${server.Endpoint}\nAllowedIPs = ${server.AllowedIPs}\nPersistentKeepalive = 5\n`, { mode: 0o600 });
    inNamespace(client, 'wg', ['setconf', clientWg, wgFile]);
    inNamespace(client, 'ip', ['address', 'add', iface.Address, 'dev', clientWg]);
    inNamespace(client, 'ip', ['link', 'set', clientWg, 'up']);
    for (const route of server.AllowedIPs.split(',').map((r) => r.trim())) inNamespace(client, 'ip', ['route', 'replace', route, 'dev', clientWg]);
    await until('a ping through the tunnel', () => spawnSync('ip', ['netns', 'exec', client, 'busybox', 'ping', '-c', '1', '-W', '1', '10.240.0.1']).status === 0);
    // Blocked-packet logging: a rule that blocks and logs a port range (ulogd2 reads the NFLOG group).
    lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: BLOCKED_PORTS.from, dst_port_end: BLOCKED_PORTS.to, log: true, description: 'b36: blocked and logged' });
    // Flow export of the client link to an IPFIX collector in the client namespace.
    const flowDir = join(lab.dataDir, 'nfcapd');
    mkdirSync(flowDir);
    const nfcapd = lab.spawnIn(client, findProgram('nfcapd')!, ['-w', flowDir, '-b', CLIENT, '-p', String(COLLECTOR_PORT), '-t', '600']);
    const exportLink = `f${lab.tag}`;
    const flowExport = lab.call('PUT', '/api/v1/settings/flow-export', { enabled: true, protocol: 'ipfix', collectors: [`${CLIENT}:${COLLECTOR_PORT}`], interfaces: [exportLink], active_timeout_secs: 60, inactive_timeout_secs: 2 });
    assert.equal(flowExport.status.running, true, JSON.stringify(flowExport));
    // A coordinated apply records the version every service runs.
    lab.call('POST', '/api/v1/reload');

    /** Waits (up to 20 s) for a blocked SYN to `port` from the client in GET /blocked. */
    const untilBlockedListed = (port: number, when: string) => until(`the blocked SYN to ${port} (${when}) in /blocked`, () => {
      const [blocked] = lab.api(['GET', '/api/v1/blocked?limit=1000']);
      return blocked.status === 200 && blocked.body.some((b: { dst_port: number; src_addr: string }) => b.dst_port === port && b.src_addr === CLIENT);
    }, 20_000);
    let blockedPort = BLOCKED_PORTS.from;
    let markPort = 40120;
    const marks: number[] = [];
    const mark = () => {
      marks.push(++markPort);
      sendMarked(client, markPort);
    };
    probeBlocked(client, blockedPort);
    await untilBlockedListed(blockedPort, 'before the restarts');
    mark();

    const lease = udhcpc(dhcpClient, dhcpClientLink);
    assert.ok(lease.address, lease.output);

    const pids = () => {
      const [dns, dhcp, time, proxy, wg, status, flows] = lab.api(
        ['GET', '/api/v1/dns/resolver/status'], ['GET', '/api/v1/dhcp/status'], ['GET', '/api/v1/time/status'], ['GET', `${rp}/status`], ['GET', `/api/v1/vpn/wg/${tunnel.id}/status`],
        ['GET', '/api/v1/status'], ['GET', '/api/v1/settings/flow-export'],
      );
      return {
        unbound: dns.body.pid, kea: dhcp.body.pid, chronyd: time.body.pid, caddy: proxy.body.pid, wireguard_go: wg.body.pid,
        ulogd: status.body.traffic.blocked_log.pid, softflowd: flows.body.status.interfaces[0]?.pid,
      };
    };
    const before = pids();
    // wireguard-go's UDP socket (its inodes): reconfiguring the listen port closes it and opens another.
    const tunnelSocket = () => [...inNamespace(fw, 'ss', ['-H', '-u', '-l', '-n', '-e', 'sport', '=', `:${TUNNEL_PORT}`]).matchAll(/ino:(\d+)/g)].map((m) => m[1]).sort().join(',');
    const socketBefore = tunnelSocket();
    assert.notEqual(socketBefore, '', 'wireguard-go listens on the tunnel port');
    // The tunnel interface's addresses, the kernel's IPv6 link-local one included: a flush and re-add of its address
    // (a moment in which what arrives through the tunnel for it is dropped) would lose the link-local one for good.
    const tunnelAddresses = () => inNamespace(fw, 'ip', ['-o', 'address', 'show', 'dev', `b36${short}w0`]).split('\n').map((line) => /\sinet6?\s+(\S+)/.exec(line)?.[1]).filter(Boolean).sort().join(' ');
    const addressesBefore = tunnelAddresses();
    assert.match(addressesBefore, /10\.240\.0\.1\/24/);
    for (const [daemon, pid] of Object.entries(before)) assert.equal(typeof pid, 'number', `${daemon} runs before the restart: ${JSON.stringify(before)}`);

    /** Waits (up to 60 s) for /status to say ready: the last answer, and how long it took from the start. */
    const untilReady = async (startedAt: number) => {
      let last: any = null;
      const ready = await until('/status ready', () => {
        const [answer] = lab.api(['GET', '/api/v1/status']);
        last = answer.body;
        return answer.status === 200 && answer.body.ready === true;
      }, 60_000).catch(() => false);
      return { ready, status: last, ms: Date.now() - startedAt };
    };

    // Edits not applied: a start must bring back the applied version, never these (Unbound would restart for the
    // host; chronyd would get another source; Caddy another route).
    lab.call('POST', '/api/v1/dns/resolver/hosts', { hostname: 'pending', domain: 'home.lan', value: '192.168.1.99' });
    const digPending = () => spawnSync('ip', ['netns', 'exec', client, 'dig', '+time=2', '+tries=1', '+short', `@${FW}`, 'pending.home.lan', 'A'], { encoding: 'utf8' }).stdout.trim();
    const PENDING_SOURCE = '10.238.0.77';
    lab.call('POST', '/api/v1/time/sources', { address: PENDING_SOURCE, min_poll: -2, max_poll: 0 });
    lab.call('POST', `${rp}/http/routers`, { name: 'r-pending', rule: 'Host(`pending.lab.test`)', service: 'app', entry_points: '["web"]' });
    /** The sources the running chronyd has (its command socket), and what Caddy serves for a host, from the client. */
    const chronySocket = join(lab.runtimeRoot, 'chronyd', 'state', 'chronyd.sock');
    const chronySources = () => spawnSync(findProgram('chronyc')!, ['-h', chronySocket, '-c', '-n', 'sources'], { encoding: 'utf8' }).stdout;
    const served = (host: string) => spawnSync('ip', ['netns', 'exec', client, 'curl', '-s', '-m', '5', '-H', `Host: ${host}`, `http://${FW}:${PROXY_PORT}/`], { encoding: 'utf8' }).stdout;
    /** Only the applied edits are in force: the applied host, source and route are, the pending ones are not. */
    const assertOnlyApplied = (when: string) => {
      assert.equal(digPending(), '', `the pending host is not served ${when}`);
      const sources = chronySources();
      assert.ok(sources.includes(`,${CLIENT},`), `chronyd runs the applied source ${when}: ${sources}`);
      assert.ok(!sources.includes(PENDING_SOURCE), `chronyd lacks the pending source ${when}: ${sources}`);
      assert.equal(served('app.lab.test'), 'backend app.lab.test', `Caddy serves the applied route ${when}`);
      assert.ok(!served('pending.lab.test').includes('backend'), `Caddy lacks the pending route ${when}`);
    };
    assertOnlyApplied('before the restart');

    const figures: Record<string, unknown> = {};
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const load = startLoad(client);
      await load.started;
      const ping = startPing(client, '10.240.0.1', join(lab.dataDir, `ping-${signal}.txt`));
      const pingStartedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1000));

      const stoppedAt = Date.now();
      const code = await lab.stopBulwark(signal);
      if (signal === 'SIGTERM') assert.equal(code, 0, lab.log);
      // The gap: a DHCP client renews its lease while Bulwark is down.
      const renewal = udhcpc(dhcpClient, dhcpClientLink, lease.address!);
      assert.equal(renewal.address, lease.address, `the renewal during the gap succeeds: ${renewal.output}`);
      // A packet blocked and a flow made while the API is down: ulogd and softflowd run on.
      const blockedInGap = ++blockedPort;
      probeBlocked(client, blockedInGap);
      mark();
      const rest = 5000 - (Date.now() - stoppedAt);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));

      const startedAt = Date.now();
      await startBulwark();
      const { ready, status, ms } = await untilReady(startedAt);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const [summary, pinged] = [await load.stop(), await stopPing(ping)];

      // What the LAN saw comes first; then whether the appliance says it is back.
      assert.equal(summary.dns.failed, 0, `DNS queries failed (${signal}): ${summary.dns.failed} of ${summary.dns.ok + summary.dns.failed}, first ${JSON.stringify(summary.dns.failures.slice(0, 3))}`);
      assert.ok(summary.dns.ok > 100, `the load ran: ${summary.dns.ok} answers`);
      assert.equal(summary.http.failed, 0, `fetches through the proxy failed: ${JSON.stringify(summary.http.failures)}`);
      // Where in the run the lost echoes were (seconds after the ping started), against the stop, the start and ready.
      const when = (at: number) => ((at - pingStartedAt) / 1000).toFixed(1);
      const timeline = `lost at ${pinged.lostSeqs.map((seq) => (seq * PING_INTERVAL_S).toFixed(1)).join(', ')} s; stopped at ${when(stoppedAt)} s, started at ${when(startedAt)} s, ready at ${when(startedAt + ms)} s`;
      // What the tunnel's two ends say, for a loss: wireguard-go replaced (a new session the peer has to find) or not.
      const pidsAfter = pids();
      const [wgStatus] = lab.api(['GET', `/api/v1/vpn/wg/${tunnel.id}/status`]);
      const tunnelEnds = `wireguard-go pid ${before.wireguard_go} -> ${pidsAfter.wireguard_go}, restarts ${wgStatus.body.restarts}, last_error ${wgStatus.body.last_error}; the peer's handshake: ${spawnSync('ip', ['netns', 'exec', client, 'wg', 'show', clientWg, 'latest-handshakes'], { encoding: 'utf8' }).stdout.trim().split('\t')[1] ?? '?'} (now ${Math.floor(Date.now() / 1000)})`;
      assert.ok(pinged.lost <= 1, `pings lost through the tunnel: ${pinged.lost} of ${pinged.sent} (${signal}; ${timeline}; ${tunnelEnds})`);
      assert.deepEqual(pidsAfter, before, `the daemons are adopted, not restarted (${signal})`);
      assert.equal(tunnelSocket(), socketBefore, `the adopted tunnel is left as it runs: wireguard-go keeps its UDP socket (${signal})`);
      assert.equal(tunnelAddresses(), addressesBefore, `the adopted tunnel keeps its addresses, never flushed and added again (${signal})`);
      assert.equal(ready, true, `/status ready after the ${signal} restart: ${JSON.stringify(status?.services)}`);
      const byName = Object.fromEntries(status.services.map((s: { name: string }) => [s.name, s]));
      for (const name of ['dns', 'dhcp', 'time', 'reverse-proxy', 'wireguard', 'packet-filter']) {
        assert.equal(byName[name]?.running, true, `${name} runs after the restart: ${JSON.stringify(status.services)}`);
        assert.equal(byName[name].waiting_for, null);
      }
      for (const name of ['dns', 'dhcp', 'time']) assert.equal(typeof byName[name].applied_version, 'number', JSON.stringify(byName[name]));
      assertOnlyApplied(`after the ${signal} restart`);
      // Blocked-packet logging: the adopted ulogd's output is read again, what it logged in the gap included.
      const [afterStatus] = lab.api(['GET', '/api/v1/status']);
      assert.deepEqual([afterStatus.body.traffic.blocked_log.running, afterStatus.body.traffic.blocked_log.adopted], [true, true], JSON.stringify(afterStatus.body.traffic));
      await untilBlockedListed(blockedInGap, `during the ${signal} gap`);
      probeBlocked(client, ++blockedPort);
      await untilBlockedListed(blockedPort, `after the ${signal} restart`);
      mark();
      figures[signal] = {
        dns_queries: summary.dns.ok + summary.dns.failed, dns_failed: summary.dns.failed,
        fetches: summary.http.ok + summary.http.failed, fetches_failed: summary.http.failed,
        pings: pinged.sent, pings_lost: pinged.lost, load_average: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
        start_to_ready_ms: ms, down_ms: startedAt - stoppedAt,
      };
    }
    t.diagnostic(`figures ${JSON.stringify(figures)}`);

    // Flow export ran through both restarts: every marked datagram (before, in each gap, after each restart) is a
    // flow record at the collector. softflowd exports a flow 2 s after its last packet; nfcapd writes on exit.
    const ifindex = Number(inNamespace(fw, 'cat', [`/sys/class/net/${exportLink}/ifindex`]).trim());
    const control = join(lab.runtimeRoot, 'softflowd', 'state', `if${ifindex}.ctl`);
    flushCapture(client);
    await until('the marked flows to be exported', () => {
      const tracked = inNamespace(fw, findProgram('softflowctl')!, ['-c', control, 'dump-flows']);
      return marks.every((port) => !new RegExp(`:${port}\\b`).test(tracked));
    }, 60_000);
    const nfcapdExited = new Promise((resolve) => nfcapd.once('exit', resolve));
    nfcapd.kill('SIGTERM');
    await nfcapdExited;
    const records = inNamespace(client, findProgram('nfdump')!, ['-R', flowDir, '-q', '-N', '-o', 'fmt:%pr|%sa|%sp|%da|%dp']).split('\n').map((l) => l.replace(/\s+/g, '')).filter(Boolean);
    const exported = marks.filter((port) => records.includes(`17|${CLIENT}|${port}|${FW}|9`));
    assert.deepEqual(exported, marks, `every marked flow reached the collector:\n${records.filter((r) => r.startsWith('17|')).join('\n')}`);

    // An explicit disable still stops the adopted daemons.
    lab.call('PUT', '/api/v1/dns/resolver/config', { enabled: false });
    lab.call('POST', '/api/v1/dns/resolver/apply');
    lab.call('PUT', '/api/v1/dhcp/v4/config', { enabled: false });
    lab.call('POST', '/api/v1/dhcp/v4/apply');
    const [dnsAfter, dhcpAfter] = lab.api(['GET', '/api/v1/dns/resolver/status'], ['GET', '/api/v1/dhcp/status']);
    assert.equal(dnsAfter.body.running, false);
    assert.equal(dhcpAfter.body.running, false);
    for (const pid of [before.unbound, before.kea]) await until(`pid ${pid} to end`, () => !existsSync(`/proc/${pid}/cmdline`) || spawnSync('cat', [`/proc/${pid}/stat`], { encoding: 'utf8' }).stdout.split(') ')[1]?.startsWith('Z'), 10_000);
    const [status] = lab.api(['GET', '/api/v1/status']);
    assert.equal(status.body.ready, true, 'disabled services are not waited for');
  } catch (error) {
    throw new Error(`${(error as Error).message}\nBulwark's output:\n${lab.log}`);
  } finally {
    await lab.cleanup();
    spawnSync('rm', ['-f', `/var/run/wireguard/${clientWg}.sock`, `/var/run/wireguard/b36${short}w0.sock`]);
  }
});
