import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { open, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROTOCOL_NAMES, RecentList, type BlockedLogStatus, type BlockedPacket } from '../connections.js';
import { findProgram } from '../daemon-tools.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { SupervisedProcess } from '../supervised-process.js';
import { holdsNflogGroup } from './nflog-binding.js';

/** NFLOG group the packet filter logs blocked packets to (the packet-filter area's default). */
import { BLOCKED_NFLOG_GROUP } from '../packet-filter.js';
const PLUGIN_DIRS = ['/usr/lib/x86_64-linux-gnu/ulogd', '/usr/lib/aarch64-linux-gnu/ulogd', '/usr/lib/ulogd'];
const ROTATE_BYTES = 8 * 1024 * 1024;

/** ulogd's configuration: NFLOG group → BASE → IFINDEX → IP2STR → JSON lines in our data directory. */
export function renderUlogdConfig(pluginDir: string, group: number, jsonFile: string): string {
  const plugins = ['inppkt_NFLOG', 'raw2packet_BASE', 'filter_IFINDEX', 'filter_IP2STR', 'output_JSON'];
  return [
    '# Rendered by Bulwark: blocked packets from the packet filter NFLOG group, as JSON lines',
    '[global]',
    // Its own lines go to standard output: the supervisor keeps (and cuts back) that file and reports each line.
    'logfile="stdout"',
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

/**
 * Runs ulogd2 on the NFLOG group, detached and supervised (it outlives the API process: a restart of Bulwark adopts
 * the running ulogd by its pid record instead of starting a second one, which could not bind the group the first
 * still holds), and follows its JSON output. The reader keeps its place in that file across restarts, so what the
 * adopted ulogd wrote while the API was down is read once the API is back.
 */
export class UlogdBlockedReader {
  private process: SupervisedProcess | null = null;
  private readonly recent = new RecentList<BlockedPacket>(1000);
  private offset = 0;
  private savedOffset = -1;
  private partial = '';
  private timer: NodeJS.Timeout | null = null;
  private statusValue: BlockedLogStatus = { running: false, source: 'ulogd2 NFLOG', error: 'not started' };
  private jsonFile = '';
  private offsetFile = '';
  private reading = false;
  private readonly listeners = new Set<(packet: BlockedPacket) => void>();

  onBlocked(listener: (packet: BlockedPacket) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  constructor(private readonly group = BLOCKED_NFLOG_GROUP) {}

  status(): BlockedLogStatus {
    const supervised = this.process?.state();
    if (!supervised) return this.statusValue;
    const error = supervised.running ? undefined : supervised.last_error ?? this.statusValue.error;
    return { running: supervised.running, source: this.statusValue.source, pid: supervised.pid, adopted: supervised.adopted, ...(error ? { error } : {}) };
  }

  async open(dataDir: string): Promise<void> {
    if (this.process || this.timer) return;
    const dir = join(dataDir, 'ulogd');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.jsonFile = join(dir, 'blocked.json');
    this.offsetFile = join(dir, 'blocked.offset');
    const pluginDir = PLUGIN_DIRS.find((candidate) => existsSync(join(candidate, 'ulogd_output_JSON.so')));
    const source = `ulogd2 NFLOG group ${this.group}`;
    this.statusValue = { running: false, source };
    const program = findProgram('ulogd');
    if (!program || !pluginDir) {
      this.statusValue.error = program ? 'ulogd2 JSON output plugin not found (install the Debian packages ulogd2 and ulogd2-json)' : describeMissing(missingTool('ulogd'));
      return;
    }
    // The rendered text is the same at every start, so an adopted ulogd's file is rewritten with what it read.
    const configFile = join(dir, 'ulogd.conf');
    const text = renderUlogdConfig(pluginDir, this.group, this.jsonFile);
    writeFileSync(configFile, text, { mode: 0o600 });
    this.offset = await this.startOffset();
    const args = ['-c', configFile];
    const supervised = new SupervisedProcess({
      label: 'ulogd', command: program, args,
      // Identity and readiness in one: the NFLOG group of this namespace is bound, by this very process.
      ready: () => holdsNflogGroup(this.group, supervised.pid),
      readyDescription: `bind NFLOG group ${this.group}`,
      // ulogd runs as root (it needs CAP_NET_ADMIN for NFLOG): its record beside its root-only files in the data directory.
      detached: { dir, name: 'ulogd.supervised', configHash: createHash('sha256').update(JSON.stringify({ program, args, text })).digest('hex') },
    });
    this.process = supervised;
    this.timer = setInterval(() => void this.poll(), 500);
    this.timer.unref();
    try {
      await supervised.start();
    } catch (error) {
      this.statusValue.error = (error as Error).message;
    }
  }

  /** Where reading resumes: the place the previous API process had reached, or (none kept, or the file was cut) the end. */
  private async startOffset(): Promise<number> {
    const size = await stat(this.jsonFile).then((s) => s.size, () => 0);
    const kept = await readFile(this.offsetFile, 'utf8').then((text) => Number(JSON.parse(text).offset), () => NaN);
    const offset = Number.isSafeInteger(kept) && kept >= 0 && kept <= size ? kept : size;
    this.savedOffset = offset;
    return offset;
  }

  /** Remembers how far the output was read (only when it moved), for the next API process. */
  private async saveOffset(): Promise<void> {
    if (this.offset === this.savedOffset || !this.offsetFile) return;
    this.savedOffset = this.offset;
    await writeFile(this.offsetFile, JSON.stringify({ offset: this.offset }), { mode: 0o600 }).catch(() => undefined);
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
      // Only whole lines count as read: a partial one is read again by the next API process.
      if (this.partial === '') await this.saveOffset();
    } finally {
      this.reading = false;
    }
  }

  async blocked(limit: number): Promise<BlockedPacket[]> {
    await this.poll();
    return this.recent.newest(limit);
  }

  /** The API process is stopping: ulogd keeps running (the next start adopts it); only the reading ends. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.poll().catch(() => undefined);
    this.process?.release();
    this.process = null;
  }

  /** Stops ulogd itself (the services are stopped on purpose, e.g. a test's teardown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.process?.stop();
    this.process = null;
  }
}
