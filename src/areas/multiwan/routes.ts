import { Type, type Static } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { ErrorAnswer, MediaBodies, TEXT } from '../../http/documented-responses.js';
import { IdParams, StringEnum, Uuid } from '../../model/schema-helpers.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { LEAK_PORT_FIELDS, POLICY_PORT_FIELDS, withPortInput } from './port-fields.js';
import { AppliedRouting } from './applied-routing.js';
import { multiwanCollections, type MultiWanCollections } from './collections.js';
import { MultiWanDocument } from './export-import.js';
import { GatewayHealthStore } from './gateway-health-store.js';
import { GatewayMonitor } from './gateway-monitor.js';
import { GatewayGroups } from './groups.js';
import { RoutingInstances } from './instances.js';
import { RoutingApply } from './routing-apply.js';
import { RoutingRuleEdits } from './rule-edits.js';
import {
  BlastRadius, EnableFibsBody, FlowSummary, Gateway, GatewayEvent, GatewayHealth, Group, GroupCreate, GroupMemberBody, GroupMemberRecord,
  GroupUpdate, Instance, Leak, MemberBody, PreviewBody, ProbeNowBody, SlaSample,
} from './schema.js';

const tags = ['multiwan'];
const Message = Type.Object({ message: Type.String() });
const read = 'multiwan:read' as const;
const write = 'multiwan:write' as const;
const record = (schema: { properties: Record<string, unknown> }, extra: Record<string, unknown> = {}) =>
  Type.Object({ id: Type.String(), ...(schema.properties as Record<string, never>), ...(extra as Record<string, never>), created_at: Type.String(), updated_at: Type.String() });
const InstanceRecord = record(Instance);
const GatewayRecord = record(Gateway, GatewayHealth);
const GroupRecord = record(Group);
const LeakRecord = record(Leak);
const InstanceMemberRecord = Type.Object({ instance_id: Type.String(), interface: Type.String() });
const Active = Type.Object({ selection: StringEnum(['single', 'weighted', 'none']), gateways: Type.Array(Type.String()) });

/** The area's parts, each one concern (docs/multiwan.md "Code"). */
interface MultiWanParts {
  collections: MultiWanCollections;
  instances: RoutingInstances;
  health: GatewayHealthStore;
  monitor: GatewayMonitor;
  groups: GatewayGroups;
  edits: RoutingRuleEdits;
  routing: RoutingApply;
  document: MultiWanDocument;
}

/** Multi-WAN: instances, gateways and their health monitor, groups, policies, leaks and flows. */
export function createMultiwanArea(context: AppContext): Area & { gatewayHealth: GatewayHealthStore } {
  // A gateway's record carries its health, kept by the store declared just after its collection.
  const collections = multiwanCollections(context, (id) => health.healthView(id));
  const health = new GatewayHealthStore(context, collections.gateways);
  const routing = new RoutingApply(context, collections, new AppliedRouting(context, collections), health);
  const groups = new GatewayGroups(context, collections, health);
  const monitor = new GatewayMonitor(context, collections, health, groups, routing);
  let ticks: NodeJS.Timeout | undefined;
  // Once routing is applied, a change to what it is compiled from is applied at once (spec: writes recompile).
  const c = collections;
  context.models.onChanged([c.policies, c.leaks, c.groups, c.groupMembers, c.gateways, c.instanceMembers, c.instances], () => routing.reapplyAfterWrite());
  // A start puts back the routing last applied (after networking: gateways need their interfaces' addresses).
  context.restore.register({
    name: 'multiwan',
    daemon: context.platform.routing.dialect === 'nftables' ? 'nftables' : 'pf',
    enabled: () => routing.applied.hasApplied(),
    running: async () => routing.applied.inForce(),
    appliedVersion: () => routing.applied.get()?.version ?? null,
    restore: () => routing.applied.restore((source) => routing.apply({ source })),
  });
  return {
    name: 'multiwan',
    gatewayHealth: health,
    routes: routes({
      collections, health, routing, groups, monitor,
      instances: new RoutingInstances(context, collections), edits: new RoutingRuleEdits(context, collections), document: new MultiWanDocument(context, collections),
    }),
    start() {
      // Ten ticks a second probe the gateways that are due on the service clock (interval_ms goes down to 100).
      ticks = setInterval(() => void monitor.monitorTick(), 100);
      ticks.unref();
    },
    stop() {
      clearInterval(ticks);
    },
  };
}

function routes({ collections, instances, health, monitor, groups, edits, routing, document }: MultiWanParts): RouteSpec[] {
  const access = { read, write };
  return [
    ...collectionRoutes(collections.instances, { path: '/api/v1/multiwan/instances', access, tags, operations: ['list', 'read', 'update'] }),
    route({
      method: 'POST', path: '/api/v1/multiwan/instances', access: write, tags, summary: 'Create a routing instance (FIB below the kernel table count)',
      schema: { body: Type.Object({ ...Instance.properties }, { required: ['name', 'fib_number'], additionalProperties: false }), response: { 201: InstanceRecord } },
      handler: async (request, reply) => reply.status(201).send(collections.instances.toRecord(await instances.createInstance(request.body))),
    }),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/instances/{id}', access: write, tags, summary: 'Delete an instance (409: the default instance, or one still used)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        instances.deleteInstance(request.params.id);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/multiwan/instances/{id}/members', access: read, tags, summary: 'Interfaces pinned to the instance',
      schema: { params: IdParams(), response: { 200: Type.Array(InstanceMemberRecord) } },
      handler: (request) => instances.members(request.params.id),
    }),
    route({
      method: 'POST', path: '/api/v1/multiwan/instances/{id}/members', access: write, tags, summary: 'Pin an interface to the instance (moved from any other)',
      schema: { params: IdParams(), body: MemberBody, response: { 201: InstanceMemberRecord } },
      handler: async (request, reply) => reply.status(201).send(await instances.addMember(request.params.id, request.body.interface)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/instances/{id}/members/{iface}', access: write, tags, summary: 'Return an interface to the default table',
      schema: { params: Type.Object({ id: Uuid(), iface: Type.String({ maxLength: 32 }) }) },
      handler: async (request, reply) => {
        await instances.removeMember(request.params.id, request.params.iface);
        return reply.status(204).send();
      },
    }),
    {
      method: 'GET', path: '/api/v1/multiwan/fibs', access: read, tags, summary: 'Kernel routing tables and the ones instances use',
      schema: { response: { 200: Type.Object({ net_fibs: Type.Integer(), used: Type.Array(Type.Integer()), simulated: Type.Boolean() }) } },
      handler: () => instances.fibs(),
    },
    route({
      method: 'POST', path: '/api/v1/multiwan/enable-fibs', access: 'system:reboot', tags, summary: 'Make more routing tables available (may schedule a reboot)',
      schema: {
        body: EnableFibsBody,
        response: { 200: Type.Object({ message: Type.String(), net_fibs: Type.Integer(), already_enabled: Type.Boolean(), reboot_scheduled: Type.Boolean(), simulated: Type.Boolean() }) },
      },
      handler: (request) => {
        const body: Static<typeof EnableFibsBody> = request.body ?? { fibs: 16, reboot: false }; // the body may be left out
        return instances.enableFibs(body.fibs, body.reboot);
      },
    }),
    ...collectionRoutes(collections.gateways, { path: '/api/v1/multiwan/gateways', access, tags, operations: ['list', 'create', 'read', 'update'] }),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/gateways/{id}', access: write, tags, summary: 'Delete a gateway (409 while a group or policy uses it)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        health.deleteGateway(request.params.id);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/multiwan/gateways/{id}/sla', access: read, tags, summary: 'Per-minute SLA buckets, oldest first',
      schema: { params: IdParams(), querystring: Type.Object({ window: StringEnum(['24h', '7d', '30d'], { default: '24h' }) }), response: { 200: Type.Array(SlaSample) } },
      handler: (request) => health.sla(request.params.id, request.query.window),
    }),
    route({
      method: 'GET', path: '/api/v1/multiwan/gateways/{id}/events', access: read, tags, summary: 'State changes, newest 100',
      schema: { params: IdParams(), response: { 200: Type.Array(GatewayEvent) } },
      handler: (request) => health.events(request.params.id),
    }),
    route({
      method: 'POST', path: '/api/v1/multiwan/gateways/{id}/probe-now', access: write, tags,
      summary: 'Probe now through the platform, or inject the given sample ({success, rtt_ms, error})',
      schema: { params: IdParams(), body: Type.Optional(ProbeNowBody), response: { 200: GatewayRecord } },
      handler: async (request) => collections.gateways.toRecord(await monitor.probe(request.params.id, request.body ?? undefined)),
    }),
    ...collectionRoutes(collections.groups, { path: '/api/v1/multiwan/groups', access, tags, operations: ['list', 'read'] }),
    route({
      method: 'POST', path: '/api/v1/multiwan/groups', access: write, tags, summary: 'Create a gateway group',
      schema: { body: GroupCreate, response: { 201: GroupRecord } },
      handler: (request, reply) => reply.status(201).send(collections.groups.toRecord(groups.createGroup(request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/multiwan/groups/{id}', access: write, tags, summary: 'Change a group (fields not sent are kept)',
      schema: { params: IdParams(), body: GroupUpdate, response: { 200: GroupRecord } },
      handler: (request) => collections.groups.toRecord(groups.updateGroup(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/groups/{id}', access: write, tags, summary: 'Delete a group and its memberships (409 while a policy uses it)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        groups.deleteGroup(request.params.id);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/multiwan/groups/{id}/active', access: read, tags, summary: 'Gateways carrying traffic now',
      schema: { params: IdParams(), response: { 200: Active } },
      handler: (request) => groups.activeGateways(request.params.id),
    }),
    route({
      method: 'GET', path: '/api/v1/multiwan/groups/{id}/members', access: read, tags, summary: 'Members by tier, heaviest first',
      schema: { params: IdParams(), response: { 200: Type.Array(GroupMemberRecord) } },
      handler: (request) => groups.listGroupMembers(request.params.id),
    }),
    route({
      method: 'POST', path: '/api/v1/multiwan/groups/{id}/members', access: write, tags, summary: 'Add a gateway (or change its tier and weight)',
      schema: { params: IdParams(), body: GroupMemberBody, response: { 201: GroupMemberRecord } },
      handler: (request, reply) => reply.status(201).send(groups.upsertGroupMember(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/groups/{id}/members/{gw}', access: write, tags, summary: 'Remove a gateway from the group',
      schema: { params: Type.Object({ id: Uuid(), gw: Uuid() }) },
      handler: (request, reply) => {
        groups.removeGroupMember(request.params.id, request.params.gw);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'PUT', path: '/api/v1/multiwan/policies/reorder', access: write, tags, summary: 'Set priorities 1..n in the given order',
      schema: {
        body: Type.Object({ policy_ids: Type.Array(Uuid(), { maxItems: 10000 }) }, { required: ['policy_ids'], additionalProperties: false }),
        response: { 200: Message, 404: ErrorAnswer('A listed policy does not exist') },
      },
      handler: (request) => ({ message: `${edits.reorderPolicies(request.body.policy_ids)} policies reordered` }),
    }),
    ...withPortInput(collectionRoutes(collections.policies, { path: '/api/v1/multiwan/policies', access, tags }), POLICY_PORT_FIELDS),
    route({
      method: 'POST', path: '/api/v1/multiwan/policies/{id}/duplicate', access: write, tags, summary: 'Copy a policy (disabled, priority + 1, name-copy)',
      schema: { params: IdParams(), response: { 201: collections.policies.schemas.record } },
      handler: (request, reply) => reply.status(201).send(collections.policies.toRecord(edits.duplicatePolicy(request.params.id))),
    }),
    route({
      method: 'PUT', path: '/api/v1/multiwan/policies/{id}/toggle', access: write, tags, summary: 'Enable or disable a policy',
      schema: { params: IdParams(), body: Type.Object({ enabled: Type.Boolean() }, { required: ['enabled'], additionalProperties: false }), response: { 200: collections.policies.schemas.record } },
      handler: (request) => collections.policies.toRecord(edits.togglePolicy(request.params.id, request.body.enabled)),
    }),
    ...withPortInput(collectionRoutes(collections.leaks, { path: '/api/v1/multiwan/leaks', access, tags, operations: ['list', 'create'] }), LEAK_PORT_FIELDS),
    route({
      method: 'DELETE', path: '/api/v1/multiwan/leaks/{id}', access: write, tags, summary: 'Delete a leak (409 for management escapes)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        edits.deleteLeak(request.params.id);
        return reply.status(204).send();
      },
    }),
    {
      method: 'POST', path: '/api/v1/multiwan/leaks/seed-mgmt', access: write, tags, summary: 'Create the missing management-escape leaks',
      schema: { response: { 200: Type.Object({ message: Type.String(), created: Type.Integer() }) } },
      handler: () => ({ message: 'mgmt-escape leaks seeded', created: edits.seedMgmtLeaks() }),
    },
    {
      method: 'GET', path: '/api/v1/multiwan/flows', access: read, tags, summary: 'Live flows with routing table and interface (first 500)',
      schema: { response: { 200: Type.Array(FlowSummary) } },
      handler: () => edits.flows(),
    },
    route({
      method: 'POST', path: '/api/v1/multiwan/flows/{label}/migrate', access: write, tags, summary: 'Kill the states a rule label created, so they re-establish on the current route',
      schema: { params: Type.Object({ label: Type.String({ minLength: 1, maxLength: 128 }) }), response: { 200: Type.Object({ killed: Type.Integer() }) } },
      handler: (request) => edits.migrate(request.params.label),
    }),
    route({
      method: 'POST', path: '/api/v1/multiwan/preview', access: write, tags, summary: 'Dry-run compilation of proposed policies (nothing is applied)',
      schema: { body: PreviewBody, response: { 200: BlastRadius } },
      handler: (request) => routing.preview(request.body.policies),
    }),
    {
      method: 'POST', path: '/api/v1/multiwan/apply', access: write, tags, summary: 'Compile and load every policy-routing anchor',
      schema: { response: { 200: Type.Object({ message: Type.String(), rules: Type.Integer() }) } },
      handler: () => routing.apply(),
    },
    route({
      method: 'GET', path: '/api/v1/multiwan/config.yaml', access: read, tags, summary: 'Export the multi-WAN configuration as YAML (?format=json for JSON)',
      schema: {
        querystring: Type.Object({ format: StringEnum(['yaml', 'json'], { default: 'yaml' }) }),
        response: {
          200: MediaBodies('The export as YAML (default) or, with ?format=json, as JSON', {
            'application/yaml': TEXT,
            'application/json': Type.Record(Type.String(), Type.Array(Type.Object({}, { additionalProperties: true })), { description: 'instances, instance_members, gateways, groups, group_members, policies, leaks' }),
          }),
        },
      },
      handler: (request, reply) => {
        if (request.query.format === 'json') return document.exportDocument();
        return reply.type('application/yaml; charset=utf-8').header('content-disposition', 'attachment; filename="multiwan.yaml"').send(document.exportYaml());
      },
    }),
    route({
      method: 'POST', path: '/api/v1/multiwan/apply-yaml', access: write, tags,
      summary: 'Import an exported configuration: {"yaml": "<text>"} or the exported document as JSON; all or nothing',
      bodyLimit: 20 * 1024 * 1024,
      schema: {
        body: Type.Object({ yaml: Type.Optional(Type.String({ maxLength: 20 * 1024 * 1024 })) }, { additionalProperties: true }),
        response: { 200: Type.Object({ message: Type.String(), instances: Type.Integer(), gateways: Type.Integer(), groups: Type.Integer(), policies: Type.Integer(), leaks: Type.Integer() }) },
      },
      handler: (request) => document.importDocument(request.body),
    }),
  ];
}
