/**
 * Judging a transit assertion: the packet it describes crosses the firewall in on its interface and, unless it is
 * for the box itself, out on the egress interface; each crossing is judged by the simulator's own steps
 * (judgeCrossing: NAT, then the rules), so an assertion cannot be judged otherwise than POST /rules/simulate would.
 * A CIDR or an alias is judged at one address of every part of it that the rules tell apart (their address
 * conditions begin or end there), so the answer holds for the whole block (up to 16 parts per side; more are sampled).
 */
import { cidrContains, cidrLast, formatIp, parseCidr, parseIp, type Cidr } from '../../compile/addresses.js';
import { portsMayMatch, ruleMayMatch, type Crossing, type HostAddresses } from '../../compile/firewall-decision.js';
import type { FilterRule, FirewallModel } from '../../compile/firewall-model.js';
import { judgeCrossing, type SimulatedPacket, type SimulationResult } from '../../compile/packet-simulation.js';
import type { NetInterface } from '../../platform/network.js';
import type { AssertionData } from './schema.js';

/** The source port a transit assertion's packet leaves from (an ordinary ephemeral port). */
export const TRANSIT_SOURCE_PORT = 40_000;

export interface TransitVerdict {
  outcome: 'pass' | 'block' | 'error';
  /** What decided, in words: `rule <id> (block, quick) on in fwc`, `the default policy (pass)`, or why it could not be judged. */
  decided_by: string;
  rule_id: string | null;
  decision: SimulationResult['decided_by'] | null;
  /** The packet that decided: `tcp 10.0.1.2:40000 → 10.0.2.10:80 in on lan0`. */
  detail: string;
}

/** What the assertions need to know about the box: its addresses and interfaces, and the role → interface map. */
export interface NetFacts {
  host: HostAddresses;
  interfaces: readonly NetInterface[];
  roles: ReadonlyMap<string, string>;
}

export const interfaceOf = (nameOrRole: string, facts: NetFacts) => facts.roles.get(nameOrRole.toLowerCase()) ?? nameOrRole;

/** Sample points per side: beyond this many, an evenly spread subset is judged and the result says so. */
const MAX_POINTS_PER_SIDE = 16;

/**
 * Every address where some rule's (or NAT rule's) address condition begins or ends to hold, per family, sorted: the
 * starts of the "atoms" inside which every address condition answers the same. Judging one address of each atom
 * judges the whole block. Remembered per rule list.
 */
const boundaryLists = new WeakMap<readonly FilterRule[], Record<4 | 6, bigint[]>>();
function boundaries(model: FirewallModel, host: HostAddresses): Record<4 | 6, bigint[]> {
  let known = boundaryLists.get(model.rules);
  if (known) return known;
  const points: Record<4 | 6, Set<bigint>> = { 4: new Set(), 6: new Set() };
  const interval = (family: 4 | 6, first: bigint, last: bigint) => {
    points[family].add(first);
    points[family].add(last + 1n);
  };
  const block = (cidr: Cidr) => interval(cidr.family, cidr.base, cidrLast(cidr));
  const addressMatch = (match: FilterRule['src']) => {
    if (match.kind === 'block') block(match.cidr);
    else if (match.kind === 'range') interval(match.family, match.first, match.last);
    else if (match.kind === 'alias') for (const b of [...(model.aliases.get(match.name)?.v4 ?? []), ...(model.aliases.get(match.name)?.v6 ?? [])]) block(b);
  };
  for (const rule of model.rules) {
    addressMatch(rule.src);
    addressMatch(rule.dst);
  }
  // `interface address` and NAT conditions: the box's own addresses, and the NAT rules' written addresses.
  for (const address of [...host.byInterface.values()].flat()) {
    const ip = parseIp(address);
    if (ip) interval(ip.family, ip.value, ip.value);
  }
  for (const nat of model.nat) {
    for (const text of [nat.data.src_addr, nat.data.dst_addr]) {
      const alias = typeof text === 'string' ? /^<([^>]+)>$/.exec(text)?.[1] : undefined;
      if (alias) addressMatch({ kind: 'alias', name: alias });
      else if (typeof text === 'string' && parseCidr(text)) block(parseCidr(text)!);
    }
  }
  known = { 4: [...points[4]].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), 6: [...points[6]].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
  boundaryLists.set(model.rules, known);
  return known;
}

/** The first and last usable address of a block (a network's own address and IPv4 broadcast are no host's). */
function usable(block: Cidr): [bigint, bigint] {
  const last = cidrLast(block);
  const bits = block.family === 4 ? 32 : 128;
  return block.prefix < bits - 1 ? [block.base + 1n, block.family === 4 ? last - 1n : last] : [block.base, last];
}

/** One address of every atom inside a block (see boundaries). */
function blockPoints(block: Cidr, sorted: readonly bigint[]): bigint[] {
  const [first, last] = usable(block);
  const found = [first];
  // Binary search for the first boundary above `first`.
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] <= first) low = middle + 1;
    else high = middle;
  }
  for (let i = low; i < sorted.length && sorted[i] <= last; i++) found.push(sorted[i]);
  return found;
}

/** Sample addresses of one side (one per atom, see boundaries) and how many atoms there were, or why it cannot be judged. */
export function endpointSamples(text: string, model: FirewallModel, host: HostAddresses): { addresses: string[]; atoms: number } | string {
  const alias = /^<([^>]+)>$/.exec(text)?.[1];
  let blocks: readonly Cidr[];
  if (alias !== undefined) {
    const resolved = model.aliases.get(alias);
    if (!resolved) return `alias <${alias}> does not exist`;
    blocks = [...resolved.v4, ...resolved.v6];
    if (blocks.length === 0) return `alias <${alias}> is empty`;
  } else if (parseIp(text)) {
    return { addresses: [text], atoms: 1 };
  } else {
    const cidr = parseCidr(text);
    if (!cidr) return `"${text}" is not an address, a CIDR or an alias`;
    blocks = [cidr];
  }
  const known = boundaries(model, host);
  const points = blocks.flatMap((block) => blockPoints(block, known[block.family]).map((value) => formatIp(block.family, value)));
  const unique = [...new Set(points)];
  if (unique.length <= MAX_POINTS_PER_SIDE) return { addresses: unique, atoms: unique.length };
  // Evenly spread, first and last included.
  const step = (unique.length - 1) / (MAX_POINTS_PER_SIDE - 1);
  return { addresses: Array.from({ length: MAX_POINTS_PER_SIDE }, (_, i) => unique[Math.round(i * step)]), atoms: unique.length };
}

function describeDecision(result: ReturnType<typeof judgeCrossing>, model: FirewallModel): Pick<TransitVerdict, 'decided_by' | 'rule_id' | 'decision'> {
  const { decision } = result;
  if (decision.rule !== undefined) {
    const rule = model.rules.find((r) => r.id === decision.rule)!;
    return {
      decided_by: `rule ${rule.id} (${rule.rule.action}${rule.rule.quick ? ', quick' : ''}${rule.rule.description ? `: ${rule.rule.description}` : ''})`,
      rule_id: rule.id,
      decision: { type: 'rule', rule_id: rule.id, quick: rule.rule.quick },
    };
  }
  if (decision.system === 'loopback' || decision.system === 'anti-lockout') return { decided_by: `the system rule ${decision.system}`, rule_id: null, decision: { type: 'system', rule: decision.system } };
  // As /rules/simulate says it: the WAN default block is the default policy of a WAN interface.
  if (decision.system === 'wan-default-block') return { decided_by: 'the default policy (block: the WAN default block)', rule_id: null, decision: { type: 'default', policy: 'block' } };
  return { decided_by: 'the default policy (pass)', rule_id: null, decision: { type: 'default', policy: 'pass' } };
}

/**
 * The rules that can match crossings of one direction, interface and protocol (ruleMayMatch), split by their
 * destination port: those that name a narrow range are listed under each port of it, the others are `open`. The
 * candidates for one port are both lists merged back into rule order, so decide gives the answer it would give over
 * every rule. Remembered per rule list: a thousand assertions over 10,000 rules walk only rules that may decide them.
 */
interface KindIndex {
  open: { at: number; rule: FilterRule }[];
  byPort: Map<number, { at: number; rule: FilterRule }[]>;
  forPort: Map<string, readonly FilterRule[]>;
}
const NARROW_PORT_RANGE = 256;
const candidateIndexes = new WeakMap<readonly FilterRule[], Map<string, KindIndex>>();

function kindIndex(rules: readonly FilterRule[], crossing: Crossing): KindIndex {
  const index: KindIndex = { open: [], byPort: new Map(), forPort: new Map() };
  rules.forEach((rule, at) => {
    if (!ruleMayMatch(rule, crossing)) return;
    const { src_port: sport, dst_port: dport } = rule.rule.rule_match;
    if (sport || !dport || dport.end - dport.start >= NARROW_PORT_RANGE) {
      index.open.push({ at, rule });
      return;
    }
    for (let port = dport.start; port <= dport.end; port++) {
      const list = index.byPort.get(port);
      if (list) list.push({ at, rule });
      else index.byPort.set(port, [{ at, rule }]);
    }
  });
  return index;
}

function candidateRules(model: FirewallModel, crossing: Crossing): readonly FilterRule[] {
  let indexes = candidateIndexes.get(model.rules);
  if (!indexes) candidateIndexes.set(model.rules, (indexes = new Map()));
  const kindKey = `${crossing.direction} ${crossing.iface} ${crossing.protocol}`;
  let index = indexes.get(kindKey);
  if (!index) indexes.set(kindKey, (index = kindIndex(model.rules, crossing)));
  const portKey = `${crossing.sport} ${crossing.dport}`;
  let list = index.forPort.get(portKey);
  if (!list) {
    const narrow = index.byPort.get(crossing.dport) ?? [];
    const merged: FilterRule[] = [];
    let i = 0;
    let j = 0;
    while (i < index.open.length || j < narrow.length) {
      const next = j >= narrow.length || (i < index.open.length && index.open[i].at < narrow[j].at) ? index.open[i++] : narrow[j++];
      // A narrow rule's source port (none: see kindIndex) and the open rules' ports are checked as decide checks them.
      if (portsMayMatch(next.rule, crossing)) merged.push(next.rule);
    }
    if (index.forPort.size >= 4096) index.forPort.clear();
    index.forPort.set(portKey, (list = merged));
  }
  return list;
}

/** The interface whose network holds `address` (the egress of a forwarded packet), or undefined. */
function egressFor(address: string, facts: NetFacts): string | undefined {
  const ip = parseIp(address);
  if (!ip) return undefined;
  for (const candidate of facts.interfaces) {
    const network = candidate.ipv4 && candidate.ipv4_prefix !== null ? parseCidr(`${candidate.ipv4}/${candidate.ipv4_prefix}`) : undefined;
    if (network && cidrContains(network, ip.family, ip.value)) return candidate.name;
  }
  return undefined;
}

const isBoxAddress = (address: string, facts: NetFacts) => [...facts.host.byInterface.values()].some((list) => list.includes(address));

/** Judges one transit assertion against a built model; the first sample pair that contradicts `expect` decides. */
export function judgeTransit(assertion: AssertionData, model: FirewallModel, facts: NetFacts): TransitVerdict {
  const failure = (why: string): TransitVerdict => ({ outcome: 'error', decided_by: why, rule_id: null, decision: null, detail: why });
  const sourceSamples = endpointSamples(assertion.source!, model, facts.host);
  if (typeof sourceSamples === 'string') return failure(`source: ${sourceSamples}`);
  const destinationSamples = endpointSamples(assertion.destination!, model, facts.host);
  if (typeof destinationSamples === 'string') return failure(`destination: ${destinationSamples}`);
  const sources = sourceSamples.addresses;
  const destinations = destinationSamples.addresses;
  // Judged at one address of every part of each side that the rules tell apart, unless there were too many.
  const partial = sourceSamples.atoms > sources.length || destinationSamples.atoms > destinations.length
    ? ` (judged at ${sources.length} of ${sourceSamples.atoms} source and ${destinations.length} of ${destinationSamples.atoms} destination parts)` : '';
  const ingress = interfaceOf(assertion.interface!, facts);
  const explicitEgress = assertion.egress_interface ? interfaceOf(assertion.egress_interface, facts) : undefined;
  const protocol = assertion.protocol!;
  const ported = protocol === 'tcp' || protocol === 'udp';
  let first: TransitVerdict | undefined;
  for (const src of sources) {
    for (const dst of destinations) {
      const family = parseIp(src)!.family;
      if (parseIp(dst)!.family !== family || (protocol === 'icmp' && family !== 4) || (protocol === 'icmp6' && family !== 6)) continue;
      const packet: SimulatedPacket = { interface: ingress, direction: 'in', protocol, src, dst, src_port: ported ? TRANSIT_SOURCE_PORT : null, dst_port: ported ? assertion.port : null };
      const rulesFor = (crossing: Crossing) => candidateRules(model, crossing);
      const arriving = judgeCrossing(model, packet, facts.host, rulesFor);
      const inText = `${protocol} ${src}${ported ? `:${TRANSIT_SOURCE_PORT}` : ''} → ${dst}${ported ? `:${assertion.port}` : ''} in on ${ingress}`;
      let verdict: TransitVerdict = { outcome: arriving.decision.verdict, ...describeDecision(arriving, model), detail: inText };
      const after = arriving.filtered;
      const egress = explicitEgress ?? (isBoxAddress(after.dst, facts) ? undefined : egressFor(after.dst, facts));
      if (arriving.decision.verdict === 'pass' && egress && !isBoxAddress(after.dst, facts)) {
        const leaving = judgeCrossing(model, { ...packet, interface: egress, direction: 'out', src: after.src, dst: after.dst, src_port: after.src_port, dst_port: after.dst_port }, facts.host, rulesFor);
        if (leaving.decision.verdict === 'block' || leaving.decision.rule !== undefined) {
          verdict = { outcome: leaving.decision.verdict, ...describeDecision(leaving, model), detail: `${inText}, out on ${egress} as ${after.dst}${ported ? `:${after.dst_port}` : ''}` };
        }
      }
      verdict.detail += partial;
      first ??= verdict;
      if (verdict.outcome !== assertion.expect) return verdict;
    }
  }
  return first ?? failure(`no source and destination of the same address family${protocol.startsWith('icmp') ? ` for ${protocol}` : ''}`);
}
