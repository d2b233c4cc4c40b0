/**
 * The multi-WAN area's stored collections (instances, gateways, groups, policies, leaks and their members) and
 * what each validates on write.
 */
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import { parseCidr } from '../../net/address.js';
import { isCidr } from '../../render/grammar.js';
import { probeFieldProblem, type ProbeKind } from '../../platform/probe-arguments.js';
import { adminDestinationProblem } from '../../net/admin-allow-list.js';
import { allowListOf } from '../../net/special-addresses.js';
import { Gateway, GatewayHealth, Group, GroupMember, Instance, InstanceMember, Leak, Policy } from './schema.js';
import { LEAK_PORT_FIELDS, normalisePortField, POLICY_PORT_FIELDS } from './port-fields.js';
import { probeAllowList, probeHost } from './gateway-monitor.js';
import type { HealthView } from './gateway-health-store.js';
import type { RoutingObjects } from './applied-routing.js';

/** One collection per list routing is compiled from (the names of RoutingObjects). */
export type MultiWanCollections = Record<keyof RoutingObjects, CollectionModel>;

function checkAddress(value: unknown, field: string): void {
  if (value === undefined || value === null || value === 'any') return;
  if (!isCidr(String(value))) throw badRequest(`body.${field}: "${String(value)}" is not an IP address, CIDR or any`);
}

/** Declares the collections; a gateway's record carries its live health (`healthOf`). */
export function multiwanCollections(context: AppContext, healthOf: (gatewayId: string) => HealthView): MultiWanCollections {
  const { models } = context;
  const writeAccess = 'multiwan:write';
  // Names a person reads (instances, gateways, groups) are unique regardless of case.
  const name = { field: 'name', caseInsensitive: true } as const;
  const instances = models.collection({ kind: 'mw_instance', noun: 'routing instance', writeAccess, schema: Instance, unique: [name, 'fib_number'] });
  const instanceMembers = models.collection({
    kind: 'mw_instance_member', noun: 'instance member', writeAccess, schema: InstanceMember, references: [{ field: 'instance_id', kind: 'mw_instance' }],
  });
  const gateways = models.collection({
    kind: 'mw_gateway', noun: 'gateway', writeAccess, schema: Gateway, unique: [name],
    references: [{ field: 'instance_id', kind: 'mw_instance' }],
    computed: { schema: GatewayHealth, add: (object) => healthOf(object.id) },
    validate: (data) => {
      const hop = isCidr(String(data.next_hop)) ? parseCidr(String(data.next_hop)) : null;
      if (!hop || hop.prefix !== undefined) throw badRequest(`body.next_hop: "${String(data.next_hop)}" is not an IP address`);
      if ((hop.family === 6) !== (data.ip_version === 'v6')) throw badRequest('body.next_hop does not match ip_version');
      // Values that reach ping's and dig's argument vectors (and the probe's connections): one grammar each.
      const problem = probeFieldProblem({
        kind: (data.monitor_kind ?? 'icmp') as ProbeKind, target: (data.monitor_target as string | null) ?? null,
        expect: (data.monitor_expect as string | null) ?? null, interface: String(data.interface),
      });
      if (problem) throw badRequest(`body.${problem.field} ${problem.message}`);
      // tcp, http and dns monitor connect: a literal special address needs the administrator's allow-list.
      const host = probeHost(data);
      if (host !== null && !allowListOf(probeAllowList(data, context.store)).check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4')) {
        const refused = adminDestinationProblem(host, context.store);
        if (refused) throw badRequest(`body.monitor_target: ${refused}`);
      }
    },
  });
  const groups = models.collection({ kind: 'mw_group', noun: 'gateway group', writeAccess, schema: Group, unique: [name] });
  const groupMembers = models.collection({
    kind: 'mw_group_member', noun: 'group member', writeAccess, schema: GroupMember,
    references: [{ field: 'group_id', kind: 'mw_group' }, { field: 'gateway_id', kind: 'mw_gateway' }],
  });
  const target = (kind: string, actionKind: string) => ({
    field: 'target_id', kind, values: (data: ConfigData) => (data.action_kind === actionKind ? [data.target_id] : []),
  });
  const policies = models.collection({
    kind: 'mw_policy', noun: 'policy', writeAccess, schema: Policy,
    references: [target('mw_instance', 'set_instance'), target('mw_gateway', 'set_gateway'), target('mw_group', 'set_group')],
    validate: (data) => {
      checkAddress(data.src_addr, 'src_addr');
      checkAddress(data.dst_addr, 'dst_addr');
      // Requests are normalised by the routes (port-fields.ts); an import brings stored tokens, checked here.
      for (const field of POLICY_PORT_FIELDS) normalisePortField(data[field], field);
    },
  });
  const leaks = models.collection({
    kind: 'mw_leak', noun: 'route leak', writeAccess, schema: Leak,
    references: [{ field: 'src_instance_id', kind: 'mw_instance' }, { field: 'dst_instance_id', kind: 'mw_instance' }],
    validate: (data) => {
      checkAddress(data.prefix, 'prefix');
      for (const field of LEAK_PORT_FIELDS) normalisePortField(data[field], field);
    },
  });
  return { instances, instanceMembers, gateways, groups, groupMembers, policies, leaks };
}
