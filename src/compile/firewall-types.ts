/**
 * The stored shape of the packet-filter configuration (wire-format.md §3), as the compilers read it.
 * The API validates and normalises requests into exactly these shapes.
 */

export type RuleAction = 'pass' | 'block' | 'blockdrop' | 'blockreturn';
export type Direction = 'in' | 'out' | 'any';
export type IpVersion = 'inet' | 'inet6' | 'both';
export type Protocol = 'tcp' | 'udp' | 'icmp' | 'icmp6' | 'tcp/udp' | 'esp' | 'ah' | 'gre' | 'any';
export type Tracking = 'none' | 'keep_state' | 'modulate_state' | 'synproxy_state';

export interface PortRange {
  start: number;
  end: number;
}

export interface RuleMatch {
  /** `any`, an address, `ip/prefix`, `first-last`, or `<alias>`. */
  src_addr: string;
  src_port: PortRange | null;
  dst_addr: string;
  dst_port: PortRange | null;
}

export interface StateOptions {
  tracking: Tracking;
  policy: 'if_bound' | 'floating' | null;
  adaptive_timeouts: { start: number; end: number } | null;
  timeout_tcp: number | null;
  timeout_udp: number | null;
  timeout_icmp: number | null;
}

export interface RuleData {
  priority: number;
  action: RuleAction;
  direction: Direction;
  ip_version: IpVersion;
  interface: string | null;
  protocol: Protocol;
  rule_match: RuleMatch;
  src_invert: boolean;
  dst_invert: boolean;
  log: boolean;
  quick: boolean;
  label: string | null;
  description: string | null;
  gateway: string | null;
  state_options: StateOptions;
  status: 'active' | 'disabled';
  schedule_id: string | null;
}

export type AliasType = 'host' | 'network' | 'port' | 'url_table';

export interface AliasData {
  name: string;
  alias_type: AliasType;
  entries: string[];
  description: string | null;
  enabled: boolean;
}

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export interface ScheduleData {
  name: string;
  description: string | null;
  /** Comma-joined `HH:MM-HH:MM`; a range whose end is before its start runs past midnight. */
  time_ranges: string;
  /** Comma-joined weekday tokens. */
  days_of_week: string;
  enabled: boolean;
}

export type NatType = 'snat' | 'dnat' | 'masquerade' | 'binat';

export interface NatData {
  nat_type: NatType;
  interface: string;
  protocol: Protocol;
  src_addr: string;
  src_port: PortRange | null;
  dst_addr: string;
  dst_port: PortRange | null;
  redirect: { address: string; port: PortRange | null };
  label: string | null;
  status: 'active' | 'disabled';
  static_port: boolean;
}

export interface WithId<T> {
  id: string;
  data: T;
}

/** Everything a compiler needs: configuration in (already in evaluation order), text out. */
export interface FirewallConfig {
  rules: WithId<RuleData>[];
  aliases: WithId<AliasData>[];
  schedules: WithId<ScheduleData>[];
  nat: WithId<NatData>[];
  settings: { block_logging: boolean };
  system: SystemInput;
  /** The local time the ruleset is compiled for: scheduled rules outside their time are left out. */
  time: { day: Weekday; minute: number };
  /** Fetched contents of url_table aliases, by alias name (addresses and CIDRs, one per entry). */
  urlTables?: Record<string, string[]>;
}

export interface SystemInput {
  /** The API's own listening address and port (anti-lockout). `0.0.0.0`/`::` mean every local address. */
  api: { host: string; port: number };
  /** Interfaces the anti-lockout rule is limited to; empty = every interface. */
  antiLockoutInterfaces: string[];
  /** NFLOG group blocked packets are logged to (nftables). */
  nflogGroup: number;
}
