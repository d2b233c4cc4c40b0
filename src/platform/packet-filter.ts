/** NFLOG group the compiled ruleset logs blocked packets to, and the blocked-traffic reader listens on. */
export const BLOCKED_NFLOG_GROUP = 1;

import type { PacketFilterStatus } from './platform.js';
import type { ScheduleEdge } from '../compile/schedule-edges.js';

/** A compiled ruleset as the platform loads it: the whole text, in the platform's own dialect. */
export interface RulesetText {
  dialect: 'nftables' | 'pf';
  text: string;
}

export type ApplyResult =
  | { ok: true }
  /** `check`: the tool refused the text before anything was loaded; `apply`: the kernel refused the
   *  transaction (nothing changed either way); `setup`: the host is not set up to use the ruleset (pf
   *  disabled, an anchor hook missing from pf.conf), so nothing was loaded; `unavailable`: the tool could
   *  not be run. */
  | { ok: false; stage: 'check' | 'apply' | 'setup' | 'unavailable'; message: string; /** The tool's whole output, for the server log only. */ detail?: string };

/** One named counter: an nftables counter object or a pf rule label. */
export interface RuleCounter {
  name: string;
  packets: number;
  bytes: number;
}

/**
 * The packet filter: load a complete ruleset atomically (validated first; on any failure the previous
 * ruleset stays in force), check one without loading it, and read the per-rule counters back.
 */
export interface PacketFilter {
  /** The ruleset dialect this platform loads. */
  readonly dialect: 'nftables' | 'pf';
  status(): Promise<PacketFilterStatus>;
  check(ruleset: RulesetText): Promise<ApplyResult>;
  apply(ruleset: RulesetText): Promise<ApplyResult>;
  counters(): Promise<RuleCounter[]>;
  /** At a schedule edge: kills the states the edge affects (see compile/schedule-edges.ts). */
  killStates(edge: ScheduleEdge): Promise<void>;
}

export function wrongDialect(expected: string, ruleset: RulesetText): ApplyResult | undefined {
  return ruleset.dialect === expected ? undefined : { ok: false, stage: 'check', message: `this platform loads ${expected} rulesets, not ${ruleset.dialect}` };
}
