import type { ConfigData } from '../../store/config-store.js';
import { pfAnchorToken as token } from '../../compile/pf-anchor.js';

export interface GatewayView extends ConfigData {
  id: string;
  state: string;
  last_mos: number | null;
}

export interface MemberView {
  group_id: string;
  gateway_id: string;
  tier: number;
  weight: number;
}

export type Selection = { selection: 'single' | 'weighted' | 'none'; gateways: string[]; weights: number[] };

/**
 * Which members of a group carry traffic now: healthy (enabled, up or warning) members of the lowest healthy
 * tier; failover takes the heaviest (up before warning), the balancing policies take them all (adaptive
 * scales each weight by the gateway's MOS).
 */
export function selectGateways(group: ConfigData, members: MemberView[], gateways: Map<string, GatewayView>): Selection {
  const healthy = members
    .map((member) => ({ member, gateway: gateways.get(member.gateway_id) }))
    .filter((entry): entry is { member: MemberView; gateway: GatewayView } =>
      !!entry.gateway && entry.gateway.enabled !== false && (entry.gateway.state === 'up' || entry.gateway.state === 'warning'));
  if (healthy.length === 0) return { selection: 'none', gateways: [], weights: [] };
  const tier = Math.min(...healthy.map((entry) => entry.member.tier));
  const candidates = healthy.filter((entry) => entry.member.tier === tier);
  if (group.policy === 'failover') {
    const best = [...candidates].sort((a, b) => b.member.weight - a.member.weight || (a.gateway.state === 'up' ? -1 : 1) - (b.gateway.state === 'up' ? -1 : 1))[0];
    return { selection: 'single', gateways: [best.gateway.id], weights: [best.member.weight] };
  }
  const weights = candidates.map((entry) => {
    const weight = Math.max(1, entry.member.weight);
    if (group.policy !== 'adaptive') return weight;
    const mos = Math.min(4.5, Math.max(1, entry.gateway.last_mos ?? 3.5));
    return weight * Math.max(1, Math.floor((mos - 1) * 10));
  });
  return { selection: 'weighted', gateways: candidates.map((entry) => entry.gateway.id), weights };
}

export interface CompileInput {
  policies: (ConfigData & { id: string })[];
  instances: Map<string, ConfigData>;
  gateways: Map<string, GatewayView>;
  groups: Map<string, ConfigData>;
  members: MemberView[];
}

const af = (policy: ConfigData) => (policy.ip_version === 'v4' ? ' inet' : policy.ip_version === 'v6' ? ' inet6' : '');
const proto = (policy: ConfigData) => (policy.protocol && policy.protocol !== 'any' ? ` proto ${token('protocol', policy.protocol, 'policy protocol')}` : '');
const ports = (policy: ConfigData) =>
  `${policy.src_port ? ` port ${token('port', policy.src_port, 'policy src_port')}` : ''}${policy.dst_port ? ` port ${token('port', policy.dst_port, 'policy dst_port')}` : ''}`;
const addresses = (policy: ConfigData) => `from ${token('address', policy.src_addr ?? 'any', 'policy src_addr')} to ${token('address', policy.dst_addr ?? 'any', 'policy dst_addr')}`;
/** `(interface next-hop)` of a gateway. */
const hop = (gateway: ConfigData) => `(${token('interface', gateway.interface, 'gateway interface')} ${token('host', gateway.next_hop, 'gateway next_hop')})`;
const label = (text: string) => `label "${token('label', text, 'label')}"`;

/**
 * Policy-routing rules in pf syntax (wire-format §4.5): anchor `pbr` steers traffic, anchor `mwan-reply`
 * keeps replies on the interface they arrived on. Only active policies compile; order is by priority.
 */
export function compilePolicies(input: CompileInput): { pbr: string[]; reply: string[] } {
  const pbr: string[] = [];
  const reply: string[] = [];
  const policies = input.policies.filter((p) => p.status === 'active').sort((a, b) => Number(a.priority) - Number(b.priority));
  for (const policy of policies) {
    const name = `pbr:${policy.id}`;
    const head = `${af(policy)}${proto(policy)} ${addresses(policy)}`;
    const inbound = policy.iface_in ? ` on ${token('interface', policy.iface_in, 'policy iface_in')}` : '';
    const gatewayPair = (gateway: ConfigData, suffix: string) => {
      pbr.push(`pass out quick on ${token('interface', gateway.interface, 'gateway interface')}${head}${ports(policy)} route-to ${hop(gateway)} keep state (if-bound) ${label(`${name}${suffix}`)}`);
      reply.push(`pass in quick${inbound}${head}${ports(policy)} reply-to ${hop(gateway)} keep state (if-bound) ${label(`${name}${suffix}:rep`)}`);
    };
    if (policy.action_kind === 'set_instance') {
      const instance = input.instances.get(String(policy.target_id));
      if (!instance || !policy.iface_in) continue;
      pbr.push(`pass in quick${inbound}${head}${ports(policy)} rtable ${token('number', instance.fib_number, 'instance fib_number')} keep state (if-bound) ${label(name)}`);
    } else if (policy.action_kind === 'set_gateway') {
      const gateway = input.gateways.get(String(policy.target_id));
      if (gateway) gatewayPair(gateway, '');
    } else if (policy.action_kind === 'set_group') {
      const group = input.groups.get(String(policy.target_id));
      if (!group) continue;
      const members = input.members.filter((m) => m.group_id === policy.target_id);
      const selection = selectGateways(group, members, input.gateways);
      if (selection.selection === 'single') {
        gatewayPair(input.gateways.get(selection.gateways[0])!, '');
      } else if (selection.selection === 'weighted') {
        const chosen = selection.gateways.map((id) => input.gateways.get(id)!);
        const routes = chosen.map((g, i) => `${hop(g)} weight ${token('number', selection.weights[i], 'member weight')}`).join(', ');
        const sticky = group.sticky === 'src' ? ' sticky-address' : '';
        pbr.push(`pass out quick on ${token('interface', chosen[0].interface, 'gateway interface')}${head} route-to { ${routes} } round-robin${sticky} keep state (if-bound) ${label(`${name}:grp`)}`);
        reply.push(`pass in quick${inbound}${head} reply-to ${hop(chosen[0])} keep state (if-bound) ${label(`${name}:grp:rep`)}`);
      }
    }
  }
  return { pbr, reply };
}

/** Route leaks between instances (anchor `mwan-leak`). */
export function compileLeaks(leaks: (ConfigData & { id: string })[], instances: Map<string, ConfigData>): string[] {
  const lines: string[] = [];
  for (const leak of leaks.filter((l) => l.enabled !== false)) {
    const dst = instances.get(String(leak.dst_instance_id));
    if (!dst) continue;
    const p = leak.protocol && leak.protocol !== 'any' ? ` proto ${token('protocol', leak.protocol, 'leak protocol')}` : '';
    const port = leak.ports ? ` port ${token('port', leak.ports, 'leak ports')}` : '';
    const prefix = token('address', leak.prefix, 'leak prefix');
    lines.push(`pass quick${p} from any to ${prefix}${port} rtable ${token('number', dst.fib_number, 'instance fib_number')} keep state (if-bound) ${label(`leak:${leak.id}`)}`);
    const src = instances.get(String(leak.src_instance_id));
    if (leak.direction === 'bidirectional' && src) {
      lines.push(`pass quick${p} from ${prefix} to any${port} rtable ${token('number', src.fib_number, 'instance fib_number')} keep state (if-bound) ${label(`leak:${leak.id}:rev`)}`);
    }
  }
  return lines;
}

/** A rule without its label, so a proposal can be compared with the current compile by meaning. */
export const withoutLabel = (line: string): string => line.replace(/ label "[^"]*"$/, '');
