import type { CompiledGeoIp } from './geoip-sets.js';
/**
 * The stored shape of the packet-filter configuration (wire-format.md §3), as the compilers read it: derived
 * from the schemas the model validates every stored object with (firewall-schemas.ts).
 */
import type { Static } from 'typebox';
import type { AliasSchema, NatSchema, RuleSchema, ScheduleSchema } from './firewall-schemas.js';
import type { PortRangeObject } from '../model/port-input.js';

export type RuleData = Static<typeof RuleSchema>;
export type RuleAction = RuleData['action'];
export type Direction = RuleData['direction'];
export type IpVersion = RuleData['ip_version'];
export type Protocol = RuleData['protocol'];
export type RuleMatch = RuleData['rule_match'];
export type StateOptions = RuleData['state_options'];
export type Tracking = StateOptions['tracking'];
export type PortRange = Static<ReturnType<typeof PortRangeObject>>;

export type AliasData = Static<typeof AliasSchema>;
export type AliasType = AliasData['alias_type'];

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export type ScheduleData = Static<typeof ScheduleSchema>;

export type NatData = Static<typeof NatSchema>;
export type NatType = NatData['nat_type'];

export interface WithId<T> {
  id: string;
  data: T;
}

/** Everything a compiler needs: configuration in (already in evaluation order), text out. */
export interface FirewallConfig {
  rules: readonly WithId<RuleData>[];
  aliases: readonly WithId<AliasData>[];
  schedules: readonly WithId<ScheduleData>[];
  nat: readonly WithId<NatData>[];
  settings: { block_logging: boolean };
  system: SystemInput;
  /** The local time the ruleset is compiled for: scheduled rules outside their time are left out. */
  time: { day: Weekday; minute: number };
  /** Fetched contents of url_table aliases, by alias name (addresses and CIDRs, one per entry). */
  urlTables?: Record<string, string[]>;
  /** Geo-IP rules compiled into address sets (compile/geoip-sets.ts), evaluated before user rules. */
  geoip?: CompiledGeoIp;
}

export interface SystemInput {
  /** The API's own listening address and port (anti-lockout). `0.0.0.0`/`::` mean every local address. */
  api: { host: string; port: number };
  /** The API's HTTPS listener (`--tls-listen`), kept reachable the same way; absent when off. */
  apiTls?: { host: string; port: number } | null;
  /** Interfaces the anti-lockout rule is limited to; empty = every interface. */
  antiLockoutInterfaces: string[];
  /**
   * Interfaces whose inbound traffic is blocked unless a rule passes it (those with the WAN role while the
   * WAN default block is on); empty or absent: the default policy is pass everywhere.
   */
  wanDefaultBlock?: string[];
  /** NFLOG group blocked packets are logged to (nftables). */
  nflogGroup: number;
  /** Enabled WireGuard tunnels: their UDP listen port is let in (on `listenInterface` only, when set). */
  wireguard?: { interface: string; port: number; listenInterface: string | null }[];
}
