import { Type } from 'typebox';
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { RouteSpec } from '../../http/route.js';
import { Singleton } from '../../http/singleton.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { IdParams } from '../../http/schema-helpers.js';
import { parseIpv4Cidr } from '../../core/ip.js';
import type { ConfigData } from '../../store/config-store.js';
import { isSpecialAddress } from '../../net/special-addresses.js';
import {
  DdnsConfig, DdnsRecord, DdnsStatusFields, DdnsUpdateResult, InterfaceConfigBody, InterfaceConfigResult, InterfaceDetail, InterfaceStats,
  InterfaceSummary, NameParams, RoleBody, RoleView, StaticRoute, SystemRouteView, Vlan,
} from './schema.js';
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
  }));
}

function routes(context: AppContext): RouteSpec[] {
  const { collections, store, sealer, platform } = context;
  let net: NetworkingService;
  const vlans = collections.declare({
    kind: NET_KINDS.vlan, path: '/api/v1/vlans', schema: Vlan, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'],
    validate: (data, ctx) => {
      validateVlanFields(data);
      const clash = ctx.collections.get(NET_KINDS.vlan).objects().find((o) => o.id !== ctx.existing?.id && o.data.vlan_id === data.vlan_id);
      if (clash) throw conflict(`VLAN ${String(data.vlan_id)} already exists (device ${vlanDevice(data.vlan_id)}, parent ${String(clash.data.parent)})`);
      if (net.known.length > 0 && !net.known.some((i) => i.name === data.parent)) throw badRequest(`body.parent: interface ${String(data.parent)} does not exist`);
      const owner = net.known.find((i) => i.name === vlanDevice(data.vlan_id));
      if (owner && owner.vlan_parent !== data.parent) throw badRequest(`body.vlan_id: device ${owner.name} already exists on this host and is not this VLAN`);
      if (ctx.existing && ctx.existing.data.vlan_id !== data.vlan_id) net.assertVlanUnused(ctx.existing);
    },
    tags: TAGS, noun: 'VLAN',
  });
  const staticRoutes = collections.declare({
    kind: NET_KINDS.route, path: '/api/v1/routes', schema: StaticRoute, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'],
    validate: (data, ctx) => {
      validateRouteFields(data);
      if (data.interface) net.assertInterface(String(data.interface), 'body.interface');
      const clash = ctx.collections.get(NET_KINDS.route).objects().find((o) => o.id !== ctx.existing?.id && o.data.destination === data.destination && o.data.fib === data.fib);
      if (clash) throw conflict(`a static route to ${String(data.destination)} in table ${String(data.fib)} already exists`);
    },
    tags: TAGS, noun: 'static route',
  });
  const ddnsConfig = new Singleton({
    kind: NET_KINDS.ddnsConfig, path: '/api/v1/ddns/config', schema: DdnsConfig, access: { read: 'settings:read', write: 'settings:write' },
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
    tags: ['ddns'], noun: 'dynamic DNS configuration',
  }, store, sealer);
  const ddnsRecords = collections.declare({
    kind: NET_KINDS.ddnsRecord, path: '/api/v1/ddns/records', schema: DdnsRecord, access: { read: 'settings:read', write: 'settings:write' },
    operations: ['list', 'create', 'update', 'delete'],
    references: [{ field: 'provider_id', kind: DNS_PROVIDER_KIND }],
    validate: (data, ctx) => {
      validateDdnsRecord(data, ctx.existing, ctx.collections.get(NET_KINDS.ddnsRecord));
      if (data.interface) net.assertInterface(String(data.interface), 'body.interface');
    },
    computed: { schema: DdnsStatusFields, add: (object) => ({ provider_name: net.providerName(String(object.data.provider_id)), ...net.ddnsState(object.id) }) },
    tags: ['ddns'], noun: 'dynamic DNS record',
  });
  net = new NetworkingService(context, { vlans, routes: staticRoutes, ddnsRecords, ddnsConfig });
  const refresh = () => net.refreshKnown();

  const routeRoutes = staticRoutes.routes().map((route): RouteSpec => {
    if (route.method === 'GET') return route;
    return {
      ...route,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        await refresh();
        const id = (request.params as { id?: string }).id;
        const before = id ? staticRoutes.find(id).data : null;
        const result = await route.handler(request, reply);
        if (before) await net.syncRoute(before, false);
        const after = route.method === 'DELETE' ? null : (id ? staticRoutes.find(id) : staticRoutes.objects().at(-1))?.data;
        if (after) await net.syncRoute(after, true);
        return result;
      },
    };
  });
  const vlanRoutes = refreshingFirst(vlans.routes(), refresh).map((route): RouteSpec => {
    if (route.method !== 'DELETE') return route;
    return {
      ...route,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        net.assertVlanUnused(vlans.find((request.params as { id: string }).id));
        return route.handler(request, reply);
      },
    };
  });

  return [
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
    {
      method: 'GET', path: '/api/v1/interfaces/config/{name}', access: READ, tags: TAGS, summary: 'One interface as /interfaces/detailed shows it',
      schema: { params: NameParams, response: { 200: InterfaceDetail } },
      handler: async (request) => {
        const { name } = request.params as { name: string };
        const found = (await net.detailed()).find((i) => i.name === name);
        if (!found) throw notFound(`interface ${name} not found`);
        return found;
      },
    },
    {
      method: 'PUT', path: '/api/v1/interfaces/config/{name}', access: WRITE, tags: TAGS, summary: 'Configure an interface (addressing, MTU, up/down, description)',
      schema: { params: NameParams, body: InterfaceConfigBody, response: { 200: InterfaceConfigResult } },
      handler: async (request) => {
        const { name } = request.params as { name: string };
        const body = request.body as ConfigData;
        await refresh();
        net.assertKnownInterface(name);
        const merged = { ...(net.storedConfig(name) ?? {}), ...body };
        if (merged.ipv4_mode === 'static' && !parseIpv4Cidr(String(merged.ipv4_address ?? ''))) throw badRequest('body.ipv4_address must be an IPv4 CIDR (e.g. 192.168.1.1/24) when ipv4_mode is static');
        if (body.gateway && isIP(String(body.gateway)) !== 4) throw badRequest('body.gateway must be an IPv4 address');
        if (body.ipv6_address) {
          const [address, prefix] = String(body.ipv6_address).split('/');
          if (isIP(address) !== 6 || (prefix !== undefined && !(Number(prefix) >= 0 && Number(prefix) <= 128))) throw badRequest('body.ipv6_address must be an IPv6 address, optionally with a prefix');
        }
        net.saveConfig(name, body);
        const outcome = await platform.network.configureInterface(name, body);
        if (body.gateway && outcome.applied) {
          const defaultRoute = (await platform.network.routes(0)).find((r) => r.destination === 'default');
          // The gateway moves the default route only if this interface owns it or none exists.
          if (!defaultRoute || defaultRoute.interface === name) await platform.network.setStaticRoute({ destination: 'default', gateway: String(body.gateway), interface: name, metric: 0, table: 0 }, true);
        }
        return { message: outcome.message, applied: outcome.applied, simulated: platform.simulated };
      },
    },
    {
      method: 'GET', path: '/api/v1/interfaces/{name}/stats', access: READ, tags: TAGS, summary: 'Live counters of one interface',
      schema: { params: NameParams, response: { 200: InterfaceStats } },
      handler: async (request) => {
        const { name } = request.params as { name: string };
        await refresh();
        const iface = net.assertKnownInterface(name);
        const counters = iface?.counters ?? { bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0 };
        return { name, ...counters };
      },
    },
    {
      method: 'GET', conditional: 'read', path: '/api/v1/interfaces/{name}/role', access: READ, tags: TAGS, summary: 'Role of one interface',
      schema: { params: NameParams, response: { 200: RoleView } },
      handler: async (request) => {
        const { name } = request.params as { name: string };
        await refresh();
        if (!net.role(name)) net.assertKnownInterface(name);
        return { name, role: net.role(name) };
      },
    },
    {
      method: 'PUT', path: '/api/v1/interfaces/{name}/role', access: WRITE, tags: TAGS, summary: 'Set the role of an interface (wan, lan, …)',
      schema: { params: NameParams, body: RoleBody, response: { 200: RoleView } },
      handler: async (request) => {
        const { name } = request.params as { name: string };
        await refresh();
        net.assertKnownInterface(name);
        net.setRole(name, (request.body as { role: string }).role);
        return { name, role: net.role(name) };
      },
    },
    {
      method: 'GET', conditional: 'read', path: '/api/v1/interfaces/roles', access: READ, tags: TAGS, summary: 'Role assignments as [interface, role] pairs',
      schema: { response: { 200: Type.Array(Type.Tuple([Type.String(), Type.String()])) } },
      handler: () => net.roles(),
    },
    ...vlanRoutes,
    ...routeRoutes,
    {
      method: 'GET', path: '/api/v1/routes/system', access: READ, tags: TAGS, summary: 'The kernel routing table (IPv4)',
      schema: { querystring: Type.Object({ fib: Type.Optional(Type.Integer({ minimum: 0, maximum: 255, default: 0 })) }), response: { 200: Type.Array(SystemRouteView) } },
      handler: async (request) => (await platform.network.routes((request.query as { fib?: number }).fib ?? 0)).map(({ table: _table, ...route }) => route),
    },
    ...refreshingFirst(ddnsRecords.routes(), refresh),
    {
      method: 'POST', path: '/api/v1/ddns/records/{id}/update', access: 'settings:write', tags: ['ddns'], summary: 'Resolve the address now and push it when it changed',
      schema: { params: IdParams(), response: { 200: DdnsUpdateResult } },
      handler: (request) => net.updateRecord((request.params as { id: string }).id),
    },
    ...ddnsConfig.routes(),
  ];
}

export const networkingArea: Area = { name: 'networking', routes };
