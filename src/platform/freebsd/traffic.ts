import type { BlockedPacket, ConnectionTable, Flow, InterfaceCounters, RuleCounter, TrafficSource } from '../connections.js';
import { runCommand } from '../exec.js';
/** Bulwark's pf anchor (the same name freebsd/index.ts loads rules into). */
const PF_ANCHOR = 'bulwark';

const PFLOG_FILE = '/var/log/pflog';

/** `12:34:56` or `3d04h` (pf's age format) → seconds. */
function parseAge(text: string): number {
  const hms = /^(\d+):(\d{2}):(\d{2})$/.exec(text);
  if (hms) return Number(hms[1]) * 3600 + Number(hms[2]) * 60 + Number(hms[3]);
  const days = /^(\d+)d(\d{2})h$/.exec(text);
  return days ? Number(days[1]) * 86400 + Number(days[2]) * 3600 : 0;
}

/** `10.0.0.1:443` or `[2001:db8::1]:443` or `2001:db8::1[443]` → address and port. */
function splitEndpoint(text: string): { addr: string; port: number } {
  const v6 = /^(.*)\[(\d+)\]$/.exec(text);
  if (v6) return { addr: v6[1], port: Number(v6[2]) };
  const at = text.lastIndexOf(':');
  if (at > 0 && text.indexOf(':') === at) return { addr: text.slice(0, at), port: Number(text.slice(at + 1)) || 0 };
  return { addr: text, port: 0 };
}

/**
 * Parses `pfctl -s states -v`: a header line `<if> <proto> <a> <-|-> <b> <state>` (NAT rewrites in
 * parentheses) followed by indented detail lines with age, `pkts a:b` and `bytes a:b`.
 */
export function parsePfStates(text: string): Flow[] {
  const flows: Flow[] = [];
  let current: Flow | null = null;
  let id = 0;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    if (!/^\s/.test(raw)) {
      const line = raw.replace(/\([^)]*\)/g, ' ').trim().split(/\s+/);
      if (line.length < 6) continue;
      const [iface, protocol, first, arrow, second, state] = line;
      const a = splitEndpoint(first);
      const b = splitEndpoint(second);
      const [src, dst] = arrow === '<-' ? [b, a] : [a, b];
      current = {
        id: ++id, protocol, src_addr: src.addr, src_port: src.port, dst_addr: dst.addr, dst_port: dst.port, state,
        packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0, age_secs: 0, ...(iface !== 'all' ? { iface } : {}),
      };
      flows.push(current);
      continue;
    }
    if (!current) continue;
    const age = /age (\S+?),/.exec(raw);
    if (age) current.age_secs = parseAge(age[1]);
    const packets = /(\d+):(\d+) pkts/.exec(raw);
    if (packets) [current.packets_out, current.packets_in] = [Number(packets[1]), Number(packets[2])];
    const bytes = /(\d+):(\d+) bytes/.exec(raw);
    if (bytes) [current.bytes_out, current.bytes_in] = [Number(bytes[1]), Number(bytes[2])];
    const origif = /origif: (\S+)/.exec(raw);
    if (origif) current.iface = origif[1];
  }
  return flows;
}

/** `netstat -i -b -n --libxo json`: the `<Link#n>` row of each interface carries its counters. */
export function parseNetstatJson(json: string): InterfaceCounters[] {
  const rows = (JSON.parse(json) as { statistics?: { interface?: Record<string, unknown>[] } }).statistics?.interface ?? [];
  return rows
    .filter((row) => String(row.network ?? '').startsWith('<Link#'))
    .map((row) => ({
      name: String(row.name),
      bytes_in: Number(row['received-bytes'] ?? 0),
      bytes_out: Number(row['sent-bytes'] ?? 0),
      packets_in: Number(row['received-packets'] ?? 0),
      packets_out: Number(row['sent-packets'] ?? 0),
    }));
}

/** `pfctl -a bulwark -s labels`: `<label> <evaluations> <packets> <bytes> ...` per line. */
export function parsePfLabels(text: string): RuleCounter[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length >= 4 && /^\d+$/.test(f[2]) && /^\d+$/.test(f[3]))
    .map((f) => ({ name: f[0], packets: Number(f[2]), bytes: Number(f[3]) }));
}

/** `tcpdump -n -e -tttt -r /var/log/pflog` lines: `<date> <time> rule N/M(match): block in on em0: a.port > b.port: ...`. */
export function parsePflogLine(line: string): BlockedPacket | null {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?) rule [^:]*: (\w+) (in|out) on (\S+): (\S+) > (\S+?):? (.*)$/.exec(line.trim());
  if (!match) return null;
  const [, date, time, action, direction, iface, from, to, rest] = match;
  const endpoint = (text: string) => {
    const dot = text.lastIndexOf('.');
    const tail = text.slice(dot + 1);
    const hasPort = /^\d+$/.test(tail) && (text.includes(':') || text.split('.').length === 5);
    return hasPort ? { addr: text.slice(0, dot), port: Number(tail) } : { addr: text.replace(/:$/, ''), port: 0 };
  };
  const src = endpoint(from);
  const dst = endpoint(to);
  const protocol = /^Flags \[/.test(rest) ? 'tcp' : /^ICMP6?\b/.test(rest) ? 'icmp' : src.port || dst.port ? 'udp' : '';
  return {
    timestamp: `${date}T${time}Z`, action, direction, interface: iface, protocol,
    src_addr: src.addr, src_port: src.port, dst_addr: dst.addr, dst_port: dst.port, reason: 'policy', rule_id: null,
  };
}

/** FreeBSD: pfctl for states and label counters, netstat for interfaces, tcpdump on the pflog file. */
export class FreebsdTraffic implements TrafficSource {
  readonly simulated = false;
  private lastBlockedError: string | undefined;

  async connections(): Promise<ConnectionTable> {
    const listed = await runCommand('pfctl', ['-s', 'states', '-v'], { timeoutMs: 20_000 });
    if (listed.code !== 0) return { flows: [], total: 0, error: listed.stderr.trim() || `pfctl exited ${listed.code}` };
    const flows = parsePfStates(listed.stdout);
    return { flows, total: flows.length };
  }

  async interfaces(): Promise<InterfaceCounters[]> {
    const listed = await runCommand('netstat', ['-i', '-b', '-n', '--libxo', 'json']);
    return listed.code === 0 ? parseNetstatJson(listed.stdout) : [];
  }

  async ruleCounters(): Promise<RuleCounter[]> {
    const listed = await runCommand('pfctl', ['-a', PF_ANCHOR, '-s', 'labels']);
    return listed.code === 0 ? parsePfLabels(listed.stdout) : [];
  }

  async blocked(limit: number): Promise<BlockedPacket[]> {
    const listed = await runCommand('tcpdump', ['-n', '-e', '-tttt', '-r', PFLOG_FILE]);
    this.lastBlockedError = listed.code === 0 ? undefined : listed.stderr.trim() || `tcpdump exited ${listed.code}`;
    const packets = listed.stdout.split('\n').map(parsePflogLine).filter((p): p is BlockedPacket => p !== null);
    return packets.slice(-limit).reverse();
  }

  async open(): Promise<void> {}

  blockedLogStatus() {
    return { running: this.lastBlockedError === undefined, source: `pflog (${PFLOG_FILE} via tcpdump)`, ...(this.lastBlockedError ? { error: this.lastBlockedError } : {}) };
  }

  async close(): Promise<void> {}
}
