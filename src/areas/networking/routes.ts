import { Type } from 'typebox';
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { IdParams } from '../../model/schema-helpers.js';
import { parseIpv4Cidr } from '../../core/ip.js';
import { isSpecialAddress } from '../../net/special-addresses.js';
import {
  DDNS_POLL_DEFAULT_SECS, DdnsConfig, DdnsRecord, DdnsStatusFields, DdnsUpdateResult, InterfaceConfigBody, InterfaceConfigQuery, InterfaceConfigResult, InterfaceDetail, InterfaceStats,
  InterfaceSummary, NameParams, RoleBody, RoleView, StaticRoute, SystemRouteView, Vlan,
} from './schema.js';
import { managementCut } from './management-cut.js';
import { ipBatchWord } from '../../render/system/ip-batch.js';
import { DdnsPoller } from './ddns-poller.js';
import { DNS_PROVIDER_KIND, NET_KINDS, NetworkingService, validateDdnsRecord, validateRouteFields, validateVlanFields, vlanDevice } from './service.js';

const TAGS = ['networking'];
const READ = 'interfaces:read' as const;
const WRITE = 'interfaces:write' as const;

/** Reads the host's interfaces before a write whose (synchronous) validation names one. */
function refreshingFirst(routes: RouteSpec[], refresh: () => Promise<unknown>): RouteSpec[] {
  return routes.map((route) => (route.method === 'GET' ? route : {
    ...route,
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      await refresh();
      return route.handler(request, reply);
    },
    // A change set making this write reads the interfaces first too.
    ...(route.change ? { change: { ...route.change, prepare: refresh } } : {}),
  }));
}

function routes(context: AppContext): { list: RouteSpec[]; net: NetworkingService } {
  const { models, platform } = context;
  let net: NetworkingService;
  const vlans = models.collection({
    kind: NET_KINDS.vlan, noun: 'VLAN', writeAccess: WRITE, schema: Vlan,
    validate: (data, ctx) => {
      validateVlanFields(data);
      const clash = ctx.store.list(NET_KINDS.vlan).find((o) => o.id !== ctx.existing?.id && o.data.vlan_id === data.vlan_id);
      if (clash) throw conflict(`VLAN ${String(data.vlan_id)} already exists (device ${vlanDevice(data.vlan_id)}, parent ${String(clash.data.parent)})`);
      if (net.known.length > 0 && !net.known.some((i) => i.name === data.parent)) throw badRequest(`body.parent: interface ${String(data.parent)} does not exist`);
      const owner = net.known.find((i) => i.name === vlanDevice(data.vlan_id));
      if (owner && owner.vlan_parent !== data.parent) throw badRequest(`body.vlan_id: device ${owner.name} already exists on this host and is not this VLAN`);
      if (ctx.existing && ctx.existing.data.vlan_id !== data.vlan_id) net.assertVlanUnused(ctx.existing);
    },
    beforeRemove: (vlan) => net.assertVlanUnused(vlan),
  });
  const staticRoutes = models.collection({
    kind: NET_KINDS.route, noun: 'static route', writeAccess: WRITE, schema: StaticRoute,
    validate: (data, ctx) => {
      validateRouteFields(data);
      if (data.interface) net.assertInterface(String(data.interface), 'body.interface');
      const clash = ctx.store.list(NET_KINDS.route).find((o) => o.id !== ctx.existing?.id && o.data.destination === data.destination && o.data.fib === data.fib);
      if (clash) throw conflict(`a static route to ${String(data.destination)} in table ${String(data.fib)} already exists`);
    },
  });
  const ddnsConfig = models.singleton({
    kind: NET_KINDS.ddnsConfig, noun: 'dynamic DNS configuration', writeAccess: 'settings:write', schema: DdnsConfig,
    validate: (data) => {
      for (const field of ['ip_echo_url_v4', 'ip_echo_url_v6']) {
        let url: URL;
        try {
          url = new URL(String(data[field]));
        } catch {
          throw badRequest(`body.${field} is not a URL`);
        }
        if (url.protocol !== 'https:') throw badRequest(`body.${field} must be an https URL`);
        const host = url.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) && isSpecialAddress(host) && !(data.allow_private_echo as string[]).length) throw badRequest(`body.${field} points at a private or special address`);
      }
    },
  });
  const ddnsRecords = models.collection({
    kind: NET_KINDS.ddnsRecord, noun: 'dynamic DNS record', writeAccess: 'settings:write', schema: DdnsRecord,
    references: [{ field: 'provider_id', kind: DNS_PROVIDER_KIND }],
    validate: (data, ctx) => {
      validateDdnsRecord(data, ctx.existing, ctx.store.list(NET_KINDS.ddnsRecord));
      if (data.interface) net.assertInterface(String(data.interface), 'body.interface');
    },
    computed: { schema: DdnsStatusFields, add: (object) => ({ provider_name: net.providerName(String(object.data.provider_id)), ...net.ddnsState(object.id) }) },
  });
  net = new NetworkingService(context, { vlans, routes: staticRoutes, ddnsRecords, ddnsConfig });
  const refresh = () => net.refreshKnown();
  // The kernel follows each static-route and VLAN write: the old one leaves, the new one (when enabled)
  // arrives. A refusal puts the kernel and the stored object back as they were, then answers 409.
  // A whole-configuration replacement (restore, import, rollback) carries no objects: the applier below follows it.
  models.onChanged([staticRoutes], async ({ objects }) => {
    for (const change of objects) {
      await net.followWrite(NET_KINDS.route, change, (data, present) => net.syncRoute(data, present));
      net.recordFollowed(NET_KINDS.route, change);
    }
  });
  models.onChanged([vlans], async ({ objects }) => {
    for (const change of objects) {
      await net.followWrite(NET_KINDS.vlan, change, (data, present) => net.syncVlan(data, present));
      net.recordFollowed(NET_KINDS.vlan, change);
    }
  });
  // Every apply (reload, restore, import, the commit-confirm rollback) puts addresses, VLANs and routes back as stored.
  context.apply.register('networking', () => net.applyAll());
  // A start of Bulwark puts back what was applied (the applied record), never stored edits not yet applied.
  context.restore.register({
    name: 'networking', daemon: 'iproute2',
    enabled: () => net.hasApplied(),
    running: () => net.appliedInKernel(),
    appliedVersion: () => net.appliedVersion(),
    restore: () => net.restoreApplied(),
  });
  const access = { read: READ, write: WRITE };
  const ddnsAccess = { read: 'settings:read', write: 'settings:write' } as const;

  const list: RouteSpec[] = [
    {
      method: 'GET', path: '/api/v1/interfaces', access: READ, tags: TAGS, summary: 'Interfaces (pseudo-devices and loopback left out)',
      schema: { response: { 200: Type.Array(InterfaceSummary) } },
      handler: async () => (await net.detailed())
        .filter((i) => i.name !== 'lo' && !String(i.name).startsWith('lo'))
        .map((i) => ({ name: i.name, ipv4: i.ipv4, ipv6: i.ipv6, status: i.status, mac: i.mac, role: i.role })),
    },
    {
      method: 'GET', path: '/api/v1/interfaces/detailed', access: READ, tags: TAGS, summary: 'Interfaces with addresses, settings, role and counters',
      schema: { response: { 200: Type.Array(InterfaceDetail) } },
      handler: () => net.detailed(),
    },
    route({
      method: 'GET', path: '/api/v1/interfaces/config/{name}', access: READ, tags: TAGS, summary: 'One interface as /interfaces/detailed shows it',
      schema: { params: NameParams, response: { 200: InterfaceDetail } },
      handler: async (request) => {
        const { name } = request.params;
        const found = (await net.detailed()).find((i) => i.name === name);
        if (!found) throw notFound(`interface ${name} not found`);
        return found;
      },
    }),
    route({
      method: 'PUT', path: '/api/v1/interfaces/config/{name}', access: WRITE, tags: TAGS, summary: 'Configure an interface (addressing, MTU, up/down, description)',
      schema: { params: NameParams, querystring: InterfaceConfigQuery, body: InterfaceConfigBody, response: { 200: InterfaceConfigResult } },
      handler: async (request) => {
        const { name } = request.params;
        const body = request.body;
        await refresh();
        const iface = net.assertKnownInterface(name);
        // iproute2 cannot carry every character in a description (ip-batch.ts): the client hears which field.
        if (platform.name === 'linux' && body.description) {
          try {
            ipBatchWord(body.description, 'body.description');
          } catch {
            throw badRequest('body.description: a newline, control character, # or " cannot be applied to a linux interface');
          }
        }
        const merged = { ...(net.storedConfig(name) ?? {}), ...body };
        // An address sent alone changes the address of the mode stored (static when none is).
        const change = body.ipv4_address !== undefined && body.ipv4_mode === undefined ? { ...body, ipv4_mode: (merged.ipv4_mode as 'static' | 'none' | 'dhcp' | undefined) ?? 'static' } : body;
        const cut = iface && managementCut(iface, change, request.socket.localAddress);
        if (cut && request.query.confirm_management_cut !== true) {
          throw conflict(`this change ${cut} (the address this request reached); send ?confirm_management_cut=true to apply it anyway`);
        }
        if (merged.ipv4_mode === 'static' && !parseIpv4Cidr(String(merged.ipv4_address ?? ''))) throw badRequest('body.ipv4_address must be an IPv4 CIDR (e.g. 192.168.1.1/24) when ipv4_mode is static');
        if (body.gateway && isIP(String(body.gateway)) !== 4) throw badRequest('body.gateway must be an IPv4 address');
        if (body.ipv6_address) {
          const [address, prefix] = String(body.ipv6_address).split('/');
          if (isIP(address) !== 6 || (prefix !== undefined && !(Number(prefix) >= 0 && Number(prefix) <= 128))) throw badRequest('body.ipv6_address must be an IPv6 address, optionally with a prefix');
        }
        // Applied first: a refusal (409) leaves both the interface and its stored settings as they were.
        const outcome = await platform.network.configureInterface(name, change);
        const saved = net.saveConfig(name, body);
        if (outcome.applied) net.recordInterface(name, saved);
        if (body.gateway && outcome.applied) {
          const defaultRoute = (await platform.network.routes(0)).find((r) => r.destination === 'default');
          // The gateway moves the default route only if this interface owns it or none exists.
          if (!defaultRoute || defaultRoute.interface === name) await platform.network.setStaticRoute({ destination: 'default', gateway: String(body.gateway), interface: name, metric: 0, table: 0 }, true);
        }
        return { message: outcome.message, applied: outcome.applied, simulated: platform.simulated };
      },
    }),
    route({
      method: 'GET', path: '/api/v1/interfaces/{name}/stats', access: READ, tags: TAGS, summary: 'Live counters of one interface',
      schema: { params: NameParams, response: { 200: InterfaceStats } },
      handler: async (request) => {
        const { name } = request.params;
        await refresh();
        const iface = net.assertKnownInterface(name);
        const counters = iface?.counters ?? { bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0 };
        return { name, ...counters };
      },
    }),
    route({
      method: 'GET', conditional: 'read', path: '/api/v1/interfaces/{name}/role', access: READ, tags: TAGS, summary: 'Role of one interface',
      schema: { params: NameParams, response: { 200: RoleView } },
      handler: async (request) => {
        const { name } = request.params;
        await refresh();
        if (!net.role(name)) net.assertKnownInterface(name);
        return { name, role: net.role(name) };
      },
    }),
    route({
      method: 'PUT', path: '/api/v1/interfaces/{name}/role', access: WRITE, tags: TAGS, summary: 'Set the role of an interface (wan, lan, …)',
      schema: { params: NameParams, body: RoleBody, response: { 200: RoleView } },
      handler: async (request) => {
        const { name } = request.params;
        await refresh();
        net.assertKnownInterface(name);
        net.setRole(name, request.body.role);
        return { name, role: net.role(name) };
      },
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/interfaces/roles', access: READ, tags: TAGS, summary: 'Role assignments as [interface, role] pairs',
      schema: { response: { 200: Type.Array(Type.Tuple([Type.String(), Type.String()])) } },
      handler: () => net.roles(),
    },
    ...refreshingFirst(collectionRoutes(vlans, { path: '/api/v1/vlans', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }), refresh),
    ...refreshingFirst(collectionRoutes(staticRoutes, { path: '/api/v1/routes', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }), refresh),
    route({
      method: 'GET', path: '/api/v1/routes/system', access: READ, tags: TAGS, summary: 'The kernel routing table (IPv4)',
      schema: { querystring: Type.Object({ fib: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_295, default: 0, description: 'routing table: 0 the main table, any other number the kernel table of that number' })) }), response: { 200: Type.Array(SystemRouteView) } },
      handler: async (request) => (await platform.network.routes(request.query.fib ?? 0)).map(({ table: _table, ...route }) => route),
    }),
    ...refreshingFirst(collectionRoutes(ddnsRecords, { path: '/api/v1/ddns/records', access: ddnsAccess, tags: ['ddns'], operations: ['list', 'create', 'update', 'delete'] }), refresh),
    route({
      method: 'POST', path: '/api/v1/ddns/records/{id}/update', access: 'settings:write', tags: ['ddns'], summary: 'Resolve the address now and push it when it changed',
      schema: { params: IdParams(), response: { 200: DdnsUpdateResult } },
      handler: (request) => net.updateRecord(request.params.id),
    }),
    ...singletonRoutes(ddnsConfig, { path: '/api/v1/ddns/config', access: ddnsAccess, tags: ['ddns'] }),
  ];
  return { list, net };
}

export function createNetworkingArea(context: AppContext): Area & { ddnsPoller: DdnsPoller } {
  const { list, net } = routes(context);
  const ddnsPoller = new DdnsPoller(context.clock, {
    records: () => context.store.list(NET_KINDS.ddnsRecord),
    pollIntervalSecs: () => Number(context.store.getSingleton(NET_KINDS.ddnsConfig)?.poll_interval_secs ?? DDNS_POLL_DEFAULT_SECS),
    updateRecord: (id) => net.updateRecord(id),
  });
  return {
    name: 'networking',
    routes: list,
    ddnsPoller,
    // The applied VLANs, interface settings and static routes come back through the start-up restore (above).
    start: () => {
      ddnsPoller.start();
    },
    stop: () => ddnsPoller.stop(),
  };
}
