import { fork } from 'node:child_process';
import { adminBearer, startServer, throughput } from './harness.js';
import { EVENT_TOPICS } from '../src/core/events.js';

/**
 * Remote syslog over TCP while the API serves reads: packet-filter log events are offered as fast as the
 * connection takes them (kept under the queue bound, so nothing is dropped) while a client in another process
 * reads GET /api/v1/rules; a collector in a third process counts the octet-counted frames it received.
 * Reported: messages/s delivered, dropped, and the reads/s served meanwhile next to reads/s without syslog.
 */
const DURATION_MS = 5000;
const server = await startServer();
const headers = await adminBearer(server.url);
const origin = server.url;

const baseline = await throughput({ origin, path: '/api/v1/rules', headers, durationMs: DURATION_MS });

const sink = fork(new URL('./syslog-sink.js', import.meta.url));
const { port } = await new Promise<{ port: number }>((resolve) => sink.once('message', resolve as never));
const frames = () => new Promise<number>((resolve) => {
  sink.once('message', (answer: { frames: number }) => resolve(answer.frames));
  sink.send('count');
});
const put = await fetch(`${origin}/api/v1/settings/syslog`, {
  method: 'PUT', headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify({ enabled: true, host: '127.0.0.1', port, transport: 'tcp', format: 'rfc5424', allowed_addresses: ['127.0.0.1'], pf_enabled: true, queue_limit: 100_000 }),
});
if (put.status !== 200) throw new Error(`PUT /settings/syslog: ${put.status} ${await put.text()}`);
const { events } = server.app.context;
const status = async () => (await (await fetch(`${origin}/api/v1/settings/syslog/status`, { headers })).json() as { category: string; sent: number; dropped: number; queued: number }[]).find((row) => row.category === 'all')!;

const line = (sequence: number) => ({
  timestamp: new Date().toISOString(), action: 'block', direction: 'in', interface: 'wan0', protocol: 'tcp',
  src_addr: `198.51.100.${sequence % 250}`, src_port: 1024 + (sequence % 60000), dst_addr: '203.0.113.10', dst_port: 22, reason: 'policy', rule_id: '00000000-0000-4000-8000-000000000001',
});

/**
 * One run: packet-filter lines offered at `rate` per second (topped up every 10 ms to what the clock says), or with rate 0 as fast as the
 * connection takes them (topped up whenever fewer than 5,000 wait), while the reads run.
 */
async function measure(rate: number) {
  let offered = 0;
  let running = true;
  const produce = async () => {
    const began = performance.now();
    while (running) {
      // Paced by the clock, not by the timer's period (timers run late on a busy loop).
      const room = rate > 0 ? Math.floor((rate * (performance.now() - began)) / 1000) - offered : Math.max(0, 5000 - (await status()).queued);
      for (let i = 0; i < room; i++) events.emit(EVENT_TOPICS.packetLog, line(++offered));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const before = await status();
  const start = { frames: await frames(), at: performance.now() };
  const producing = produce();
  const reads = await throughput({ origin, path: '/api/v1/rules', headers, durationMs: DURATION_MS });
  const end = { frames: await frames(), at: performance.now() };
  running = false;
  await producing;
  const after = await status();
  const perSecond = (end.frames - start.frames) / ((end.at - start.at) / 1000);
  const offeredLabel = rate > 0 ? `${rate}/s offered` : 'as fast as it goes';
  console.log(`  ${offeredLabel.padEnd(18)} ${String(Math.round(perSecond)).padStart(6)} messages/s delivered, ${after.dropped - before.dropped} dropped; GET /api/v1/rules ${Math.round(reads.perSecond)} reads/s (${Math.round(reads.cpuMicrosPerRequest)} us CPU per read incl. syslog)`);
}

console.log(`syslog over TCP (RFC 5424, octet counting), packet-filter lines, to a collector in another process; reads from a client in another process, ${DURATION_MS / 1000} s each`);
console.log(`  without syslog: GET /api/v1/rules ${Math.round(baseline.perSecond)} reads/s (${Math.round(baseline.cpuMicrosPerRequest)} us CPU per read)`);
for (const rate of [1000, 5000, 20000, 0]) await measure(rate);
sink.kill();
await server.stop();
