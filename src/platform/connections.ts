/**
 * Traffic the appliance sees: the connection (state) table, interface counters, packet-filter rule counters and
 * blocked packets. `linux` reads conntrack, sysfs, nftables counters and the NFLOG group (through ulogd2's JSON
 * output); `freebsd` reads pfctl, netstat and pflog (through tcpdump); `simulated` is a deterministic synthetic
 * traffic model and says so.
 */

/** One entry of the state table, as GET /connections lists it (wire-format A1 §2 PfState). */
export interface Flow {
  id: number;
  protocol: string;
  src_addr: string;
  src_port: number;
  dst_addr: string;
  dst_port: number;
  state: string;
  packets_in: number;
  packets_out: number;
  bytes_in: number;
  bytes_out: number;
  age_secs: number;
  iface?: string;
}

export interface ConnectionTable {
  flows: Flow[];
  /** Real size of the state table (may exceed flows.length when the reader caps what it parses). */
  total: number;
  /** Why the table could not be read, when it could not. */
  error?: string;
}

export interface InterfaceCounters {
  name: string;
  bytes_in: number;
  bytes_out: number;
  packets_in: number;
  packets_out: number;
}

/** A connection the state table just took in (linux: a conntrack NEW event): its original tuple. */
export interface NewConnection extends Pick<Flow, 'protocol' | 'src_addr' | 'src_port' | 'dst_addr' | 'dst_port'> {
  /** The conntrack id. */
  id: number;
  /** New connections not announced so far because more than the per-second limit arrived. */
  dropped: number;
}

/** A packet the filter dropped (or logged), newest first in lists. */
export interface BlockedPacket {
  /** RFC 3339 UTC with microseconds. */
  timestamp: string;
  action: string;
  direction: string;
  interface: string;
  protocol: string;
  src_addr: string;
  src_port: number;
  dst_addr: string;
  dst_port: number;
  reason: string;
  /** The configuration rule that logged it, when the log prefix names one. */
  rule_id: string | null;
}

/** A named packet-filter counter (one per rule on nftables; one per label on pf). */
export interface RuleCounter {
  name: string;
  packets: number;
  bytes: number;
}

export interface BlockedLogStatus {
  running: boolean;
  source: string;
  /** The log reader's process (linux: ulogd), while it runs. */
  pid?: number | null;
  /** True when this API process adopted it from an earlier one rather than starting it. */
  adopted?: boolean;
  error?: string;
}

export interface TrafficSource {
  /** True only for the synthetic model of the simulated platform. */
  readonly simulated: boolean;
  connections(): Promise<ConnectionTable>;
  interfaces(): Promise<InterfaceCounters[]>;
  ruleCounters(): Promise<RuleCounter[]>;
  /** The most recent blocked packets, newest first. */
  blocked(limit: number): Promise<BlockedPacket[]>;
  /** Starts background readers (the blocked-packet log) that need the data directory. Idempotent. */
  open(options: { dataDir: string }): Promise<void>;
  blockedLogStatus(): BlockedLogStatus;
  /**
   * Every packet-filter log line as it is read (linux: the ulogd2 NFLOG stream); returns the unsubscribe. The
   * simulated platform's synthetic drops and FreeBSD's on-demand pflog read announce nothing.
   */
  onBlocked?(listener: (packet: BlockedPacket) => void): () => void;
  /**
   * Every new connection of the state table, rate-limited (linux: `conntrack -E -e NEW`, while anyone listens);
   * returns the unsubscribe. Simulated and FreeBSD announce none.
   */
  onNewConnection?(listener: (connection: NewConnection) => void): () => void;
  close(): Promise<void>;
}

/** Protocol numbers as IANA names, for readers that report numbers. */
export const PROTOCOL_NAMES: Record<number, string> = { 1: 'icmp', 2: 'igmp', 6: 'tcp', 17: 'udp', 47: 'gre', 50: 'esp', 51: 'ah', 58: 'ipv6-icmp', 132: 'sctp' };

/** Keeps the last `capacity` items, newest first on read. */
export class RecentList<T> {
  private readonly items: T[] = [];
  constructor(private readonly capacity: number) {}
  push(item: T): void {
    this.items.push(item);
    if (this.items.length > this.capacity * 2) this.items.splice(0, this.items.length - this.capacity);
  }
  newest(limit: number): T[] {
    const start = Math.max(0, this.items.length - Math.min(limit, this.capacity));
    return this.items.slice(start).reverse();
  }
}
