import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { findProgram } from '../src/platform/daemon-tools.js';
import { generateKeyPair, renderInterfaceConfig } from '../src/areas/vpn/wireguard.js';
import { fmt, percentile } from './harness.js';

/**
 * WireGuard through Bulwark's linux driver (wireguard-go on this kernel), in two network namespaces this bench
 * creates: the time `up` takes (wireguard-go started, keys and peer set, address, MTU, link up), next to the same
 * ip steps on a plain veth; the time from a client's wireguard-go start to its first ping answered through the
 * tunnel (handshake included); and iperf3 TCP throughput through the tunnel next to the same transfer over the
 * bare veth between the namespaces, in the same run.
 */
const CYCLES = 5;
const IPERF_SECONDS = 5;
const tag = `b13b${process.pid.toString(36)}`;
const fw = `${tag}fw`;
const client = `${tag}cl`;
const serverIf = `${tag}s`;
const clientIf = `${tag}c`;

const missing = ['wireguard-go', 'wg', 'ip', 'iperf3', 'busybox'].filter((p) => !findProgram(p));
if (process.getuid?.() !== 0 || missing.length) {
  console.log(`skipped: ${process.getuid?.() !== 0 ? 'needs root (network namespaces)' : `${missing.join(', ')} not installed`}`);
  process.exit(0);
}

const sh = (args: string[]) => {
  const result = spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
};
const inNs = (ns: string, ...args: string[]) => sh(['ip', 'netns', 'exec', ns, ...args]);
const pings = (ns: string, host: string) => spawnSync('ip', ['netns', 'exec', ns, 'busybox', 'ping', '-c', '1', '-W', '1', host]).status === 0;
const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-wg-'));

function cleanup(): void {
  for (const ns of [fw, client]) {
    for (const pid of spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) spawnSync('kill', ['-9', pid]);
    spawnSync('ip', ['netns', 'del', ns]);
  }
  for (const name of [serverIf, clientIf]) rmSync(`/var/run/wireguard/${name}.sock`, { force: true });
  rmSync(work, { recursive: true, force: true });
}

async function iperf(host: string): Promise<number> {
  const server = spawn('ip', ['netns', 'exec', fw, 'iperf3', '-s', '-1', '-B', host, '-p', '5313'], { stdio: 'ignore' });
  for (let i = 0; i < 50 && !sh(['ip', 'netns', 'exec', fw, 'ss', '-ltn', 'sport = :5313']).includes('5313'); i++) await new Promise((r) => setTimeout(r, 100));
  const report = JSON.parse(inNs(client, 'iperf3', '-c', host, '-p', '5313', '-t', String(IPERF_SECONDS), '-J'));
  server.kill();
  return report.end.sum_received.bits_per_second / 1e6;
}

try {
  for (const ns of [fw, client]) {
    sh(['ip', 'netns', 'add', ns]);
    inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
  }
  sh(['ip', 'link', 'add', `${tag}a`, 'netns', fw, 'type', 'veth', 'peer', 'name', `${tag}b`, 'netns', client]);
  inNs(fw, 'ip', 'address', 'add', '192.168.141.1/24', 'dev', `${tag}a`);
  inNs(client, 'ip', 'address', 'add', '192.168.141.2/24', 'dev', `${tag}b`);
  inNs(fw, 'ip', 'link', 'set', `${tag}a`, 'up');
  inNs(client, 'ip', 'link', 'set', `${tag}b`, 'up');

  const server = generateKeyPair();
  const peer = generateKeyPair();
  const peers = [{ public_key: peer.public_key, preshared_key: null, allowed_ips: ['10.241.0.2/32'], endpoint: null, persistent_keepalive: null }];
  const spec = {
    interface: serverIf, private_key: server.private_key, public_key: server.public_key, listen_port: 51913, address: '10.241.0.1/24', mtu: null, peers,
    setconf: renderInterfaceConfig({ private_key: server.private_key, listen_port: 51913, peers }), setconfFile: join(work, `${serverIf}.conf`),
  };
  const sideScript = fileURLToPath(new URL('./wireguard-side.js', import.meta.url));
  const side = spawn('ip', ['netns', 'exec', fw, process.execPath, sideScript, JSON.stringify(spec), String(CYCLES)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const ups: number[] = [];
  const baselines: number[] = [];
  let backend = '';
  await new Promise<void>((resolve, reject) => {
    side.once('exit', (code) => reject(new Error(`the firewall side exited with ${code}`)));
    createInterface({ input: side.stdout! }).on('line', (line) => {
      const event = JSON.parse(line);
      if (event.event === 'up') {
        ups.push(event.ms);
        backend = event.backend;
      }
      if (event.event === 'baseline') baselines.push(event.ms);
      if (event.event === 'ready') resolve();
    });
  });

  // The client: its own wireguard-go, timed from start to the first ping answered through the tunnel.
  const clientStarted = performance.now();
  spawn('ip', ['netns', 'exec', client, 'wireguard-go', '-f', clientIf], { stdio: 'ignore' });
  while (!existsSync(`/var/run/wireguard/${clientIf}.sock`)) await new Promise((r) => setTimeout(r, 10));
  const clientConf = join(work, 'client.conf');
  writeFileSync(clientConf, renderInterfaceConfig({ private_key: peer.private_key, listen_port: 51914, peers: [{ public_key: server.public_key, preshared_key: null, allowed_ips: ['10.241.0.0/24'], endpoint: '192.168.141.1:51913', persistent_keepalive: null }] }), { mode: 0o600 });
  inNs(client, 'wg', 'setconf', clientIf, clientConf);
  inNs(client, 'ip', 'address', 'add', '10.241.0.2/24', 'dev', clientIf);
  inNs(client, 'ip', 'link', 'set', clientIf, 'up');
  while (!pings(client, '10.241.0.1')) if (performance.now() - clientStarted > 15_000) throw new Error('no ping through the tunnel');
  const firstPingMs = performance.now() - clientStarted;

  const tunnelMbit = await iperf('10.241.0.1');
  const vethMbit = await iperf('192.168.141.1');
  side.stdin!.end();

  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  console.log(`backend: ${backend}`);
  console.log(`interface up (driver: wireguard-go start, wg setconf, address, MTU, up), median of ${CYCLES}: ${fmt(percentile(sorted(ups), 50))} ms (max ${fmt(Math.max(...ups))} ms)`);
  console.log(`  baseline, the same ip steps on a plain veth: ${fmt(percentile(sorted(baselines), 50))} ms`);
  console.log(`client wireguard-go start to first ping answered through the tunnel: ${fmt(firstPingMs)} ms`);
  console.log(`iperf3 TCP, ${IPERF_SECONDS} s: through wireguard-go ${fmt(tunnelMbit, 0)} Mbit/s; baseline over the bare veth ${fmt(vethMbit, 0)} Mbit/s (ratio ${fmt(tunnelMbit / vethMbit, 3)})`);
} finally {
  cleanup();
}
