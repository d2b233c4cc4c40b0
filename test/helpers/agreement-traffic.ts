/**
 * Traffic for the suites that compare the packet simulator with the kernel (test/e2e/simulate-agreement.test.ts,
 * test/e2e/assertions-agreement.test.ts): the namespaces and the app they share (agreementLab), a seeded generator,
 * a receiver for the server namespace and a sender for the client namespace. Each probe carries a unique payload
 * (its id); the receiver prints the payloads it got.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildThreeNamespaces, inNs, removeNamespaces, toolsInNamespace } from './three-namespaces.js';
import { startTestApp, apiCalls, type TestApp } from './app.js';
import { adminHeaders, type Headers } from './auth.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import { NftablesPacketFilter } from '../../src/platform/linux/packet-filter.js';

/** mulberry32: a small deterministic generator, so a failing seed can be replayed. */
export function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (low: number, high: number) => low + Math.floor(next() * (high - low + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const chance = (p: number) => next() < p;
  return { int, pick, chance };
}

/** Receives every redirected probe (UDP 9999, TCP 9998) and prints its payload, one per line. */
export const RECEIVER = `
const dgram = require('node:dgram'); const net = require('node:net');
const u = dgram.createSocket({ type: 'udp4', recvBufferSize: 8 * 1024 * 1024 });
u.on('message', (m) => process.stdout.write(m.toString() + '\\n'));
u.bind(9999, '0.0.0.0', () => process.stdout.write('ready\\n'));
net.createServer((s) => { let d = ''; s.on('data', (c) => (d += c)); s.on('end', () => { process.stdout.write(d + '\\n'); s.end(); }); s.on('error', () => {}); }).listen(9998, '0.0.0.0');
`;
/** Sends the probes of a JSON file from the client: UDP in paced batches, TCP connections a hundred at a time. */
export const SENDER = `
const dgram = require('node:dgram'); const net = require('node:net');
const probes = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const udp = (p) => new Promise((resolve) => {
  const s = dgram.createSocket('udp4');
  s.on('error', () => { s.close(); resolve(); });
  s.bind({ address: p.src, port: p.sport }, () => s.send(p.id, p.dport, p.dst, () => { s.close(); resolve(); }));
});
const tcp = (p) => new Promise((resolve) => {
  const s = net.connect({ host: p.dst, port: p.dport, localAddress: p.src, localPort: p.sport });
  const done = () => { clearTimeout(timer); s.destroy(); resolve(); };
  const timer = setTimeout(done, 2000);
  s.on('connect', () => s.end(p.id));
  s.on('close', done);
  s.on('error', done);
});
(async () => {
  const udps = probes.filter((p) => p.proto === 'udp');
  for (let i = 0; i < udps.length; i += 100) { await Promise.all(udps.slice(i, i + 100).map(udp)); await sleep(5); }
  const tcps = probes.filter((p) => p.proto === 'tcp');
  for (let i = 0; i < tcps.length; i += 100) await Promise.all(tcps.slice(i, i + 100).map(tcp));
  process.stdout.write('sent\\n');
})();
`;


/**
 * The lab both agreement suites run in: client — firewall — server namespaces (three-namespaces.ts, named
 * `<prefix>c|f|s<pid>`, addresses `<net>.1.x` outside and `<net>.2.x` inside), the client holding `clients` as extra
 * addresses, the server redirecting every UDP and TCP port to the receiver's, and Bulwark in this process on the
 * simulated platform with the nftables driver loading into the firewall namespace.
 */
export function agreementLab(options: { prefix: string; net: string; clients: readonly string[]; servers: readonly string[] }) {
  const { prefix, net } = options;
  const ns = { client: `${prefix}c${process.pid}`, firewall: `${prefix}f${process.pid}`, server: `${prefix}s${process.pid}` };
  const work = mkdtempSync(join(tmpdir(), `bulwark-${prefix}-`));
  const children: ChildProcess[] = [];
  let t: TestApp | undefined;
  let headers: Headers;
  const { call } = apiCalls(() => ({ app: t!.app, headers }));

  async function setUp(): Promise<void> {
    buildThreeNamespaces(ns, { client: `${net}.1.2`, firewallOutside: [`${net}.1.1`], firewallInside: `${net}.2.1`, server: [...options.servers] });
    for (const address of options.clients) inNs(ns.client, 'ip', 'addr', 'add', `${address}/24`, 'dev', 'cl0');
    // Every port of the server namespace reaches the one receiver; the payload says which probe it was.
    writeFileSync(join(work, 'server.nft'), `table ip ${prefix}srv {\n chain pre {\n  type nat hook prerouting priority dstnat; policy accept;\n  udp dport != 9999 redirect to :9999\n  tcp dport != 9998 redirect to :9998\n }\n}\n`);
    inNs(ns.server, 'nft', '-f', join(work, 'server.nft'));
    const tools = toolsInNamespace(work, ns.firewall);
    const platform = createSimulatedPlatform();
    const packetFilter = new NftablesPacketFilter(() => platform.packetFilter.status(), tools.nft, tools.conntrack, tools.ip);
    t = await startTestApp({ platform: { ...platform, packetFilter } });
    headers = await adminHeaders(t.app);
  }

  async function tearDown(): Promise<void> {
    for (const child of children) child.kill('SIGTERM');
    await t?.close();
    removeNamespaces(ns);
    rmSync(work, { recursive: true, force: true });
  }

  /** Starts RECEIVER in the server namespace: resolves once it listens, with the ids it receives from then on. */
  async function startReceiver(): Promise<{ received: Set<string>; stop: () => void }> {
    const receiver = spawn('ip', ['netns', 'exec', ns.server, process.execPath, '-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(receiver);
    const received = new Set<string>();
    let partial = '';
    await new Promise<void>((ready) => {
      receiver.stdout!.on('data', (chunk: Buffer) => {
        partial += chunk.toString();
        const lines = partial.split('\n');
        partial = lines.pop()!;
        for (const line of lines) line === 'ready' ? ready() : received.add(line);
      });
    });
    return { received, stop: () => receiver.kill('SIGTERM') };
  }

  /** Sends the probes from the client namespace through SENDER; resolves when it has sent them all. */
  async function send(probes: readonly object[]): Promise<void> {
    writeFileSync(join(work, 'probes.json'), JSON.stringify(probes));
    const sender = spawn('ip', ['netns', 'exec', ns.client, process.execPath, '-e', SENDER, join(work, 'probes.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(sender);
    await new Promise((resolve) => sender.on('close', resolve));
  }

  return { ns, call, app: () => t!.app, setUp, tearDown, startReceiver, send };
}
