/** NFLOG group the compiled ruleset logs blocked packets to, and the blocked-traffic reader listens on. */
export const BLOCKED_NFLOG_GROUP = 1;

import type { PacketFilterStatus } from './platform.js';
import type { ScheduleEdge } from '../compile/schedule-edges.js';
import type { NftObjectName } from '../compile/nft-table.js';

/** A compiled ruleset as the platform loads it: the whole text, in the platform's own dialect. */
export interface RulesetText {
  dialect: 'nftables' | 'pf';
  text: string;
}

export type ApplyResult =
  | { ok: true }
  /** `check`: the tool refused the text in a check (nothing is loaded by a check); `apply`: the tool or the
   *  kernel refused the load, whose transaction then changed nothing; `setup`: the host is not set up to use the ruleset (pf
   *  disabled, an anchor hook missing from pf.conf), so nothing was loaded; `unavailable`: the tool could
   *  not be run. */
  | { ok: false; stage: 'check' | 'apply' | 'setup' | 'unavailable'; message: string; /** The tool's whole output, for the server log only. */ detail?: string };

/** One rule's counter (`rule_<id>`, `nat_<id>`): an nftables counter object (NAT: its lines' counters summed), or a pf rule label. */
export interface RuleCounter {
  name: string;
  packets: number;
  bytes: number;
}

/**
 * What the kernel holds of Bulwark's own table or anchor, read back in a canonical form (listing order,
 * handles and counter values left out): equal states mean equal rulesets, however they were loaded.
 */
export interface KernelState {
  /** sha256 of the canonical listing. */
  fingerprint: string;
  /** Each object (`chain filter_in`, `set alias_web_v4`, `rules`, `table web`) with its size and a digest. */
  objects: Record<string, { size: number; digest: string }>;
}

export type ReadBackResult = { ok: true; state: KernelState } | { ok: false; message: string };

/**
 * The packet filter: load a ruleset in one transaction (the tool's own load is the check: on any failure
 * the previous ruleset stays in force), check one without loading it, read the per-rule counters and the
 * loaded ruleset back.
 */
export interface PacketFilter {
  /** The ruleset dialect this platform loads. */
  readonly dialect: 'nftables' | 'pf';
  /** apply() also takes a delta script (nft-delta.ts) that changes the loaded table in one transaction. */
  readonly loadsDeltas: boolean;
  status(): Promise<PacketFilterStatus>;
  /** Checks without loading (GET /config/check, previews): `nft -c`, `pfctl -n`. */
  check(ruleset: RulesetText): Promise<ApplyResult>;
  /** Loads in one transaction, without a separate check first. */
  apply(ruleset: RulesetText): Promise<ApplyResult>;
  /** Bulwark's table or anchor as the kernel holds it now. */
  readBack(): Promise<ReadBackResult>;
  /**
   * Only the named objects of the table (`set alias_web_v4`, `chain in_3`), for a driver that loads deltas: the
   * state holds those the kernel has, and leaves out those it has not.
   */
  readBackObjects?(names: readonly string[]): Promise<ReadBackResult>;
  /**
   * The objects of the driver's table as the kernel holds them now (none without one), for a full load that keeps
   * the counter objects it declares again (nftables); undefined when they could not be read or named.
   */
  tableObjects?(): Promise<NftObjectName[] | undefined>;
  /** Per-rule counters; none without a table or anchor; throws when they could not be read. */
  counters(): Promise<RuleCounter[]>;
  /** At a schedule edge: kills the states the edge affects (see compile/schedule-edges.ts). */
  killStates(edge: ScheduleEdge): Promise<void>;
}

export function wrongDialect(expected: string, ruleset: RulesetText): ApplyResult | undefined {
  return ruleset.dialect === expected ? undefined : { ok: false, stage: 'check', message: `this platform loads ${expected} rulesets, not ${ruleset.dialect}` };
}
