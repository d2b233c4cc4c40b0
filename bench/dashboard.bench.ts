import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import { createAuthArea } from '../src/areas/auth/routes.js';
import { createStatusArea } from '../src/areas/status/routes.js';
import { newLiveFeeds } from '../src/live/feeds.js';
import { createDashboardArea } from '../src/areas/dashboard/routes.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import { SimulatedTraffic } from '../src/platform/simulated/traffic.js';
import { parseConntrack } from '../src/platform/linux/conntrack.js';
import type { ConnectionTable, Flow, TrafficSource } from '../src/platform/connections.js';
import { fmt, percentile } from './harness.js';
import { MAX_STREAMS_PER_ACCOUNT } from '../src/live/stream-registry.js';

/**
 * The dashboard at scale: CPU of one tick with 100,000 states and 64 sockets (target < 25 ms), frame bytes of
 * the full list vs the delta when 5 % of flows change, and process RSS with 100,000 states and 64 sockets
 * (target < 250 MB). Baselines in the same run: a tick with 1,000 states and 1 socket, and the RSS of the
 * same process before the table and sockets exist. The 64 clients run in a child process, so their CPU is not
 * counted; the table is generated once and then mutated, so the synthetic model's cost is not counted either
 * (the linux reader's conntrack parse is measured on its own below).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STATES = 100_000;
const SOCKETS = 64;

class BenchTraffic implements TrafficSource {
  readonly simulated = true;
  table: ConnectionTable = { flows: [], total: 0 };
  async connections() {
    return this.table;
  }
  async interfaces() {
    return [{ name: 'wan0', bytes_in: 1, bytes_out: 1, packets_in: 1, packets_out: 1 }];
  }
  async ruleCounters() {
    return [];
  }
  async blocked() {
    return [];
  }
  async open() {}
  blockedLogStatus() {
    return { running: true, source: 'bench' };
  }
  async close() {}
}

/** Changes `fraction` of the flows (bytes grow), deterministically per step. */
function churn(flows: Flow[], fraction: number, step: number): Flow[] {
  const every = Math.round(1 / fraction);
  return flows.map((f, i) => ((i + step) % every === 0 ? { ...f, bytes_in: f.bytes_in + 1_500 } : f));
}

const rssMb = () => process.memoryUsage().rss / 1024 / 1024;
const baselineRss = rssMb();

const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-dash-'));
const traffic = new BenchTraffic();
let dashboard!: ReturnType<typeof createDashboardArea>;
const app = await buildApp({
  config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent' },
  logger: false,
  areas: (context) => [createAuthArea(context), createStatusArea(context), (dashboard = createDashboardArea(context, { feeds: newLiveFeeds() }, { manualTicks: true }))],
  platform: { ...createSimulatedPlatform(), traffic },
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const service = dashboard.service;
const appRss = rssMb();

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
await post('/api/v1/auth/register', { username: 'admin', password: 'Bench-password1' });
const { access_token } = (await (await post('/api/v1/auth/login', { username: 'admin', password: 'Bench-password1' })).json()) as { access_token: string };
/**
 * Tickets for n sockets: an account holds at most MAX_STREAMS_PER_ACCOUNT open streams (429 beyond), so the sockets
 * are spread over as many administrator accounts as they need (created once, then reused).
 */
const bearers = [access_token];
const tickets = async (n: number) => {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const account = Math.floor(i / MAX_STREAMS_PER_ACCOUNT);
    while (bearers.length <= account) {
      const username = `bench${bearers.length}`;
      const created = await post('/api/v1/auth/users', { username, password: 'Bench-password1', role: 'admin' }, { authorization: `Bearer ${access_token}` });
      if (created.status !== 201) throw new Error(`bench account: ${created.status} ${await created.text()}`);
      bearers.push(((await (await post('/api/v1/auth/login', { username, password: 'Bench-password1' })).json()) as { access_token: string }).access_token);
    }
    out.push(((await (await post('/api/v1/auth/ws-ticket', {}, { authorization: `Bearer ${bearers[account]}` })).json()) as { ticket: string }).ticket);
  }
  return out;
};

/** Opens sockets from a child process that counts the frames it receives. */
async function openClients(count: number) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const { default: WebSocket } = await import('ws');
    const [base, ...tickets] = process.argv.slice(1);
    let frames = 0, open = 0;
    for (const t of tickets) {
      const ws = new WebSocket(base + '/api/v1/ws?ticket=' + t);
      ws.on('open', () => { if (++open === tickets.length) process.stdout.write('open\\n'); });
      ws.on('message', () => { frames++; });
    }
    setInterval(() => process.stdout.write('frames ' + frames + '\\n'), 50);
  `, url.replace('http', 'ws'), ...(await tickets(count))], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let frames = 0;
  let opened = false;
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    for (const line of text.split('\n')) {
      if (line === 'open') opened = true;
      else if (line.startsWith('frames ')) frames = Number(line.slice(7));
    }
  });
  const waitFor = async (condition: () => boolean) => {
    const end = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > end) throw new Error('bench clients timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  await waitFor(() => opened);
  return { child, frames: () => frames, waitFor };
}

async function measureTicks(states: number, sockets: number, ticks: number) {
  let flows = new SimulatedTraffic({ slots: states }).flowsAt(1_800_000_000);
  traffic.table = { flows, total: flows.length };
  const clients = await openClients(sockets);
  await clients.waitFor(() => service.broadcaster.socketCount === sockets);
  const cpu: number[] = [];
  const wall: number[] = [];
  let received = clients.frames();
  const bytes = { full: 0, delta: 0 };
  for (let i = 0; i < ticks; i++) {
    flows = churn(flows, 0.05, i);
    traffic.table = { flows, total: flows.length };
    app.context.clock.now(); // ticks read the system clock here; the tick itself is called directly
    const startCpu = process.cpuUsage();
    const startWall = performance.now();
    await service.broadcaster.tick();
    const used = process.cpuUsage(startCpu);
    wall.push(performance.now() - startWall);
    cpu.push((used.user + used.system) / 1000);
    const stats = service.broadcaster.lastStats!;
    bytes.full = stats.fullBytes;
    bytes.delta = stats.deltaBytes ?? stats.fullBytes;
    const expected = received + sockets;
    await clients.waitFor(() => clients.frames() >= expected);
    received = clients.frames();
  }
  const rss = rssMb();
  clients.child.kill();
  await clients.waitFor(() => service.broadcaster.socketCount === 0);
  const warm = cpu.slice(2).sort((a, b) => a - b);
  return { cpuMedian: percentile(warm, 50), cpuP95: percentile(warm, 95), wallMedian: percentile(wall.slice(2).sort((a, b) => a - b), 50), bytes, rss };
}

const base = await measureTicks(1_000, 1, 12);
const big = await measureTicks(STATES, SOCKETS, 20);

console.log(`tick CPU, ${STATES} states, ${SOCKETS} sockets:  median ${fmt(big.cpuMedian, 2)} ms, p95 ${fmt(big.cpuP95, 2)} ms (wall ${fmt(big.wallMedian, 2)} ms)   target < 25 ms`);
console.log(`tick CPU baseline, 1,000 states, 1 socket:   median ${fmt(base.cpuMedian, 2)} ms, p95 ${fmt(base.cpuP95, 2)} ms (wall ${fmt(base.wallMedian, 2)} ms)`);
console.log(`frame bytes with 5% of ${STATES} flows changing: delta ${big.bytes.delta} B vs full ${big.bytes.full} B (baseline) = ${fmt((100 * big.bytes.delta) / big.bytes.full)} %`);
console.log(`process RSS with ${STATES} states and ${SOCKETS} sockets: ${fmt(big.rss)} MB   target < 250 MB   (baseline: ${fmt(baselineRss)} MB at start, ${fmt(appRss)} MB with the app listening)`);

// The linux reader's own cost at this size: parsing `conntrack -L -o extended` text for 100,000 states.
const line = (i: number) => `ipv4     2 tcp      6 431999 ESTABLISHED src=10.${i >> 16 & 255}.${i >> 8 & 255}.${i & 255} dst=192.0.2.${i % 250} sport=${40000 + (i % 20000)} dport=443 packets=${i} bytes=${i * 100} src=192.0.2.${i % 250} dst=10.${i >> 16 & 255}.${i >> 8 & 255}.${i & 255} sport=443 dport=${40000 + (i % 20000)} packets=${i} bytes=${i * 900} [ASSURED] mark=0 delta-time=${i % 3600} use=1 id=${i}`;
const text = Array.from({ length: STATES }, (_, i) => line(i)).join('\n');
const parseStart = performance.now();
const parsed = parseConntrack(text);
console.log(`linux reader: parsing ${parsed.length} conntrack lines (${fmt(text.length / 1e6)} MB) takes ${fmt(performance.now() - parseStart)} ms (runs once per 5 s tick above 5,000 states)`);

await app.close();
rmSync(dataDir, { recursive: true, force: true });
