import { Type } from 'typebox';
import { isIP } from 'node:net';
import type { Area } from '../area.js';
import { startLeaseEvents } from './lease-events.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { MediaBody } from '../../http/documented-responses.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { isDomainName } from '../../core/ip.js';
import type { ConfigData } from '../../store/config-store.js';
import { inSubnet } from '../../render/kea/kea.js';
import { LogLines, LogQuery, tailLines } from '../common/log-query.js';
import { Message } from '../common/schemas.js';
import { DhcpActionResult, DhcpConfig, DhcpDdns, DhcpHaConfig, DhcpStatus, HaStatus, Lease, PoolStats, Reservation, Subnet } from './schema.js';
import { DHCP_KINDS, DhcpService, isBase64, validateConfig, validateDdns, validateReservationClientId, validateSubnet } from './service.js';
import { describeRefusal, logRefusal } from '../common/checker-refusal.js';

const TAGS = ['dhcp'];
const READ = 'dhcp:read' as const;
const WRITE = 'dhcp:write' as const;

function routes(context: AppContext, built: { service?: DhcpService }): RouteSpec[] {
  const { models } = context;
  const config = models.singleton({ kind: DHCP_KINDS.config, noun: 'DHCPv4 configuration', writeAccess: WRITE, schema: DhcpConfig, validate: validateConfig });
  const subnets = models.collection({ kind: DHCP_KINDS.subnet, noun: 'DHCP subnet', writeAccess: WRITE, schema: Subnet, unique: ['network'], validate: validateSubnet });
  const reservations = models.collection({
    kind: DHCP_KINDS.reservation, noun: 'DHCP reservation', writeAccess: WRITE, schema: Reservation,
    unique: ['ip_address'],
    references: [{ field: 'subnet_id', kind: DHCP_KINDS.subnet }],
    validate: (data: ConfigData, ctx) => {
      if (isIP(String(data.ip_address)) !== 4) throw badRequest('body.ip_address must be an IPv4 address');
      if (data.hostname && !isDomainName(String(data.hostname))) throw badRequest('body.hostname must be a host name');
      validateReservationClientId(data);
      if (data.subnet_id) {
        const subnet = ctx.store.get(DHCP_KINDS.subnet, String(data.subnet_id))!;
        if (!inSubnet(String(data.ip_address), String(subnet.data.network))) throw badRequest(`body.ip_address must lie inside subnet ${String(subnet.data.network)}`);
      }
      if (!data.mac_address && !data.client_id) throw badRequest('body.mac_address is required unless client_id identifies the client');
      const mac = String(data.mac_address).toLowerCase().replace(/-/g, ':');
      const clash = mac && ctx.store.list(DHCP_KINDS.reservation).find((o) => o.id !== ctx.existing?.id && String(o.data.mac_address).toLowerCase().replace(/-/g, ':') === mac && o.data.subnet_id === data.subnet_id);
      if (clash) throw conflict(`a reservation for ${mac} already exists in that subnet`);
    },
  });
  const ddns = models.singleton({ kind: DHCP_KINDS.ddns, noun: 'DHCP dynamic DNS', writeAccess: WRITE, schema: DhcpDdns, writeOnly: ['tsig_secret'], validate: validateDdns });
  const ha = models.singleton({
    kind: DHCP_KINDS.ha, noun: 'DHCP high availability', writeAccess: WRITE, schema: DhcpHaConfig,
    validate: (data) => {
      for (const field of ['peer', 'listen', 'tls_cert', 'tls_key', 'tls_ca']) if (data[field] === '') data[field] = null;
      if (data.mode !== 'standalone' && !data.peer) throw badRequest(`body.peer is required for mode ${String(data.mode)}`);
      for (const field of ['peer', 'listen']) {
        const value = data[field];
        if (value && !/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/.test(String(value))) throw badRequest(`body.${field} must be host:port`);
      }
    },
  });
  const dhcp = new DhcpService(context, { config, subnets, reservations, ddns, ha });
  built.service = dhcp;
  context.apply.register('dhcp', async () => {
    // Nothing to do for a service that is off and not running (the check hook still validates it).
    if (config.read().enabled || dhcp.active) await dhcp.apply();
  }, {
    check: async () => {
      const { check: result, text, label } = await dhcp.check();
      if (!result.ok) {
        logRefusal(context, 'kea-dhcp4', result);
        return { errors: [describeRefusal(label, result, text)] };
      }
      return { errors: [], info: [result.checked ? `the Kea configuration passes ${result.checker}` : result.output] };
    },
  });
  // A running Kea picks up each change at once; after a whole-configuration replace the coordinator applies instead.
  models.onChanged([config, subnets, reservations, ddns], (change) => (change.cause === 'write' ? dhcp.autoApply() : undefined));
  const access = { read: READ, write: WRITE };

  /** A DDNS patch, checked as merged with what is stored (fields not sent are kept), then written; `at` names the body in a 400. */
  const writeDdns = (body: ConfigData, at: string) => {
    const merged = { ...ddns.read(), ...body };
    if (merged.enabled && !merged.forward_zone) throw badRequest(`${at}.forward_zone is required when enabled`);
    if (merged.dns_server && !/^[0-9A-Fa-f.:]+$/.test(String(merged.dns_server))) throw badRequest(`${at}.dns_server must be an IP address`);
    if (typeof body.tsig_secret === 'string' && body.tsig_secret && !isBase64(body.tsig_secret)) throw badRequest(`${at}.tsig_secret must be base64 (as tsig-keygen prints it)`);
    ddns.write(body);
  };
  const ddnsView = () => ({ ...ddns.visible(ddns.read()), tsig_secret_set: Boolean(ddns.read().tsig_secret) });
  const DdnsView = Type.Object({ ...Type.Omit(DhcpDdns, ['tsig_secret']).properties, tsig_secret_set: Type.Boolean() });
  const haStatus = () => dhcp.haStatus();
  const action = (name: 'start' | 'stop' | 'restart'): RouteSpec => ({
    method: 'POST', path: `/api/v1/dhcp/${name}`, access: WRITE, tags: TAGS, summary: `${name[0].toUpperCase()}${name.slice(1)} the DHCP server (Kea)`,
    schema: { response: { 200: DhcpActionResult } },
    handler: () => dhcp.control(name),
  });

  return [
    {
      method: 'GET', path: '/api/v1/dhcp/status', access: READ, tags: TAGS, summary: 'DHCP server state, counts and pools',
      schema: { response: { 200: DhcpStatus } },
      handler: async () => {
        const status = await context.platform.daemons.status('kea-dhcp4');
        const pools = await dhcp.poolStats();
        const state = dhcp.applyState();
        const { pid, config_version, config_sha256 } = await dhcp.report();
        return {
          running: status.running,
          pid,
          config_version,
          config_sha256,
          version: status.running ? status.version : 'stopped',
          uptime: status.running && status.started_at ? Math.max(0, Math.floor((Date.now() - Date.parse(status.started_at)) / 1000)) : null,
          total_subnets: subnets.objects().length,
          total_reservations: reservations.objects().length,
          active_leases: (await dhcp.leases()).length,
          ha: status.running ? await haStatus() : null,
          pool_stats: pools,
          last_apply_at: state.last_apply_at,
          last_apply_result: state.last_apply_result,
          simulated: status.simulated,
        };
      },
    },
    action('start'),
    action('stop'),
    action('restart'),
    route({
      method: 'GET', path: '/api/v1/dhcp/logs', access: READ, tags: TAGS, summary: 'Tail of the DHCP server log, newest first',
      schema: { querystring: LogQuery, response: { 200: LogLines } },
      handler: async (request) => tailLines(await context.platform.daemons.logs('kea-dhcp4'), request.query),
    }),
    {
      method: 'GET', path: '/api/v1/dhcp/metrics', access: READ, tags: TAGS, summary: 'Prometheus exposition of the DHCP figures (text/plain)',
      schema: { response: { 200: MediaBody('text/plain', 'Prometheus text exposition format 0.0.4') } },
      handler: async (_request, reply) => reply.type('text/plain; version=0.0.4').send(await dhcp.metrics()),
    },
    {
      method: 'GET', path: '/api/v1/dhcp/pool-stats', access: READ, tags: TAGS, summary: 'Pool size and use per subnet',
      schema: { response: { 200: Type.Array(PoolStats) } },
      handler: () => dhcp.poolStats(),
    },
    ...singletonRoutes(config, { path: '/api/v1/dhcp/v4/config', access, tags: TAGS }),
    {
      method: 'POST', path: '/api/v1/dhcp/v4/apply', access: WRITE, tags: TAGS, summary: 'Render kea-dhcp4.conf, check it with kea-dhcp4 -t, and restart or stop Kea',
      schema: { response: { 200: DhcpActionResult } },
      handler: () => dhcp.apply(),
    },
    ...collectionRoutes(subnets, { path: '/api/v1/dhcp/v4/subnets', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
    ...collectionRoutes(reservations, { path: '/api/v1/dhcp/v4/reservations', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
    {
      method: 'GET', path: '/api/v1/dhcp/v4/leases', access: READ, tags: TAGS, summary: 'Active leases',
      schema: { response: { 200: Type.Array(Lease) } },
      handler: async (_request, reply) => {
        const leases = (await dhcp.leases()).map((lease) => ({
          ip_address: lease.ip_address, mac_address: lease.mac_address, hostname: lease.hostname, client_id: lease.client_id,
          state: lease.state, lease_time: lease.lease_time, starts: isoTime(lease.start_time * 1000), expires: isoTime(lease.expire_time * 1000), subnet: lease.subnet,
        }));
        reply.header('x-total-count', String(leases.length));
        return leases;
      },
    },
    route({
      method: 'DELETE', path: '/api/v1/dhcp/v4/leases/{ip}', access: WRITE, tags: TAGS, summary: 'Release one lease',
      schema: { params: Type.Object({ ip: Type.String() }), response: { 200: Message } },
      handler: async (request) => {
        const { ip } = request.params;
        if (isIP(ip) !== 4) throw badRequest('params.ip must be an IPv4 address');
        if (!(await context.platform.daemons.releaseDhcpLease(ip))) throw notFound(`no active lease for ${ip}`);
        return { message: `Lease ${ip} released` };
      },
    }),
    {
      method: 'GET', path: '/api/v1/dhcp/ddns', access: READ, tags: TAGS, summary: 'Dynamic DNS updates from DHCP (the TSIG secret is never returned)',
      schema: { response: { 200: DdnsView } },
      handler: ddnsView,
    },
    route({
      method: 'PUT', path: '/api/v1/dhcp/ddns', access: WRITE, tags: TAGS, summary: 'Change DHCP dynamic DNS (fields not sent are kept; an empty tsig_secret clears it)',
      // The section's patch schema has no defaults: a field not sent is kept, not reset to its default.
      schema: { body: ddns.schemas.patch, response: { 200: DdnsView } },
      handler: async (request) => {
        writeDdns(request.body as ConfigData, 'body');
        return ddnsView();
      },
      // In a change set too (a fleet revision owning it), with the same checks; the secret is never in its answer.
      change: {
        op: 'update', body: ddns.schemas.patch,
        apply: (_params, body, ifMatch, field) => {
          if (ifMatch !== undefined) throw badRequest(`${field}: /dhcp/ddns has no entity tag to match`);
          const before = ddns.visible(ddns.read());
          writeDdns(body!, field.replace(/\.if_match$/, '.body'));
          return { kind: DHCP_KINDS.ddns, before, after: ddns.visible(ddns.read()) };
        },
      },
    }),
    ...singletonRoutes(ha, { path: '/api/v1/dhcp/ha/config', access, tags: TAGS }),
    {
      method: 'GET', path: '/api/v1/dhcp/ha/status', access: READ, tags: TAGS, summary: 'High-availability state',
      schema: { response: { 200: HaStatus } },
      handler: haStatus,
    },
  ];
}

export function createDhcpArea(context: AppContext): Area & { service: DhcpService } {
  let stopLeaseEvents: (() => void) | null = null;
  const built: { service?: DhcpService } = {};
  const specs = routes(context, built);
  return {
    name: 'dhcp',
    service: built.service!,
    routes: specs,
    start: () => {
      stopLeaseEvents = startLeaseEvents(context);
    },
    stop: () => stopLeaseEvents?.(),
  };
}
