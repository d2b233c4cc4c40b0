/**
 * The network-service daemons Bulwark renders configuration for (Debian's packages): Unbound for DNS,
 * Kea DHCPv4 (and its DHCP-DDNS server) for DHCP, chrony for time. Areas render a file into the data directory and hand its path here;
 * the platform validates it with the daemon's own checker, runs the daemon, and reads its live state.
 */
import type { MissingTool } from './debian-packages.js';
import type { UnboundEvent } from './unbound-events.js';

export type DaemonName = 'unbound' | 'kea-dhcp4' | 'kea-dhcp-ddns' | 'chronyd';
export const DAEMON_NAMES: readonly DaemonName[] = ['unbound', 'kea-dhcp4', 'kea-dhcp-ddns', 'chronyd'];

/** How a daemon is started, beyond its configuration file. */
export interface StartOptions {
  /**
   * chronyd only: false runs it without adjusting the system clock (`chronyd -x`): it still measures its
   * sources and serves time. chrony has no configuration directive for this.
   */
  clockControl?: boolean;
}

export interface DaemonStatus {
  name: DaemonName;
  running: boolean;
  pid: number | null;
  /** RFC 3339 time of the last start, or null. */
  started_at: string | null;
  /** The daemon's version line, or `not installed`. */
  version: string;
  /** The configuration file the daemon runs with (or last ran with). */
  config_file: string | null;
  /** How many times it was started since this process began. */
  starts: number;
  simulated: boolean;
  /** Why the last action failed, when it did. */
  last_error: string | null;
  /** Set when the last start could not run the daemon because its program (or a tool it needs) is not installed. */
  missing: MissingTool | null;
}

export interface CheckResult {
  /** False when the checker is not installed: the file was written but not validated. */
  checked: boolean;
  ok: boolean;
  /** The command that checked it, e.g. `unbound-checkconf FILE`. */
  checker: string | null;
  /** Bulwark's own summary of the outcome; never text taken from the checker's output. */
  output: string;
  /** The line of the checked file the checker refused, when its output names one. */
  line?: number | null;
  /** The checker's raw output: for the server log only, never for a client. */
  details?: string;
  /**
   * Set when the checker (or something the checked file needs) is not installed. On a real platform this is
   * never a pass: `ok` is false and nothing may be installed.
   */
  missing?: MissingTool;
}

export interface DnsStats {
  ts: number;
  running: boolean;
  queries_total: number;
  cache: { entries: number; max_entries: number; hits: number; misses: number; insertions: number; evictions: number; hit_rate_pct: number };
  rpz: { rules: number; zones: number; hits: number; per_zone: { name: string; rules: number; hits: number }[] };
  simulated: boolean;
}

export interface DhcpLease {
  ip_address: string;
  mac_address: string;
  hostname: string | null;
  client_id: string | null;
  state: string;
  lease_time: number;
  /** Unix seconds. */
  start_time: number;
  expire_time: number;
  subnet: string;
}

/** Kea's own counters for one subnet (`statistic-get-all`). */
export interface DhcpSubnetStatistics {
  subnet: string;
  total_addresses: number;
  assigned_addresses: number;
  declined_addresses: number;
}

export interface DhcpStatistics {
  subnets: DhcpSubnetStatistics[];
  /** Server-wide counters such as `pkt4-received` or `pkt4-ack-sent`. */
  counters: Record<string, number>;
}

/** Kea's high-availability state (`status-get`, from the HA hook). */
export interface DhcpHaState {
  mode: string;
  role: string;
  /** This server's HA state: `waiting`, `syncing`, `hot-standby`, `load-balancing`, `partner-down` … */
  state: string;
  /** The partner's last known state; null before it was ever reached. */
  peer_state: string | null;
  /** Whether the last heartbeat reached the partner. */
  in_touch: boolean;
}

export interface TimeSourceState {
  address: string;
  state: 'selected' | 'candidate' | 'unreachable' | 'falseticker' | 'unknown';
  stratum: number;
  offset_ms: number;
  reach: number;
}

export interface TimeTracking {
  synchronized: boolean;
  reference: string | null;
  stratum: number;
  offset_ms: number;
  sources: TimeSourceState[];
}

export interface Daemons {
  status(name: DaemonName): Promise<DaemonStatus>;
  /** Starts (or keeps running) the daemon with this configuration file. */
  start(name: DaemonName, configFile: string, options?: StartOptions): Promise<DaemonStatus>;
  stop(name: DaemonName): Promise<DaemonStatus>;
  restart(name: DaemonName, configFile: string, options?: StartOptions): Promise<DaemonStatus>;
  /** Runs the daemon's own configuration checker on the file. */
  check(name: DaemonName, configFile: string): Promise<CheckResult>;
  /** The daemon's log lines, oldest first (at most a few thousand). */
  logs(name: DaemonName): Promise<string[]>;
  /** Every line a daemon writes, as it is written (the local log files under logs/); returns the unsubscribe. */
  logLines(listener: (name: DaemonName, line: string) => void): () => void;
  /** Kea's lease-event lines (src/platform/kea-lease-events.ts): only here, never among the log lines (they carry a token). */
  leaseEventLines(listener: (line: string) => void): () => void;
  /** Query and block events of the resolver as they happen (none on the simulated platform); returns the unsubscribe. */
  dnsEvents(listener: (event: UnboundEvent) => void): () => void;
  dnsStats(): Promise<DnsStats>;
  dhcpLeases(): Promise<DhcpLease[]>;
  /** Kea's statistics, or null when the server does not run or cannot be asked. */
  dhcpStatistics(): Promise<DhcpStatistics | null>;
  /** Kea's high-availability state, or null when it does not run with the HA hook. */
  dhcpHighAvailability(): Promise<DhcpHaState | null>;
  /** Releases one lease; false when no such lease exists. */
  releaseDhcpLease(ip: string): Promise<boolean>;
  timeTracking(): Promise<TimeTracking>;
}
