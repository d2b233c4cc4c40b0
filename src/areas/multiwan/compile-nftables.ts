/**
 * Multi-WAN on Linux (pure): policies and leaks become packet marks in a table of their own, `inet bulwark_mwan`
 * (never the packet filter's table), and each mark selects a routing table through an `ip rule`.
 *
 * - A routing instance is the kernel table of its FIB number (FIB 0 is `main`).
 * - Every enabled gateway gets a table of its own, GATEWAY_TABLE_BASE + its position (by id), holding
 *   `default via <next_hop> dev <interface>`; its mark is its table number.
 * - Leaks first, then active policies by priority: the first match sets the packet mark (and, for a new
 *   connection, a conntrack mark naming the rule's label, so /flows and migrate find its connections) and
 *   ends the chain. Only packets of the connection's original direction are steered; replies follow `main`.
 * - Gateway marks carry bit 16; `ip rule fwmark 0x10000/0x10000 lookup main suppress_prefixlength 0` runs
 *   first, so connected and static routes still win and a policy steers only what would take the default route.
 * - Weighted groups hash the flow (`jhash`, source only when sticky is src) onto the members' marks in
 *   proportion to their weights, so a connection stays on one gateway. The hash's seed comes from the policy's
 *   id: without one the kernel draws a new seed at every load, and each re-apply would move flows and sticky
 *   sources to other gateways.
 */
import type { ConfigData } from '../../store/config-store.js';
import { sha256Hex } from '../../core/crypto.js';
import { nftToken as token } from '../../compile/nft-mwan.js';
import { selectGateways, type CompileInput } from './compile.js';
import {
  GATEWAY_MARK_BIT, GATEWAY_TABLE_BASE, LABEL_MARK_BASE, MAIN_TABLE, MWAN_TABLE, RULE_PRIORITY,
  type GatewayTable, type IpRuleSpec, type LinuxRoutingPlan, type TableRoute,
} from '../../platform/routing.js';

export interface LinuxCompileInput extends CompileInput {
  leaks: (ConfigData & { id: string })[];
  /** Interface → instance id (pinned members). */
  members: CompileInput['members'];
  instanceMembers: { instance_id: string; interface: string }[];
}

const instanceTable = (instance: ConfigData): number => (Number(instance.fib_number) === 0 ? MAIN_TABLE : Number(instance.fib_number));
const hex = (value: number) => `0x${value.toString(16).padStart(8, '0')}`;
/** A weighted policy's `jhash` seed: the same at every load of the same policy (32 bits of its id's digest). */
const hashSeed = (id: string) => `0x${sha256Hex(id).slice(0, 8)}`;

/** The match words of a policy or leak, for the families it applies to. */
/** Which fields of a policy or leak hold its source and destination (a leak has only one of them). */
interface AddressFields {
  src: string | null;
  dst: string | null;
}

function matchWords(entry: ConfigData, family: 4 | 6 | null, fields: AddressFields): string[] {
  const words: string[] = [];
  if (family) words.push(`meta nfproto ipv${family}`);
  const ipWord = family === 6 ? 'ip6' : 'ip';
  for (const [field, direction] of [[fields.src, 'saddr'], [fields.dst, 'daddr']] as const) {
    if (field === null) continue;
    const value = entry[field];
    if (value === undefined || value === null || value === 'any') continue;
    words.push(`${ipWord} ${direction} ${token('address', value, field)}`);
  }
  if (entry.protocol && entry.protocol !== 'any') words.push(`meta l4proto ${token('protocol', entry.protocol, 'protocol')}`);
  return words;
}

const portWords = (entry: ConfigData, fields: [string, 'sport' | 'dport'][]) =>
  fields.filter(([field]) => entry[field]).map(([field, direction]) => `th ${direction} ${token('port', entry[field], field)}`);

/** Families a policy can match: its ip_version, narrowed by its addresses and its gateway's family. */
function familiesOf(entry: ConfigData, fields: AddressFields, only?: 4 | 6): (4 | 6)[] {
  let families: (4 | 6)[] = entry.ip_version === 'v4' ? [4] : entry.ip_version === 'v6' ? [6] : [4, 6];
  for (const field of [fields.src, fields.dst]) {
    if (field === null) continue;
    const value = String(entry[field] ?? 'any');
    if (value !== 'any') families = families.filter((f) => (value.includes(':') ? f === 6 : f === 4));
  }
  return only ? families.filter((f) => f === only) : families;
}

export function compileLinuxRouting(input: LinuxCompileInput): LinuxRoutingPlan {
  const gateways: GatewayTable[] = [...input.gateways.values()]
    .filter((g) => g.enabled !== false)
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((g, index) => ({
      gateway_id: g.id, table: GATEWAY_TABLE_BASE + index, interface: token('interface', g.interface, 'gateway interface'),
      next_hop: token('host', g.next_hop, 'gateway next_hop'), family: g.ip_version === 'v6' ? 6 : 4,
    }));
  const tableOf = new Map(gateways.map((g) => [g.gateway_id, g]));
  const lines: string[] = [];
  const labels: LinuxRoutingPlan['labels'] = {};
  const marksInOrder: number[] = [];
  const useTable = (table: number) => {
    if (!marksInOrder.includes(table)) marksInOrder.push(table);
  };
  const membersOf = (instanceId: string) => input.instanceMembers.filter((m) => m.instance_id === instanceId).map((m) => token('interface', m.interface, 'instance member'));
  const ifaceSet = (names: string[]) => (names.length === 1 ? `"${names[0]}"` : `{ ${names.map((n) => `"${n}"`).join(', ')} }`);
  /** The two lines of one steering rule: name the new connection, then set the packet's mark and stop. */
  const steer = (label: string, match: string[], mark: string, table: number | null) => {
    const labelMark = LABEL_MARK_BASE + Object.keys(labels).length + 1;
    if (!(label in labels)) labels[label] = { mark: labelMark, table: table ?? -1 };
    const head = ['ct direction original', ...match].join(' ');
    lines.push(`${head} ct mark 0x00000000 ct mark set ${hex(labels[label].mark)} comment "${token('label', label, 'label')}"`);
    lines.push(`${head} meta mark set ${mark} accept comment "${token('label', label, 'label')}"`);
  };

  for (const leak of input.leaks.filter((l) => l.enabled !== false)) {
    const dst = input.instances.get(String(leak.dst_instance_id));
    const src = input.instances.get(String(leak.src_instance_id));
    if (!dst || !src) continue;
    const fields: AddressFields = { src: null, dst: 'prefix' };
    const ports = portWords(leak, [['ports', 'dport']]);
    const from = membersOf(String(leak.src_instance_id));
    if (from.length) {
      for (const family of familiesOf(leak, fields)) {
        steer(`leak:${leak.id}`, [`iifname ${ifaceSet(from)}`, ...matchWords(leak, family, fields), ...ports], String(instanceTable(dst)), instanceTable(dst));
      }
      useTable(instanceTable(dst));
    }
    const back = membersOf(String(leak.dst_instance_id));
    if (leak.direction === 'bidirectional' && back.length) {
      const reverse: AddressFields = { src: 'prefix', dst: null };
      for (const family of familiesOf(leak, reverse)) {
        steer(`leak:${leak.id}:rev`, [`iifname ${ifaceSet(back)}`, ...matchWords(leak, family, reverse), ...ports], String(instanceTable(src)), instanceTable(src));
      }
      useTable(instanceTable(src));
    }
  }

  const policies = input.policies.filter((p) => p.status === 'active').sort((a, b) => Number(a.priority) - Number(b.priority));
  const fields: AddressFields = { src: 'src_addr', dst: 'dst_addr' };
  for (const policy of policies) {
    const label = `pbr:${policy.id}`;
    const inbound = policy.iface_in ? [`iifname "${token('interface', policy.iface_in, 'policy iface_in')}"`] : [];
    const ports = portWords(policy, [['src_port', 'sport'], ['dst_port', 'dport']]);
    const toGateways = (chosen: GatewayTable[], weights: number[], sticky: unknown) => {
      const family = chosen[0].family;
      for (const f of familiesOf(policy, fields, family)) {
        const match = [...inbound, ...matchWords(policy, f, fields), ...ports];
        if (chosen.length === 1) {
          steer(label, match, String(chosen[0].table), chosen[0].table);
        } else {
          const total = weights.reduce((a, b) => a + b, 0);
          let start = 0;
          const entries = chosen.map((g, i) => {
            const range = `${start}-${start + weights[i] - 1}`;
            start += weights[i];
            return `${range} : ${g.table}`;
          });
          const ipWord = f === 6 ? 'ip6' : 'ip';
          const key = sticky === 'src' ? `${ipWord} saddr` : `${ipWord} saddr . ${ipWord} daddr`;
          steer(label, match, `jhash ${key} mod ${total} seed ${hashSeed(policy.id)} map { ${entries.join(', ')} }`, null);
        }
      }
      for (const g of chosen) useTable(g.table);
    };
    if (policy.action_kind === 'set_instance') {
      const instance = input.instances.get(String(policy.target_id));
      if (!instance) continue;
      for (const f of familiesOf(policy, fields)) steer(label, [...inbound, ...matchWords(policy, f, fields), ...ports], String(instanceTable(instance)), instanceTable(instance));
      useTable(instanceTable(instance));
    } else if (policy.action_kind === 'set_gateway') {
      const gateway = tableOf.get(String(policy.target_id));
      if (gateway) toGateways([gateway], [1], 'none');
    } else if (policy.action_kind === 'set_group') {
      const group = input.groups.get(String(policy.target_id));
      if (!group) continue;
      const selection = selectGateways(group, input.members.filter((m) => m.group_id === policy.target_id), input.gateways);
      const chosen = selection.gateways.map((id) => tableOf.get(id)).filter((g): g is GatewayTable => g !== undefined);
      // One family per rule: members of the first member's family carry it.
      const sameFamily = chosen.filter((g) => g.family === chosen[0]?.family);
      if (sameFamily.length) toGateways(sameFamily, sameFamily.map((g) => Math.max(1, selection.weights[chosen.indexOf(g)] ?? 1)), group.sticky);
    }
  }

  const rules: IpRuleSpec[] = [];
  if (gateways.length) rules.push({ priority: RULE_PRIORITY.suppress, selector: ['fwmark', `${hex(GATEWAY_MARK_BIT)}/${hex(GATEWAY_MARK_BIT)}`], table: MAIN_TABLE, suffix: ['suppress_prefixlength', '0'] });
  marksInOrder.forEach((table, index) => rules.push({ priority: RULE_PRIORITY.marks + index, selector: ['fwmark', hex(table)], table }));
  const pinned = [...input.instanceMembers].sort((a, b) => a.interface.localeCompare(b.interface));
  pinned.forEach((member, index) => {
    const instance = input.instances.get(member.instance_id);
    if (instance && instanceTable(instance) !== MAIN_TABLE) rules.push({ priority: RULE_PRIORITY.members + index, selector: ['iif', token('interface', member.interface, 'instance member')], table: instanceTable(instance) });
  });
  const routes: TableRoute[] = gateways.map((g) => ({ table: g.table, family: g.family, destination: 'default', via: g.next_hop, dev: g.interface }));
  const nft = [
    `table inet ${MWAN_TABLE} {}`,
    `delete table inet ${MWAN_TABLE}`,
    `table inet ${MWAN_TABLE} {`,
    '\tchain steer {',
    '\t\ttype filter hook prerouting priority mangle; policy accept;',
    ...lines.map((line) => `\t\t${line}`),
    '\t}',
    '}',
    '',
  ].join('\n');
  return { nft, ruleLines: lines, rules, routes, gateways, labels };
}


/** A chain line without its label comment and conntrack mark, so a proposal compares with the stored compile by meaning. */
export const withoutNftLabel = (line: string): string => line.replace(/ ct mark set 0x[0-9a-f]+/, '').replace(/ comment "[^"]*"$/, '');
