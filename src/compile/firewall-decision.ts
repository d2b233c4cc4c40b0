/**
 * How the compiled ruleset decides a new connection, read from the model both compilers render: loopback and
 * anti-lockout first, then the user's rules with pf's semantics (the last match decides, a quick match at
 * once, pass when nothing matches). At a schedule edge this tells which established connections a block rule
 * entering its window now stops, with their interface and direction; test/compile-semantics.test.ts holds it
 * equal to what the pf and nftables texts decide.
 */
import { cidrContains, parseIp, type Family } from './addresses.js';
import type { AddressMatch, FilterRule, FirewallModel } from './firewall-model.js';

/** One packet of a connection where the filter sees it: after translation, on the interface it crosses. */
export interface Crossing {
  direction: 'in' | 'out';
  /** null when the connection table does not say (pf floating states): a rule naming an interface then matches. */
  iface: string | null;
  /** As conntrack and pfctl name it: `tcp`, `udp`, `icmp`, `icmpv6`/`ipv6-icmp`, `gre`, … */
  protocol: string;
  src: string;
  dst: string;
  /** 0 for protocols without ports. */
  sport: number;
  dport: number;
}

/** What the firewall host is: its loopback's name and its own addresses by interface. */
export interface HostAddresses {
  loopback: string;
  byInterface: ReadonlyMap<string, readonly string[]>;
}

export interface Decision {
  verdict: 'pass' | 'block';
  /** The user rule that decided; undefined when a system rule or the default did. */
  rule?: string;
  /** The system rule that decided, when one did (the WAN default block only when no user rule matched). */
  system?: 'loopback' | 'anti-lockout' | 'wan-default-block';
}

const PROTOCOL_NAMES: Record<string, readonly string[]> = { 'tcp/udp': ['tcp', 'udp'], icmp6: ['icmpv6', 'ipv6-icmp', 'icmp6'] };

/**
 * parseIp for the few addresses one decision asks about again and again (a crossing's source and destination,
 * the firewall's own addresses), remembered: a decision over 10,000 rules would otherwise parse them 40,000 times.
 */
const recentlyParsed = new Map<string, ReturnType<typeof parseIp>>();
function parsedIp(text: string): ReturnType<typeof parseIp> {
  if (recentlyParsed.has(text)) return recentlyParsed.get(text);
  if (recentlyParsed.size >= 256) recentlyParsed.clear();
  const parsed = parseIp(text);
  recentlyParsed.set(text, parsed);
  return parsed;
}

function sameAddress(a: string, family: Family, value: bigint): boolean {
  const parsed = parsedIp(a);
  return parsed !== undefined && parsed.family === family && parsed.value === value;
}

/** Whether the address is one of the firewall's own, on the interface or (without one) on any. */
export function isOwnAddress(host: HostAddresses, address: string, iface?: string): boolean {
  const ip = parsedIp(address);
  if (!ip) return false;
  const lists = iface === undefined ? [...host.byInterface.values()] : [host.byInterface.get(iface) ?? []];
  return lists.some((list) => list.some((own) => sameAddress(own, ip.family, ip.value)));
}

/** Whether an address lies in what the rule's address names (before its invert flag). */
export function addressContains(address: AddressMatch, text: string, iface: string | null, model: FirewallModel, host: HostAddresses): boolean {
  const ip = parsedIp(text);
  if (!ip) return false;
  switch (address.kind) {
    case 'any': return true;
    case 'interface': return iface !== null && isOwnAddress(host, text, iface);
    case 'alias': {
      // Membership in a compiled address set (the set the renderers load as an nftables set or pf table).
      const alias = model.aliases.get(address.name)!;
      return (ip.family === 4 ? alias.v4 : alias.v6).some((block) => cidrContains(block, ip.family, ip.value));
    }
    case 'block': return cidrContains(address.cidr, ip.family, ip.value);
    case 'range': return address.family === ip.family && ip.value >= address.first && ip.value <= address.last;
  }
}

/** The first condition of a rule that a crossing fails, in the order the trace reports them. */
export type MismatchStep = 'direction' | 'interface' | 'protocol' | 'address_family' | 'src_addr' | 'dst_addr' | 'src_port' | 'dst_port';

const inRange = (port: number, range: { start: number; end: number } | null) => !range || (port >= range.start && port <= range.end);

/** Which condition of one user rule the crossing fails (`iface` null: any interface the rule names), or undefined when it matches. */
export function ruleMismatch(compiled: FilterRule, model: FirewallModel, crossing: Crossing, host: HostAddresses): MismatchStep | undefined {
  const { rule } = compiled;
  if (rule.direction !== 'any' && rule.direction !== crossing.direction) return 'direction';
  if (rule.interface && crossing.iface !== null && rule.interface !== crossing.iface) return 'interface';
  if (rule.protocol !== 'any' && !(PROTOCOL_NAMES[rule.protocol] ?? [rule.protocol]).includes(crossing.protocol)) return 'protocol';
  const family = parsedIp(crossing.src)?.family;
  if (!family || !compiled.families.includes(family)) return 'address_family';
  if (parsedIp(crossing.dst)?.family !== family) return 'dst_addr';
  // "interface address" means the rule's own interface (buildModel refuses it on a rule without one).
  const iface = rule.interface;
  if (addressContains(compiled.src, crossing.src, iface, model, host) === rule.src_invert) return 'src_addr';
  if (addressContains(compiled.dst, crossing.dst, iface, model, host) === rule.dst_invert) return 'dst_addr';
  if (!inRange(crossing.sport, rule.rule_match.src_port)) return 'src_port';
  if (!inRange(crossing.dport, rule.rule_match.dst_port)) return 'dst_port';
  return undefined;
}

/**
 * Whether a rule can match a crossing of this direction, interface and protocol whatever its addresses and ports:
 * conditions of ruleMismatch. Rules that cannot are left out of decide's list without changing its answer.
 */
export function ruleMayMatch(compiled: FilterRule, crossing: Pick<Crossing, 'direction' | 'iface' | 'protocol'>): boolean {
  const { rule } = compiled;
  if (rule.direction !== 'any' && rule.direction !== crossing.direction) return false;
  if (rule.interface && crossing.iface !== null && rule.interface !== crossing.iface) return false;
  return rule.protocol === 'any' || rule.protocol === crossing.protocol || (PROTOCOL_NAMES[rule.protocol]?.includes(crossing.protocol) ?? false);
}

/** The port conditions of ruleMismatch alone (see ruleMayMatch). */
export function portsMayMatch(compiled: FilterRule, crossing: Pick<Crossing, 'sport' | 'dport'>): boolean {
  return inRange(crossing.sport, compiled.rule.rule_match.src_port) && inRange(crossing.dport, compiled.rule.rule_match.dst_port);
}

/** Whether one user rule matches the crossing (`iface` null: any interface the rule names). */
export function ruleMatches(compiled: FilterRule, model: FirewallModel, crossing: Crossing, host: HostAddresses): boolean {
  return ruleMismatch(compiled, model, crossing, host) === undefined;
}

/** The anti-lockout rules of pfSystemLines / nftSystemLines: the API's ports (plain and HTTPS) on their addresses, from the LAN side. */
export function antiLockout(model: FirewallModel, crossing: Crossing, host: HostAddresses): boolean {
  const { api, apiTls, antiLockoutInterfaces } = model.config.system;
  if (crossing.direction !== 'in' || crossing.protocol !== 'tcp') return false;
  if (antiLockoutInterfaces.length && crossing.iface !== null && !antiLockoutInterfaces.includes(crossing.iface)) return false;
  return [api, apiTls].some((listener) => {
    if (!listener || crossing.dport !== listener.port) return false;
    if (listener.host === '0.0.0.0') return parseIp(crossing.dst)?.family === 4 && isOwnAddress(host, crossing.dst);
    if (listener.host === '::') return isOwnAddress(host, crossing.dst);
    const target = parseIp(listener.host);
    return target !== undefined && sameAddress(crossing.dst, target.family, target.value);
  });
}

/** The WAN default block of pfSystemLines / nftDefaultLines: inbound on a WAN interface, when no user rule decides. */
export function wanDefaultBlock(model: FirewallModel, crossing: Crossing): boolean {
  const wan = model.config.system.wanDefaultBlock ?? [];
  return crossing.direction === 'in' && crossing.iface !== null && wan.includes(crossing.iface);
}

/** The verdict for a new connection crossing the firewall this way, under `rules` (in evaluation order). */
export function decide(model: FirewallModel, rules: readonly FilterRule[], crossing: Crossing, host: HostAddresses): Decision {
  if (crossing.iface !== null && crossing.iface === host.loopback) return { verdict: 'pass', system: 'loopback' };
  if (antiLockout(model, crossing, host)) return { verdict: 'pass', system: 'anti-lockout' };
  let decision: Decision = wanDefaultBlock(model, crossing) ? { verdict: 'block', system: 'wan-default-block' } : { verdict: 'pass' };
  for (const compiled of rules) {
    if (!ruleMatches(compiled, model, crossing, host)) continue;
    decision = { verdict: compiled.isBlock ? 'block' : 'pass', rule: compiled.id };
    if (compiled.rule.quick) break;
  }
  return decision;
}
