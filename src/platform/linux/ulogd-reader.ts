import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { open, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { PROTOCOL_NAMES, RecentList, type BlockedLogStatus, type BlockedPacket } from '../connections.js';
import { reportDaemonEvent } from '../daemon-events.js';
import { EveTail } from './eve-tail.js';

/** NFLOG group the packet filter logs blocked packets to (the packet-filter area's default). */
import { BLOCKED_NFLOG_GROUP } from '../packet-filter.js';
const PLUGIN_DIRS = ['/usr/lib/x86_64-linux-gnu/ulogd', '/usr/lib/aarch64-linux-gnu/ulogd', '/usr/lib/ulogd'];
const ROTATE_BYTES = 8 * 1024 * 1024;

/** ulogd's configuration: NFLOG group → BASE → IFINDEX → IP2STR → JSON lines in our data directory. */
export function renderUlogdConfig(pluginDir: string, group: number, jsonFile: string, logFile: string): string {
  const plugins = ['inppkt_NFLOG', 'raw2packet_BASE', 'filter_IFINDEX', 'filter_IP2STR', 'output_JSON'];
  return [
    '# Rendered by Bulwark: blocked packets from the packet filter NFLOG group, as JSON lines',
    '[global]',
    `logfile="${logFile}"`,
    'loglevel=5',
    ...plugins.map((p) => `plugin="${pluginDir}/ulogd_${p}.so"`),
    'stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON',
    '',
    '[log1]',
    `group=${group}`,
    '',
    '[json1]',
    'sync=1',
    `file="${jsonFile}"`,
    '',
  ].join('\n');
}

/** The packet-filter log prefix is `bulwark <action> <rule id>: `; anything else is reported as a block. */
export function parseUlogdJson(line: string): BlockedPacket | null {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  const src = (record.src_ip ?? record['ip.saddr.str']) as string | undefined;
  if (typeof src !== 'string' || src === '') return null;
  const prefix = typeof record['oob.prefix'] === 'string' ? (record['oob.prefix'] as string) : '';
  const match = /^bulwark\s+(\S+)\s+([^:\s]+):?/.exec(prefix);
  const seconds = Number(record['oob.time.sec'] ?? NaN);
  const micros = Number(record['oob.time.usec'] ?? 0);
  const timestamp = Number.isFinite(seconds)
    ? `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
    : String(record.timestamp ?? '');
  const inIface = typeof record['oob.in'] === 'string' ? (record['oob.in'] as string) : '';
  const outIface = typeof record['oob.out'] === 'string' ? (record['oob.out'] as string) : '';
  const protocolNumber = Number(record['ip.protocol'] ?? record['ip6.nexthdr'] ?? NaN);
  return {
    timestamp,
    action: match ? match[1] : 'block',
    direction: inIface ? 'in' : 'out',
    interface: inIface || outIface,
    protocol: PROTOCOL_NAMES[protocolNumber] ?? (Number.isFinite(protocolNumber) ? String(protocolNumber) : ''),
    src_addr: src,
    src_port: Number(record.src_port ?? 0) || 0,
    dst_addr: String(record.dest_ip ?? record['ip.daddr.str'] ?? ''),
    dst_port: Number(record.dest_port ?? 0) || 0,
    reason: 'policy',
    rule_id: match ? match[2] : null,
  };
}

/** ulogd's lines (its log file, its standard error), one daemon log event each. */
function reportLines(text: string): void {
  for (const line of text.split('\n')) if (line.trim()) reportDaemonEvent({ kind: 'log', daemon: 'ulogd', line });
}

/**
 * Runs ulogd2 in the foreground on the NFLOG group and tails its JSON output. Only one listener can bind a
 * group per network namespace, so a failure to start is reported in the status rather than retried wildly.
 */
export class UlogdBlockedReader {
  private child: ChildProcess | null = null;
  private readonly recent = new RecentList<BlockedPacket>(1000);
  private offset = 0;
  private partial = '';
  private timer: NodeJS.Timeout | null = null;
  private statusValue: BlockedLogStatus = { running: false, source: 'ulogd2 NFLOG', error: 'not started' };
  private jsonFile = '';
  private reading = false;
  /** Follows ulogd's own log file: its lines are reported like any supervised daemon's (the local log, syslog). */
  private logTail: EveTail | null = null;
  private readonly listeners = new Set<(packet: BlockedPacket) => void>();

  onBlocked(listener: (packet: BlockedPacket) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  constructor(private readonly group = BLOCKED_NFLOG_GROUP) {}

  status(): BlockedLogStatus {
    return this.statusValue;
  }

  async open(dataDir: string): Promise<void> {
    if (this.child || this.timer) return;
    const dir = join(dataDir, 'ulogd');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.jsonFile = join(dir, 'blocked.json');
    const pluginDir = PLUGIN_DIRS.find((candidate) => existsSync(join(candidate, 'ulogd_output_JSON.so')));
    const source = `ulogd2 NFLOG group ${this.group}`;
    if (!pluginDir) {
      this.statusValue = { running: false, source, error: 'ulogd2 JSON output plugin not found (install ulogd2 and ulogd2-json)' };
      return;
    }
    const configFile = join(dir, 'ulogd.conf');
    const logFile = join(dir, 'ulogd.log');
    writeFileSync(configFile, renderUlogdConfig(pluginDir, this.group, this.jsonFile, logFile), { mode: 0o600 });
    this.logTail?.stop();
    this.logTail = new EveTail(logFile, reportLines, true);
    this.logTail.start();
    this.offset = await stat(this.jsonFile).then((s) => s.size, () => 0);
    const child = spawn('ulogd', ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    this.statusValue = { running: true, source };
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
      reportLines(chunk.toString());
    });
    child.on('error', (error) => {
      this.statusValue = { running: false, source, error: `ulogd: ${error.message}` };
      this.child = null;
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      this.statusValue = { running: false, source, error: `ulogd exited (${signal ?? code}): ${stderr.trim().split('\n').pop() ?? ''}`.trim() };
    });
    this.timer = setInterval(() => void this.poll(), 500);
    this.timer.unref();
  }

  /** Reads what ulogd appended since the last poll; truncates the file once it is large and fully read. */
  async poll(): Promise<void> {
    if (this.reading || !this.jsonFile) return;
    this.reading = true;
    try {
      const size = await stat(this.jsonFile).then((s) => s.size, () => 0);
      if (size < this.offset) this.offset = 0;
      if (size > this.offset) {
        const handle = await open(this.jsonFile, 'r');
        try {
          const buffer = Buffer.alloc(Math.min(size - this.offset, 4 * 1024 * 1024));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
          this.offset += bytesRead;
          const lines = (this.partial + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
          this.partial = lines.pop() ?? '';
          for (const line of lines) {
            const packet = line.trim() ? parseUlogdJson(line) : null;
            if (!packet) continue;
            this.recent.push(packet);
            for (const listener of this.listeners) listener(packet);
          }
        } finally {
          await handle.close();
        }
      }
      // ulogd appends (O_APPEND), so truncating a fully-read file is safe and bounds disk use
      if (this.offset >= ROTATE_BYTES && this.partial === '') {
        await truncate(this.jsonFile, 0);
        this.offset = 0;
      }
    } finally {
      this.reading = false;
    }
  }

  async blocked(limit: number): Promise<BlockedPacket[]> {
    await this.poll();
    return this.recent.newest(limit);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.logTail?.stop();
    this.logTail = null;
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
  }
}
