/**
 * The diagnostics' tools (docs/diagnostics.md): `ping`, `traceroute` and `dig` run as the unprivileged probe
 * account (probe-account.ts) with their output handed over line by line as it comes; `tcpdump` opens the
 * capture device as root and drops to that account with `-Z` before it reads a packet. Every run has a time
 * limit (SIGTERM, then SIGKILL), and every argument vector comes from diagnostics' validated fields, operands
 * after `--` or behind their option.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { unavailable } from '../core/errors.js';
import { describeMissing, missingTool } from './debian-packages.js';
import { PROBE_ACCOUNT, probeAccount } from './probe-account.js';

/** Longest output line handed over (a hostile name server's TXT record must not flood the page). */
const MAX_LINE = 1000;
/** Most lines one run hands over; the rest are counted. */
const MAX_LINES = 2000;

export interface ToolExit {
  exit_code: number | null;
  timed_out: boolean;
  /** Output lines beyond MAX_LINES that were not sent. */
  lines_dropped: number;
}

const printable = (line: string) => line.replace(/[^\x20-\x7e\t]/g, ' ').slice(0, MAX_LINE);

/** Ends a child: SIGTERM, then SIGKILL if it is still there a second later. */
function stop(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }, 1000).unref();
}

/** Spawns a tool, refusing with 503 (naming the Debian package) when it is not installed. */
async function spawnTool(file: string, args: readonly string[], as: { uid: number; gid: number } | undefined): Promise<ChildProcess> {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/nonexistent', LC_ALL: 'C' }, ...(as ?? {}) });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? unavailable(describeMissing(missingTool(file))) : error));
  });
  return child;
}

/**
 * Runs a line-oriented tool as the probe account: each output line (stdout and stderr, in arrival order) goes
 * to `onLine`; resolves when the tool ends or its time limit ends it. `cancel` ends it early (the client left).
 */
export async function runToolLines(
  file: string,
  args: readonly string[],
  options: { timeoutMs: number; onLine(line: string): void; cancelled(cancel: () => void): void },
): Promise<ToolExit> {
  const child = await spawnTool(file, args, probeAccount());
  let timedOut = false;
  let sent = 0;
  let dropped = 0;
  const emit = (line: string) => {
    if (sent < MAX_LINES) {
      sent++;
      options.onLine(printable(line));
    } else dropped++;
  };
  const splitter = () => {
    let rest = '';
    return {
      push: (chunk: Buffer) => {
        rest += chunk.toString('utf8');
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) emit(line.replace(/\r$/, ''));
      },
      flush: () => {
        if (rest) emit(rest);
        rest = '';
      },
    };
  };
  const out = splitter();
  const err = splitter();
  child.stdout!.on('data', out.push);
  child.stderr!.on('data', err.push);
  const timer = setTimeout(() => {
    timedOut = true;
    stop(child);
  }, options.timeoutMs);
  options.cancelled(() => stop(child));
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  out.flush();
  err.flush();
  return { exit_code: code, timed_out: timedOut, lines_dropped: dropped };
}

export interface CaptureResult {
  pcap: Buffer;
  packets: number;
  /** Why the capture ended: its duration, the size cap, the packet cap, or tcpdump ending on its own. */
  ended_by: 'duration' | 'size' | 'packets' | 'tool';
  /** tcpdump's own message when it ended with an error (no device, a filter it refused). */
  error: string | null;
}

const PCAP_HEADER = 24;
const RECORD_HEADER = 16;

/**
 * Captures with tcpdump into memory, keeping only whole pcap records within `maxBytes` (the global header
 * counts), so the file a browser downloads is never cut inside a packet. tcpdump runs as root only until it has
 * opened the device: `-Z nobody` makes it drop to the probe account before reading packets.
 */
export async function capturePackets(
  args: { interface: string; filter: readonly string[]; durationMs: number; maxBytes: number; maxPackets: number },
  cancelled: (cancel: () => void) => void,
): Promise<CaptureResult> {
  if (process.getuid?.() !== 0) throw unavailable('a packet capture needs Bulwark to run as root (tcpdump opens the device, then drops to nobody)');
  probeAccount(); // refuses (503) where no unprivileged account exists to drop to
  const argv = ['-i', args.interface, '-n', '-U', '-w', '-', '-c', String(args.maxPackets), '-Z', PROBE_ACCOUNT, '--', ...args.filter];
  const child = await spawnTool('tcpdump', argv, undefined);
  const chunks: Buffer[] = [];
  let pending = Buffer.alloc(0);
  let size = 0;
  let packets = 0;
  let endedBy: CaptureResult['ended_by'] = 'tool';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    if (endedBy === 'size') return;
    pending = Buffer.concat([pending, chunk]);
    // Hand over whole units only: the global header, then each record once its captured length is in.
    for (;;) {
      const need = size === 0 ? PCAP_HEADER : pending.length >= RECORD_HEADER ? RECORD_HEADER + readLength(pending) : Infinity;
      if (pending.length < need) break;
      if (size + need > args.maxBytes) {
        endedBy = 'size';
        stop(child);
        break;
      }
      chunks.push(pending.subarray(0, need));
      if (size > 0) packets++;
      size += need;
      pending = pending.subarray(need);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const timer = setTimeout(() => {
    if (endedBy === 'tool') endedBy = 'duration';
    stop(child);
  }, args.durationMs);
  cancelled(() => stop(child));
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  if (endedBy === 'tool' && code === 0 && packets >= args.maxPackets) endedBy = 'packets';
  // tcpdump's complaint (a missing device) is its last stderr line; its banner and counts are not errors.
  const failed = endedBy === 'tool' && code !== 0;
  const message = failed ? printable(stderr.trim().split('\n').filter((line) => !/^(tcpdump: listening|\d+ packets)/.test(line)).pop() ?? `tcpdump exited ${code}`) : null;
  return { pcap: Buffer.concat(chunks), packets, ended_by: endedBy, error: message };
}

/** A pcap record's captured length (incl_len), in the byte order of the global header tcpdump wrote (the host's). */
const readLength = (record: Buffer) => (new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? record.readUInt32LE(8) : record.readUInt32BE(8));
