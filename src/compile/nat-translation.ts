/**
 * Which NAT rule translates a new connection where it crosses the firewall, and into what: the same reading of
 * the compiled model the nftables renderer writes as its `nat_prerouting` / `nat_postrouting` chains (and pf as
 * its rdr / nat / binat rules). Destination NAT happens before routing on the interface a packet enters by,
 * source NAT after routing on the one it leaves by; the first matching NAT rule of the chain translates.
 */
import { parseIp, type Family } from './addresses.js';
import { addressContains, type Crossing, type HostAddresses } from './firewall-decision.js';
import { parseAddress, type FirewallModel } from './firewall-model.js';
import type { NatData, PortRange, WithId } from './firewall-types.js';

export interface Translation {
  nat: WithId<NatData>;
  /** The crossing as the filter then sees it. */
  translated: Crossing;
  /** What changed, in words of the wire format (`dst_addr`, `dst_port`, `src_addr`, `src_port`). */
  changed: ('src_addr' | 'src_port' | 'dst_addr' | 'dst_port')[];
}

const NAT_PROTOCOLS: Record<string, readonly string[]> = { 'tcp/udp': ['tcp', 'udp'], icmp6: ['icmpv6', 'ipv6-icmp', 'icmp6'] };

const inRange = (port: number, range: PortRange | null) => !range || (port >= range.start && port <= range.end);

function protocolMatches(protocol: NatData['protocol'], crossing: Crossing): boolean {
  return protocol === 'any' || (NAT_PROTOCOLS[protocol] ?? [protocol]).includes(crossing.protocol);
}

/** An address field of a NAT rule (`interface address` is the NAT rule's own interface). */
function natAddressMatches(text: string, address: string, nat: NatData, model: FirewallModel, host: HostAddresses): boolean {
  const parsed = parseAddress(text);
  return parsed !== undefined && addressContains(parsed, address, nat.interface, model, host);
}

/** The address family a NAT rule is rendered for: its target's, or both for masquerade and an unnamed target. */
function natFamilies(nat: NatData): Family[] {
  const redirect = parseIp(nat.redirect.address);
  return redirect && nat.nat_type !== 'masquerade' ? [redirect.family] : [4, 6];
}

/** The first address of the interface in the family (masquerade's source), when the host has one. */
function interfaceAddress(host: HostAddresses, iface: string, family: Family): string | undefined {
  return (host.byInterface.get(iface) ?? []).find((address) => parseIp(address)?.family === family);
}

function matchesCommon(nat: NatData, crossing: Crossing, model: FirewallModel, host: HostAddresses): boolean {
  const family = parseIp(crossing.src)?.family;
  if (!family || !natFamilies(nat).includes(family)) return false;
  if (!protocolMatches(nat.protocol, crossing)) return false;
  if (!natAddressMatches(nat.src_addr, crossing.src, nat, model, host)) return false;
  if (!natAddressMatches(nat.dst_addr, crossing.dst, nat, model, host)) return false;
  return inRange(crossing.sport, nat.src_port) && inRange(crossing.dport, nat.dst_port);
}

function translateIn(entry: WithId<NatData>, crossing: Crossing, model: FirewallModel, host: HostAddresses): Translation | undefined {
  const nat = entry.data;
  if (nat.interface !== crossing.iface) return undefined;
  if (nat.nat_type === 'dnat') {
    if (!matchesCommon(nat, crossing, model, host)) return undefined;
    const port = nat.redirect.port ? nat.redirect.port.start : crossing.dport;
    return {
      nat: entry,
      translated: { ...crossing, dst: nat.redirect.address, dport: port },
      changed: ['dst_addr', ...(port !== crossing.dport ? ['dst_port' as const] : [])],
    };
  }
  if (nat.nat_type === 'binat') {
    // The outside address reaches the inside host (limited to the rule's protocol, as pf's binat is).
    const outside = parseIp(nat.redirect.address);
    const dst = parseIp(crossing.dst);
    if (!outside || !dst || outside.family !== dst.family || outside.value !== dst.value || !protocolMatches(nat.protocol, crossing)) return undefined;
    return { nat: entry, translated: { ...crossing, dst: nat.src_addr }, changed: ['dst_addr'] };
  }
  return undefined;
}

function translateOut(entry: WithId<NatData>, crossing: Crossing, model: FirewallModel, host: HostAddresses): Translation | undefined {
  const nat = entry.data;
  if (nat.interface !== crossing.iface) return undefined;
  switch (nat.nat_type) {
    case 'snat': {
      if (!matchesCommon(nat, crossing, model, host)) return undefined;
      const port = nat.redirect.port ? nat.redirect.port.start : crossing.sport;
      return {
        nat: entry,
        translated: { ...crossing, src: nat.redirect.address, sport: port },
        changed: ['src_addr', ...(port !== crossing.sport ? ['src_port' as const] : [])],
      };
    }
    case 'masquerade': {
      if (!matchesCommon(nat, crossing, model, host)) return undefined;
      const family = parseIp(crossing.src)!.family;
      const address = interfaceAddress(host, nat.interface, family);
      // Without a known address of the interface the kernel would pick one at send time; the filter still sees a translated packet.
      return { nat: entry, translated: { ...crossing, src: address ?? crossing.src }, changed: address ? ['src_addr'] : [] };
    }
    case 'binat': {
      const inside = parseAddress(nat.src_addr);
      if (!inside || !addressContains(inside, crossing.src, nat.interface, model, host)) return undefined;
      if (!natAddressMatches(nat.dst_addr, crossing.dst, nat, model, host) || !protocolMatches(nat.protocol, crossing)) return undefined;
      if (parseIp(crossing.src)?.family !== parseIp(nat.redirect.address)?.family) return undefined;
      return { nat: entry, translated: { ...crossing, src: nat.redirect.address }, changed: ['src_addr'] };
    }
    default:
      return undefined;
  }
}

/**
 * The translation of a new connection's first packet on this crossing: destination NAT for `in`, source NAT
 * for `out`; undefined when no active NAT rule applies.
 */
export function translate(model: FirewallModel, crossing: Crossing, host: HostAddresses): Translation | undefined {
  for (const entry of model.nat) {
    const found = crossing.direction === 'in' ? translateIn(entry, crossing, model, host) : translateOut(entry, crossing, model, host);
    if (found) return found;
  }
  return undefined;
}
