import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { IdsService } from '../src/areas/ids/service.js';
import { EveTail } from '../src/platform/linux/eve-tail.js';
import { fmt, startServer } from './harness.js';

/**
 * EVE JSON into alerts (issue 16): the rate at which EVE alert records become stored alerts (IdsService.ingestEve:
 * parse, suppression check, SQLite insert, rule hit counters) against the bare JSON.parse of the same lines, and
 * the memory the EVE follower needs for a 200 MB log against reading that log whole. Input: the shared
 * zeus-analysis EVE log (real Suricata output), repeated; without ../shared, generated alert records.
 */
const SHARED = new URL('../../../shared/fixtures/suricata/eve/zeus-analysis-eve.head2500.json', import.meta.url);
const source = (() => {
  try {
    return readFileSync(SHARED, 'utf8');
  } catch {
    return Array.from({ length: 2500 }, (_, i) => JSON.stringify({ timestamp: new Date().toISOString(), event_type: 'alert', src_ip: `10.0.${i % 255}.1`, dest_ip: '192.0.2.1', proto: 'TCP', alert: { signature_id: 2_000_000 + (i % 500), signature: `bench ${i % 500}`, severity: 2 } })).join('\n');
  }
})();
const lines = source.split('\n').filter(Boolean);
const alertsPerCopy = lines.filter((line) => line.includes('"event_type":"alert"')).length;
const copies = Math.ceil(50_000 / alertsPerCopy);
const text = Array.from({ length: copies }, () => lines.join('\n')).join('\n');

const server = await startServer();
const ids = (server.app.areas.find((area) => area.name === 'ids') as unknown as { service: IdsService }).service;

let start = performance.now();
let parsed = 0;
for (const line of text.split('\n')) if ((JSON.parse(line) as { event_type?: string }).event_type === 'alert') parsed++;
const parseMs = performance.now() - start;

start = performance.now();
const result = ids.ingestEve(text);
const ingestMs = performance.now() - start;
await server.stop();
console.log(`EVE ingestion: ${result.ingested} alerts stored in ${fmt(ingestMs, 0)} ms = ${fmt(result.ingested / (ingestMs / 1000), 0)} alerts/s (baseline, JSON.parse only: ${parsed} alerts in ${fmt(parseMs, 0)} ms = ${fmt(parsed / (parseMs / 1000), 0)}/s; ratio ${fmt(ingestMs / parseMs, 1)}x)`);

// The follower over a 200 MB log, against reading it whole.
const dir = mkdtempSync(join(tmpdir(), 'bulwark-bench-eve-'));
const file = join(dir, 'eve.json');
writeFileSync(file, '');
const chunk = `${lines.join('\n')}\n`;
while (statSync(file).size < 200 * 1024 * 1024) appendFileSync(file, chunk);
const size = statSync(file).size;
// Live heap (after a collection) is what the follower holds; RSS would mostly show when V8 chose to collect.
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
};

const before = heap();
let peak = 0;
let seen = 0;
let lastLine = '';
const tail = new EveTail(file, (delivered) => {
  seen += delivered.split('\n').length;
  lastLine = delivered.slice(delivered.lastIndexOf('\n') + 1);
  // Collected and sampled while the delivered chunk is still referenced: the most the follower holds at once.
  peak = Math.max(peak, heap() - before);
});
await tail.read();
// Timed separately, without the collections the memory samples force.
let timedLines = 0;
const timed = new EveTail(file, (delivered) => {
  timedLines += delivered.split('\n').length;
});
start = performance.now();
await timed.read();
const tailMs = performance.now() - start;

const baseBefore = heap();
const whole = readFileSync(file, 'utf8').split('\n');
const wholeHeld = process.memoryUsage().heapUsed / 1024 / 1024 - baseBefore;
rmSync(dir, { recursive: true, force: true });
console.log(`EVE follower: ${fmt(size / 1024 / 1024, 0)} MB, ${seen} lines (${timedLines} timed) in ${fmt(tailMs, 0)} ms, at most ${fmt(peak, 0)} MB of heap while delivering (last line ${lastLine.length} chars); baseline, the file read whole: ${whole.length} lines holding ${fmt(wholeHeld, 0)} MB`);
