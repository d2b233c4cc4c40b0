/**
 * Traffic for the suites that compare the packet simulator with the kernel (test/e2e/simulate-agreement.test.ts,
 * test/e2e/assertions-agreement.test.ts): a seeded generator, a receiver for the server namespace and a sender for
 * the client namespace. Each probe carries a unique payload (its id); the receiver prints the payloads it got.
 */

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

