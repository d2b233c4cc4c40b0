/**
 * Cutting the connections a block rule entering its window now stops (Linux). conntrack knows each flow's two
 * tuples but not the interfaces it crosses; those come from the routing table (`ip route get`): the route
 * back to the initiator is the interface the flow arrives on, the route to the (translated) responder the
 * one it leaves by, and a local route means the firewall itself is that end. Each crossing is then judged by
 * the whole ruleset before and after the edge (compile/firewall-decision.ts), and only flows it turns from
 * allowed to blocked are deleted, by their original tuple.
 */
import { isIP } from 'node:net';
import { runCommand } from '../exec.js';
import type { Crossing, HostAddresses, ScheduleEdge } from '../../compile/schedule-edges.js';
import { isOwnAddress } from '../../compile/firewall-decision.js';

interface Tuple {
  src: string;
  dst: string;
  sport: number;
  dport: number;
}

/** One conntrack entry: the original tuple (as the initiator sent it) and the reply tuple (after NAT). */
export interface TrackedFlow {
  family: 4 | 6;
  protocol: string;
  original: Tuple;
  reply: Tuple;
}

/** Parses `conntrack -L -o extended`: `ipv4 2 tcp 6 … src= dst= sport= dport= … src= dst= sport= dport= …`. */
export function parseTrackedFlows(text: string): TrackedFlow[] {
  const flows: TrackedFlow[] = [];
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== 'ipv4' && words[0] !== 'ipv6') continue;
    const tuples: Partial<Record<keyof Tuple, string>>[] = [];
    for (const word of words.slice(4)) {
      const eq = word.indexOf('=');
      if (eq < 0) continue;
      const key = word.slice(0, eq);
      if (key === 'src') tuples.push({});
      const tuple = tuples[tuples.length - 1];
      if (tuple && tuples.length <= 2 && (key === 'src' || key === 'dst' || key === 'sport' || key === 'dport') && tuple[key] === undefined) tuple[key] = word.slice(eq + 1);
    }
    if (tuples.length < 2 || tuples.some((t) => !t.src || !t.dst)) continue;
    const tuple = (t: Partial<Record<keyof Tuple, string>>): Tuple => ({ src: t.src!, dst: t.dst!, sport: Number(t.sport ?? 0), dport: Number(t.dport ?? 0) });
    flows.push({ family: words[0] === 'ipv4' ? 4 : 6, protocol: words[2], original: tuple(tuples[0]), reply: tuple(tuples[1]) });
  }
  return flows;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Where a route to an address goes: the firewall itself, an interface, or unknown (no route). */
export interface RouteTarget {
  local: boolean;
  iface: string | null;
}

/**
 * How the filter chains saw the flow: inbound after destination NAT (filter_in sits after it) on the interface
 * it arrived on, unless the firewall started it; outbound after source NAT on the one it left by, unless it is
 * addressed to the firewall.
 */
export function crossingsOf(flow: TrackedFlow, source: RouteTarget, destination: RouteTarget): Crossing[] {
  const { original, reply } = flow;
  const crossings: Crossing[] = [];
  if (!source.local) {
    crossings.push({ direction: 'in', iface: source.iface, protocol: flow.protocol, src: original.src, sport: original.sport, dst: reply.src, dport: reply.sport });
  }
  if (!destination.local) {
    crossings.push({ direction: 'out', iface: destination.iface, protocol: flow.protocol, src: reply.dst, sport: reply.dport, dst: reply.src, dport: reply.sport });
  }
  return crossings;
}

/** The firewall's own addresses by interface, from `ip -j addr show`. */
export async function readHostAddresses(ip: string, loopback: string): Promise<HostAddresses> {
  const byInterface = new Map<string, string[]>();
  const result = await runCommand(ip, ['-j', 'addr', 'show']);
  if (result.code === 0) {
    for (const link of (parseJson(result.stdout) as { ifname?: string; addr_info?: { local?: string }[] }[] | undefined) ?? []) {
      if (!link.ifname) continue;
      byInterface.set(link.ifname, (link.addr_info ?? []).map((a) => a.local ?? '').filter((a) => isIP(a)));
    }
  }
  return { loopback, byInterface };
}

/** `ip -j route get <address>`, once per address: a local route is the firewall's own address. */
export function routeLookup(ip: string, host: HostAddresses): (address: string) => Promise<RouteTarget> {
  const cache = new Map<string, Promise<RouteTarget>>();
  const lookup = async (address: string): Promise<RouteTarget> => {
    if (isOwnAddress(host, address)) return { local: true, iface: null };
    const result = await runCommand(ip, ['-j', 'route', 'get', address]);
    // No route (or output that is not JSON): the interface stays unknown, and rules naming one match.
    const [route] = result.code === 0 ? (parseJson(result.stdout) as { type?: string; dev?: string }[] | undefined) ?? [] : [];
    return { local: route?.type === 'local', iface: route?.dev ?? null };
  };
  return (address) => {
    let target = cache.get(address);
    if (!target) cache.set(address, (target = lookup(address)));
    return target;
  };
}

/** The flows `edge` cuts, read from the conntrack table; each is deleted by its original tuple. */
export async function cutStartedFlows(edge: ScheduleEdge, tools: { conntrack: string; ip: string; loopback: string }): Promise<TrackedFlow[]> {
  const listed = await runCommand(tools.conntrack, ['-L', '-o', 'extended']);
  if (listed.code !== 0) return [];
  const host = await readHostAddresses(tools.ip, tools.loopback);
  const route = routeLookup(tools.ip, host);
  const cut: TrackedFlow[] = [];
  for (const flow of parseTrackedFlows(listed.stdout)) {
    // Without interfaces first: most flows no started rule could match need no route lookup.
    const unrouted = crossingsOf(flow, { local: false, iface: null }, { local: false, iface: null });
    if (!unrouted.some((crossing) => edge.touches(crossing, host))) continue;
    const crossings = crossingsOf(flow, await route(flow.original.src), await route(flow.reply.src));
    if (!crossings.some((crossing) => edge.cuts(crossing, host))) continue;
    const { original } = flow;
    const ports = flow.protocol === 'tcp' || flow.protocol === 'udp' ? ['--sport', String(original.sport), '--dport', String(original.dport)] : [];
    await runCommand(tools.conntrack, ['-D', '-f', flow.family === 4 ? 'ipv4' : 'ipv6', '-p', flow.protocol, '-s', original.src, '-d', original.dst, ...ports]);
    cut.push(flow);
  }
  return cut;
}
