/**
 * "Would this packet pass?": the verdict for a new connection's first packet where it crosses the firewall,
 * with a trace of how the compiled ruleset reaches it. It reads the model both compilers render (buildModel:
 * aliases flattened into the same sets the renderers load, rules filtered by status and schedule for the time
 * asked about) and decides with the same functions the schedule edges use (firewall-decision.ts), so it cannot
 * judge a packet otherwise than the loaded ruleset does.
 */
import { cidrContains, formatCidr, parseIp } from './addresses.js';
import { decide, ruleMismatch, type Crossing, type HostAddresses, type MismatchStep } from './firewall-decision.js';
import { buildModel, portText, type AddressMatch, type FilterRule, type FirewallModel } from './firewall-model.js';
import type { FirewallConfig, PortRange, RuleData } from './firewall-types.js';
import { translate } from './nat-translation.js';

export type SimulatedProtocol = 'tcp' | 'udp' | 'icmp' | 'icmp6' | 'esp' | 'ah' | 'gre';

export interface SimulatedPacket {
  interface: string;
  direction: 'in' | 'out';
  protocol: SimulatedProtocol;
  src: string;
  dst: string;
  /** null for protocols without ports. */
  src_port: number | null;
  dst_port: number | null;
}

export interface Endpoints {
  src: string;
  src_port: number | null;
  dst: string;
  dst_port: number | null;
}

export type RuleOutcome = 'decides' | 'matched_overridden' | 'not_matched' | 'not_loaded' | 'not_reached';

export interface RuleTrace {
  rule_id: string;
  priority: number;
  action: RuleData['action'];
  quick: boolean;
  outcome: RuleOutcome;
  /** Why, in words: the first condition that failed, why the rule is not loaded, or what it matched on. */
  reason: string;
  /** For a rule that matched: each condition and what satisfied it (alias expansion, schedule, ports). */
  matched_on?: string[];
}

export interface SimulationResult {
  verdict: 'pass' | 'block';
  /** The deciding rule's action (`pass` when a system rule or the default policy decides). */
  action: RuleData['action'];
  decided_by:
    | { type: 'rule'; rule_id: string; quick: boolean }
    | { type: 'system'; rule: 'loopback' | 'anti-lockout' }
    /** `block`: the packet enters a WAN interface and the WAN default block is on. */
    | { type: 'default'; policy: 'pass' | 'block' };
  /** The appliance's local time the schedules were judged at, e.g. `wed 18:30`. */
  local_time: string;
  nat: null | { rule_id: string; nat_type: string; before: Endpoints; after: Endpoints; changed: string[] };
  /** The packet as the filter rules see it (after NAT). */
  filtered: Endpoints;
  rules: RuleTrace[];
}

const CROSSING_PROTOCOL: Record<SimulatedProtocol, string> = { tcp: 'tcp', udp: 'udp', icmp: 'icmp', icmp6: 'icmpv6', esp: 'esp', ah: 'ah', gre: 'gre' };
const hasPorts = (protocol: SimulatedProtocol) => protocol === 'tcp' || protocol === 'udp';

const hhmm = (minute: number) => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

function endpoints(crossing: Crossing, ported: boolean): Endpoints {
  return { src: crossing.src, src_port: ported ? crossing.sport : null, dst: crossing.dst, dst_port: ported ? crossing.dport : null };
}

function addressText(address: AddressMatch, text: string): string {
  switch (address.kind) {
    case 'any': return 'any';
    case 'interface': return 'an address of the rule\'s interface';
    case 'alias': return `alias <${address.name}>`;
    default: return text;
  }
}

/** The block of an alias's compiled set that holds the address (the alias expansion the trace shows). */
function aliasBlock(model: FirewallModel, name: string, address: string): string | undefined {
  const ip = parseIp(address);
  const alias = model.aliases.get(name);
  if (!ip || !alias) return undefined;
  const block = (ip.family === 4 ? alias.v4 : alias.v6).find((b) => cidrContains(b, ip.family, ip.value));
  return block ? formatCidr(block) : undefined;
}

function setSize(model: FirewallModel, name: string): string {
  const alias = model.aliases.get(name)!;
  const blocks = alias.v4.length + alias.v6.length;
  return blocks === 0 ? 'empty' : `${blocks} block${blocks === 1 ? '' : 's'}`;
}

function addressReason(side: 'source' | 'destination', compiled: FilterRule, model: FirewallModel, crossing: Crossing): string {
  const { rule } = compiled;
  const address = side === 'source' ? compiled.src : compiled.dst;
  const text = side === 'source' ? crossing.src : crossing.dst;
  const invert = side === 'source' ? rule.src_invert : rule.dst_invert;
  const spelled = addressText(address, side === 'source' ? rule.rule_match.src_addr : rule.rule_match.dst_addr);
  if (invert) return `${side} ${text} is in ${spelled}, which the rule inverts`;
  const detail = address.kind === 'alias' ? ` (its set: ${setSize(model, address.name)})` : '';
  return `${side} ${text} is not in ${spelled}${detail}`;
}

function addressMatchedOn(side: 'source' | 'destination', compiled: FilterRule, model: FirewallModel, crossing: Crossing): string {
  const { rule } = compiled;
  const address = side === 'source' ? compiled.src : compiled.dst;
  const text = side === 'source' ? crossing.src : crossing.dst;
  const invert = side === 'source' ? rule.src_invert : rule.dst_invert;
  const spelled = addressText(address, side === 'source' ? rule.rule_match.src_addr : rule.rule_match.dst_addr);
  if (invert) return `${side} ${text} is not in ${spelled} (inverted)`;
  if (address.kind === 'alias') return `${side} ${text} is in alias <${address.name}> through ${aliasBlock(model, address.name, text)}`;
  if (address.kind === 'interface') return `${side} ${text} is an address of ${rule.interface}`;
  return address.kind === 'any' ? `${side} any` : `${side} ${text} is in ${spelled}`;
}

const rangeText = (range: PortRange) => portText(range, '-');

function mismatchReason(step: MismatchStep, compiled: FilterRule, model: FirewallModel, crossing: Crossing, host: HostAddresses): string {
  const { rule } = compiled;
  switch (step) {
    case 'direction': return `the packet goes ${crossing.direction}; the rule matches ${rule.direction}`;
    case 'interface': return `the packet crosses ${crossing.iface}; the rule is on ${rule.interface}`;
    case 'protocol': return `protocol ${crossing.protocol === 'icmpv6' ? 'icmp6' : crossing.protocol}; the rule matches ${rule.protocol}`;
    case 'address_family': return `the packet is IPv${parseIp(crossing.src)?.family}; the rule matches ${compiled.families.map((f) => `IPv${f}`).join(' and ')} only`;
    case 'src_addr': return addressReason('source', compiled, model, crossing);
    case 'dst_addr': return addressReason('destination', compiled, model, crossing);
    case 'src_port': return `source port ${crossing.sport} is outside ${rangeText(rule.rule_match.src_port!)}`;
    case 'dst_port': return `destination port ${crossing.dport} is outside ${rangeText(rule.rule_match.dst_port!)}`;
  }
}

function matchedOn(compiled: FilterRule, model: FirewallModel, crossing: Crossing, scheduleText: string | undefined): string[] {
  const { rule } = compiled;
  const found = [
    rule.direction === 'any' ? 'direction any' : `direction ${rule.direction}`,
    rule.interface ? `interface ${rule.interface}` : 'any interface',
    `protocol ${rule.protocol}`,
    addressMatchedOn('source', compiled, model, crossing),
    addressMatchedOn('destination', compiled, model, crossing),
  ];
  if (rule.rule_match.src_port) found.push(`source port ${crossing.sport} in ${rangeText(rule.rule_match.src_port)}`);
  if (rule.rule_match.dst_port) found.push(`destination port ${crossing.dport} in ${rangeText(rule.rule_match.dst_port)}`);
  if (scheduleText) found.push(scheduleText);
  return found;
}

/**
 * The steps of a simulation that decide the verdict (NAT, then the rules), without the rule-by-rule trace:
 * simulatePacket and the assertions (areas/assertions) judge packets with this one function.
 */
export function judgeCrossing(model: FirewallModel, packet: SimulatedPacket, host: HostAddresses, rulesFor: (crossing: Crossing) => readonly FilterRule[] = () => model.rules) {
  const arriving: Crossing = {
    direction: packet.direction, iface: packet.interface, protocol: CROSSING_PROTOCOL[packet.protocol],
    src: packet.src, dst: packet.dst, sport: packet.src_port ?? 0, dport: packet.dst_port ?? 0,
  };
  const translation = translate(model, arriving, host);
  const crossing = translation?.translated ?? arriving;
  const decision = decide(model, rulesFor(crossing), crossing, host);
  return { arriving, translation, crossing, decision, filtered: endpoints(crossing, hasPorts(packet.protocol)) };
}

/**
 * Simulates one packet. `config.time` is the local time schedules are judged at; `host` gives the firewall's
 * own addresses (the anti-lockout rule, `interface address`, masquerade).
 */
export function simulatePacket(config: FirewallConfig, packet: SimulatedPacket, host: HostAddresses): SimulationResult {
  const model = buildModel(config);
  const ported = hasPorts(packet.protocol);
  const { arriving, translation, crossing, decision } = judgeCrossing(model, packet, host);
  const localTime = `${config.time.day} ${hhmm(config.time.minute)}`;

  const compiledById = new Map(model.rules.map((r) => [r.id, r]));
  const skippedById = new Map(model.skipped.map((s) => [s.id, s]));
  const schedules = new Map(config.schedules.map((s) => [s.id, s.data]));
  // In pf's order: the first quick match stops evaluation; otherwise the last match decides.
  const quickDecider = decision.rule !== undefined && compiledById.get(decision.rule)?.rule.quick ? decision.rule : undefined;
  let stoppedAt: string | undefined;
  const rules: RuleTrace[] = config.rules.map(({ id, data: rule }) => {
    const base = { rule_id: id, priority: rule.priority, action: rule.action, quick: rule.quick };
    const skipped = skippedById.get(id);
    if (skipped) {
      const reason = skipped.schedule !== undefined ? `outside its schedule "${skipped.schedule}" at ${localTime}` : skipped.reason;
      return { ...base, outcome: 'not_loaded', reason };
    }
    if (decision.system === 'loopback' || decision.system === 'anti-lockout') return { ...base, outcome: 'not_reached', reason: `the system rule "${decision.system}" passes the packet before any user rule` };
    if (stoppedAt) return { ...base, outcome: 'not_reached', reason: `evaluation stopped at the quick rule ${stoppedAt}` };
    const compiled = compiledById.get(id)!;
    const step = ruleMismatch(compiled, model, crossing, host);
    if (step) return { ...base, outcome: 'not_matched', reason: mismatchReason(step, compiled, model, crossing, host) };
    const schedule = rule.schedule_id ? schedules.get(rule.schedule_id) : undefined;
    const scheduleText = schedule ? `schedule "${schedule.name}" ${schedule.enabled ? 'is active' : 'is disabled (does not restrict the rule)'} at ${localTime}` : undefined;
    const on = matchedOn(compiled, model, crossing, scheduleText);
    if (id === quickDecider) {
      stoppedAt = id;
      return { ...base, outcome: 'decides', reason: 'matches and is quick: it decides and evaluation stops', matched_on: on };
    }
    if (id === decision.rule) return { ...base, outcome: 'decides', reason: 'matches and is the last matching rule (not quick): it decides', matched_on: on };
    return { ...base, outcome: 'matched_overridden', reason: `matches, but is not quick: the later match ${decision.rule} decides`, matched_on: on };
  });

  const decider = decision.rule !== undefined ? compiledById.get(decision.rule)! : undefined;
  return {
    verdict: decision.verdict,
    action: decider?.rule.action ?? (decision.verdict === 'block' ? 'block' : 'pass'),
    decided_by: decider
      ? { type: 'rule', rule_id: decider.id, quick: decider.rule.quick }
      : decision.system === 'loopback' || decision.system === 'anti-lockout' ? { type: 'system', rule: decision.system } : { type: 'default', policy: decision.verdict },
    local_time: localTime,
    nat: translation
      ? { rule_id: translation.nat.id, nat_type: translation.nat.data.nat_type, before: endpoints(arriving, ported), after: endpoints(crossing, ported), changed: translation.changed }
      : null,
    filtered: endpoints(crossing, ported),
    rules,
  };
}
