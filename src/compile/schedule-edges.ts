/**
 * Schedules change which rules are in force, but states (pf) and conntrack entries (Linux) outlive a ruleset
 * reload: a connection opened inside a window would go on after it closes, and a block rule entering its
 * window would not stop flows already established. At each schedule edge the affected states are killed, so
 * their next packet is decided by the ruleset in force:
 * - a pass rule leaving its window: the states it created (pf: its label; nftables: its conntrack mark);
 * - a block rule entering its window: the connections the ruleset allowed before the edge and blocks now,
 *   judged by the whole ruleset (earlier quick rules, later rules, interface and direction), so a flow that a
 *   quick pass rule still lets through, or a NAT mapping, is not torn down for nothing.
 */
import type { FirewallConfig } from './firewall-types.js';
import { buildModel } from './firewall-model.js';
import { decide, ruleMatches, type Crossing, type HostAddresses } from './firewall-decision.js';

export type { Crossing, HostAddresses } from './firewall-decision.js';

export interface ScheduleEdge {
  /** Pass rules that left their window: kill the states they created. */
  ended: { id: string }[];
  /** Block rules that entered their window. */
  started: { id: string }[];
  /**
   * Cheap first test: some started rule could match the crossing (its interface aside). Drivers look up
   * interfaces only for connections that pass it.
   */
  touches(crossing: Crossing, host: HostAddresses): boolean;
  /** The connection crossing the firewall this way was allowed before the edge and is blocked now. */
  cuts(crossing: Crossing, host: HostAddresses): boolean;
}

/**
 * The nftables conntrack mark of a scheduled pass rule, stable for its id (flows created under an earlier
 * load carry it): FNV-1a of the id with the top bit set, so it never reads as "no mark" (0).
 */
export function scheduleCtMark(id: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(id, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return (hash | 0x80000000) >>> 0;
}

export const ctMarkText = (id: string) => `0x${scheduleCtMark(id).toString(16).padStart(8, '0')}`;

/** What changed between the scheduled rules in force before (ids) and those in force for `config`'s time. */
export function scheduleEdge(config: FirewallConfig, inForceBefore: ReadonlySet<string>): ScheduleEdge {
  const model = buildModel(config);
  const previous = buildModel(config, inForceBefore);
  const now = new Map(model.rules.filter((r) => r.rule.schedule_id).map((r) => [r.id, r]));
  const scheduled = config.rules.filter((r) => r.data.schedule_id && r.data.status === 'active');
  const ended = scheduled.filter((r) => inForceBefore.has(r.id) && !now.has(r.id) && r.data.action === 'pass').map((r) => ({ id: r.id }));
  const startedRules = scheduled.filter((r) => !inForceBefore.has(r.id) && now.get(r.id)?.isBlock).map((r) => now.get(r.id)!);
  return {
    ended,
    started: startedRules.map((r) => ({ id: r.id })),
    touches: (crossing, host) => startedRules.some((r) => ruleMatches(r, model, { ...crossing, iface: null }, host)),
    cuts: (crossing, host) =>
      decide(model, model.rules, crossing, host).verdict === 'block' && decide(previous, previous.rules, crossing, host).verdict === 'pass',
  };
}
