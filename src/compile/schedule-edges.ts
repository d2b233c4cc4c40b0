/**
 * Schedules change which rules are in force, but states (pf) and conntrack entries (Linux) outlive a ruleset
 * reload: a connection opened inside a window would go on after it closes, and a block rule entering its
 * window would not stop flows already established. At each schedule edge the affected states are killed, so
 * their next packet is decided by the ruleset in force:
 * - a pass rule leaving its window: the states it created (pf: its label; nftables: its conntrack mark);
 * - a block rule entering its window: the states it matches (their tuples, checked against the rule).
 */
import { cidrContains, parseIp } from './addresses.js';
import type { FirewallConfig } from './firewall-types.js';
import { buildModel, type AddressMatch, type FilterRule, type FirewallModel } from './firewall-model.js';

/** One connection as the connection table shows it (original direction). */
export interface FlowTuple {
  /** `tcp`, `udp`, `icmp`, `icmpv6`, … as conntrack and pf name them. */
  protocol: string;
  src: string;
  dst: string;
  sport: number;
  dport: number;
}

export interface ScheduleEdge {
  /** Pass rules that left their window: kill the states they created. */
  ended: { id: string }[];
  /** Block rules that entered their window: kill the states they match. */
  started: { id: string; matches: (flow: FlowTuple) => boolean }[];
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

function addressMatches(address: AddressMatch, invert: boolean, text: string, model: FirewallModel): boolean {
  const ip = parseIp(text);
  if (!ip) return false;
  let inside: boolean;
  switch (address.kind) {
    case 'any':
    case 'interface': inside = true; break; // the tuple cannot tell which interface owns an address
    case 'alias': {
      const alias = model.aliases.get(address.name)!;
      inside = (ip.family === 4 ? alias.v4 : alias.v6).some((block) => cidrContains(block, ip.family, ip.value));
      break;
    }
    case 'block': inside = cidrContains(address.cidr, ip.family, ip.value); break;
    case 'range': inside = address.family === ip.family && ip.value >= address.first && ip.value <= address.last; break;
  }
  return invert ? !inside : inside;
}

const PROTOCOL_NAMES: Record<string, string[]> = { 'tcp/udp': ['tcp', 'udp'], icmp6: ['icmpv6', 'ipv6-icmp', 'icmp6'] };

/** Whether a connection matches a rule's protocol, addresses and ports (interfaces are not in the tuple). */
export function flowMatchesRule(compiled: FilterRule, model: FirewallModel, flow: FlowTuple): boolean {
  const { rule } = compiled;
  if (rule.protocol !== 'any' && !(PROTOCOL_NAMES[rule.protocol] ?? [rule.protocol]).includes(flow.protocol)) return false;
  const family = parseIp(flow.src)?.family;
  if (!family || !compiled.families.includes(family)) return false;
  if (!addressMatches(compiled.src, rule.src_invert, flow.src, model)) return false;
  if (!addressMatches(compiled.dst, rule.dst_invert, flow.dst, model)) return false;
  const inRange = (port: number, range: { start: number; end: number } | null) => !range || (port >= range.start && port <= range.end);
  return inRange(flow.sport, rule.rule_match.src_port) && inRange(flow.dport, rule.rule_match.dst_port);
}

/** What changed between the scheduled rules in force before (ids) and those in force for `config`'s time. */
export function scheduleEdge(config: FirewallConfig, inForceBefore: ReadonlySet<string>): ScheduleEdge {
  const model = buildModel(config);
  const now = new Map(model.rules.filter((r) => r.rule.schedule_id).map((r) => [r.id, r]));
  const scheduled = new Map(config.rules.filter((r) => r.data.schedule_id && r.data.status === 'active').map((r) => [r.id, r.data]));
  const edge: ScheduleEdge = { ended: [], started: [] };
  for (const [id, rule] of scheduled) {
    const before = inForceBefore.has(id);
    const after = now.get(id);
    if (before && !after && rule.action === 'pass') edge.ended.push({ id });
    if (!before && after && after.isBlock) edge.started.push({ id, matches: (flow) => flowMatchesRule(after, model, flow) });
  }
  return edge;
}
