import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Area } from '../area.js';
import { route, type RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { HttpError, badRequest, notFound } from '../../core/errors.js';
import { StringEnum } from '../../model/schema-helpers.js';
import { ErrorAnswer, EventStreamAnswers, NoContent } from '../../http/documented-responses.js';
import { EventStream } from '../../live/event-stream.js';
import { attachDashboardUpgrade } from '../../live/websocket-upgrade.js';
import { TIERS, type TierName } from '../../metrics/tiers.js';
import type { Flow } from '../../platform/connections.js';
import { DashboardService, tierFor, type DashboardOptions } from './service.js';
import type { LiveFeeds } from '../../live/feeds.js';
import type { ConfigData } from '../../store/config-store.js';
import { combinedLogs, LOG_SOURCES } from './logs.js';
import { HistoryView, StoreView } from './settings.js';
import { BlockedLogSchema } from '../status/blocked-log-schema.js';

const TAGS = ['status'];
export const WEBSOCKET_PATHS = ['/api/v1/ws', '/ws'] as const;

const FlowSchema = Type.Object({
  id: Type.Number(), protocol: Type.String(), src_addr: Type.String(), src_port: Type.Integer(), dst_addr: Type.String(), dst_port: Type.Integer(),
  state: Type.String(), packets_in: Type.Number(), packets_out: Type.Number(), bytes_in: Type.Number(), bytes_out: Type.Number(),
  age_secs: Type.Number(), iface: Type.Optional(Type.String()),
});

const BlockedSchema = Type.Object({
  timestamp: Type.String(), action: Type.String(), direction: Type.String(), interface: Type.String(), protocol: Type.String(),
  src_addr: Type.String(), src_port: Type.Integer(), dst_addr: Type.String(), dst_port: Type.Integer(), reason: Type.String(),
  rule_id: Type.Union([Type.String(), Type.Null()]),
});

const ConnectionsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10000, default: 1000 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  address: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'source or destination address' })),
  port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'source or destination port' })),
  protocol: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^[a-z0-9-]+$' })),
}, { additionalProperties: false });

const SeriesQuery = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 2000, description: 'one series, or several separated by commas' }),
  range_secs: Type.Integer({ minimum: 1, maximum: 20 * 365 * 86400, default: 1800, description: 'seconds back from `to`' }),
  from: Type.Optional(Type.Integer({ minimum: 0, description: 'unix seconds; overrides range_secs' })),
  to: Type.Optional(Type.Integer({ minimum: 0, description: 'unix seconds; default now' })),
  resolution: StringEnum(['auto', 'second', 'minute', 'hour', 'day', '1s', '1m', '1h', '1d'], { default: 'auto' }),
  limit: Type.Integer({ minimum: 1, maximum: 100_000, default: 5000, description: 'newest points kept per series' }),
}, { additionalProperties: false });

const Metrics = Type.Object({
  simulated: Type.Boolean(),
  pf_running: Type.Boolean(),
  pf_states_count: Type.Integer(),
  pf_rules_count: Type.Integer(),
  pf_packets_in: Type.Number(),
  pf_packets_out: Type.Number(),
  pf_bytes_in: Type.Number(),
  pf_bytes_out: Type.Number(),
  aifw_rules_total: Type.Integer(),
  aifw_rules_active: Type.Integer(),
  aifw_nat_rules_total: Type.Integer(),
  rule_counters: Type.Array(Type.Object({ name: Type.String(), packets: Type.Number(), bytes: Type.Number() })),
  blocked_log: BlockedLogSchema,
  runtime: Type.Object({
    event_loop_delay_ms: Type.Object({ mean: Type.Number(), p99: Type.Number(), max: Type.Number() }),
    heap_used: Type.Integer(),
    heap_total: Type.Integer(),
    rss: Type.Integer(),
    external: Type.Integer(),
    active_handles: Type.Integer(),
    active_resources: Type.Record(Type.String(), Type.Integer(), { description: 'open libuv resources by kind' }),
    worker_threads: Type.Integer(),
    dashboard_sockets: Type.Integer(),
    dns_streams: Type.Integer(),
    metrics_outbox_depth: Type.Integer(),
    uptime_seconds: Type.Integer(),
  }),
});

const LogEntrySchema = Type.Object({
  id: Type.String(), timestamp: Type.String(), source: StringEnum(LOG_SOURCES), level: Type.String(), action: Type.String(),
  rule_id: Type.Union([Type.String(), Type.Null()]), actor: Type.Union([Type.String(), Type.Null()]), details: Type.String(),
});

/** A plain GET answers 426; the handshake itself is answered by the upgrade handler (src/live/websocket-upgrade.ts). */
const WebSocketAnswers = {
  101: NoContent('Switching Protocols: the WebSocket is open'),
  426: ErrorAnswer('A plain GET without the WebSocket handshake'),
  503: ErrorAnswer('Too many dashboard sockets are open'),
};

const Point = Type.Object({ t: Type.Number(), v: Type.Number(), min: Type.Number(), max: Type.Number() });
const Series = Type.Object({ name: Type.String(), tier: Type.String(), interval_secs: Type.Integer(), source: Type.String(), points: Type.Array(Point) });

const flowMatches = (flow: Flow, query: { address?: string; port?: number; protocol?: string }) =>
  (query.address === undefined || flow.src_addr === query.address || flow.dst_addr === query.address) &&
  (query.port === undefined || flow.src_port === query.port || flow.dst_port === query.port) &&
  (query.protocol === undefined || flow.protocol === query.protocol);

/** The smallest tier whose retention covers the range (the 1 s tier for the last half hour, and so on). */
function autoTier(service: DashboardService, rangeSeconds: number): TierName {
  const retention = service.engine.getRetention();
  return (TIERS.find((tier) => retention[tier.name] * tier.seconds >= rangeSeconds)?.name ?? 'day') as TierName;
}

/**
 * Live dashboard and metrics: the WebSocket broadcaster, the DNS event stream, /metrics*, /connections,
 * /blocked, /logs and the two settings sections that steer history and the external metrics store.
 */
export function createDashboardArea(context: AppContext, needs: { feeds: LiveFeeds }, options: DashboardOptions = {}): Area & { service: DashboardService } {
  const service = new DashboardService(context, needs.feeds, options);
  let detachUpgrade: (() => void)[] = [];
  return {
    name: 'dashboard',
    service,
    routes: routes(context, service),
    async start(app: FastifyInstance) {
      // The plain listener and, with --tls-listen, the HTTPS one (src/areas/tls/routes.ts).
      detachUpgrade = [app.server, app.secureServer ?? null].filter((server) => server !== null).map((server) => attachDashboardUpgrade(server, {
        paths: WEBSOCKET_PATHS,
        permission: 'dashboard:view',
        authenticator: context.identity,
        broadcaster: service.broadcaster,
        streams: context.identity.streams,
        log: context.log,
      }));
      await service.start();
    },
    beforeClose: () => service.beforeClose(),
    async stop() {
      for (const detach of detachUpgrade) detach();
      await service.stop();
    },
  };
}

function routes(context: AppContext, service: DashboardService): RouteSpec[] {
  const traffic = context.platform.traffic;
  const simulatedHeader = (reply: { header(k: string, v: string): unknown }) => {
    if (traffic.simulated) reply.header('x-bulwark-simulated', 'true');
  };
  return [
    ...WEBSOCKET_PATHS.map((path) => ({
      method: 'GET' as const, path, access: 'dashboard:view' as const, tags: TAGS, acceptsTicket: true,
      schema: { response: WebSocketAnswers },
      summary: 'Dashboard WebSocket: a history batch, then one status_update frame per tick (requires an Upgrade: websocket handshake)',
      handler: () => {
        throw new HttpError(426, 'this is a WebSocket endpoint: connect with Upgrade: websocket and ?ticket=', { upgrade: 'websocket' });
      },
    })),
    {
      method: 'GET', path: '/api/v1/metrics', access: 'dashboard:view', tags: TAGS,
      schema: { response: { 200: Metrics } },
      summary: 'Current metrics: packet-filter counters, rule counts, per-rule counters and runtime figures',
      handler: async () => {
        const [pf, table, counters] = await Promise.all([
          context.platform.packetFilter.status(), service.tables.get(1000), traffic.ruleCounters().catch(() => []),
        ]);
        const rules = context.store.list('rule');
        return {
          simulated: context.platform.simulated,
          pf_running: pf.running,
          pf_states_count: table.total,
          pf_rules_count: pf.rules,
          // The packet filter's own counters (as GET /status), not the interfaces' (the dashboard's traffic).
          pf_packets_in: pf.packets_in,
          pf_packets_out: pf.packets_out,
          pf_bytes_in: pf.bytes_in,
          pf_bytes_out: pf.bytes_out,
          aifw_rules_total: rules.length,
          aifw_rules_active: rules.filter((r) => (r.data as { status?: string }).status !== 'disabled').length,
          aifw_nat_rules_total: context.store.list('nat').length,
          rule_counters: counters,
          blocked_log: traffic.blockedLogStatus(),
          runtime: service.runtime(),
        };
      },
    },
    {
      method: 'GET', path: '/api/v1/metrics/list', access: 'dashboard:view', tags: TAGS, summary: 'Names of the recorded metric series',
      schema: { response: { 200: Type.Object({ names: Type.Array(Type.String()) }) } },
      handler: async () => ({ names: await service.seriesNames() }),
    },
    route({
      method: 'GET', path: '/api/v1/metrics/series', access: 'dashboard:view', tags: TAGS,
      summary: 'Time series of one or more metrics over a range, at 1 s, 1 min, 1 h or 1 day resolution',
      schema: {
        querystring: SeriesQuery,
        response: {
          200: Type.Object({ name: Type.String(), tier: Type.String(), interval_secs: Type.Integer(), points: Type.Array(Point), from: Type.Integer(), to: Type.Integer(), series: Type.Array(Series) }),
          404: ErrorAnswer('A named series is not recorded (see GET /api/v1/metrics/list)'),
        },
      },
      handler: async (request) => {
        const query = request.query;
        const names = [...new Set(query.name.split(',').map((n) => n.trim()).filter(Boolean))];
        if (names.length === 0) throw badRequest('querystring.name must name at least one series');
        if (names.length > 50) throw badRequest('querystring.name: at most 50 series per request');
        const known = new Set(await service.seriesNames());
        const unknown = names.filter((n) => !known.has(n));
        if (unknown.length) throw notFound(`unknown series: ${unknown.join(', ')} (see GET /api/v1/metrics/list)`);
        const to = query.to ?? Math.floor(context.clock.now() / 1000);
        const from = query.from ?? to - query.range_secs;
        if (from > to) throw badRequest('querystring.from must not be after to');
        const tier = query.resolution === 'auto' ? autoTier(service, to - from) : tierFor(query.resolution)!;
        const interval = TIERS.find((t) => t.name === tier)!.seconds;
        const series = [];
        for (const name of names) {
          const { points, source } = await service.points(name, tier, from, to);
          series.push({ name, tier, interval_secs: interval, source, points: points.slice(-query.limit) });
        }
        // the first series also at the top level: the single-series shape clients of the reference read
        return { name: series[0].name, tier, interval_secs: interval, points: series[0].points, from, to, series };
      },
    }),
    route({
      method: 'GET', path: '/api/v1/connections', access: 'connections:view', tags: TAGS,
      summary: 'Live state table, heaviest flows first; filter by address, port, protocol; paginated (X-Total-Count)',
      schema: { querystring: ConnectionsQuery, response: { 200: Type.Array(FlowSchema), 502: ErrorAnswer('The platform\'s connection table cannot be read') } },
      handler: async (request, reply) => {
        const query = request.query;
        const table = await service.tables.get(1000);
        if (table.error && table.flows.length === 0) throw new HttpError(502, `connection table unavailable: ${table.error}`);
        const matching = table.flows.filter((flow) => flowMatches(flow, query));
        matching.sort((a, b) => b.bytes_in + b.bytes_out - (a.bytes_in + a.bytes_out) || a.id - b.id);
        reply.header('x-total-count', String(matching.length));
        reply.header('x-connections-total', String(table.total));
        simulatedHeader(reply);
        return matching.slice(query.offset, query.offset + query.limit);
      },
    }),
    route({
      method: 'GET', path: '/api/v1/blocked', access: 'connections:view', tags: TAGS, summary: 'Recently blocked traffic, newest first',
      schema: {
        querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }, { additionalProperties: false }),
        response: { 200: Type.Array(BlockedSchema) },
      },
      handler: async (request, reply) => {
        simulatedHeader(reply);
        return traffic.blocked(request.query.limit);
      },
    }),
    route({
      method: 'GET', path: '/api/v1/logs', access: 'logs:view', tags: TAGS,
      summary: 'Packet-filter, audit and system logs combined, newest first',
      schema: {
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          source: Type.Optional(StringEnum(LOG_SOURCES)),
        }, { additionalProperties: false }),
        response: { 200: Type.Array(LogEntrySchema) },
      },
      handler: async (request) => {
        const query = request.query;
        return combinedLogs(context, query.limit, query.source, request.identity?.permissions.has('users:read') === true);
      },
    }),
    {
      method: 'GET', path: '/api/v1/dns/stream', access: 'dns:read', tags: ['dns'], acceptsTicket: true,
      schema: { response: EventStreamAnswers('Events as JSON `data:` lines, one `id:` each, counting from 1') },
      summary: 'Server-Sent Events: DNS metrics once a second (`stats`), resolver `block`/`query` events; EventSource may pass ?ticket=',
      handler: async (request, reply) => {
        const stream = new EventStream(request, reply, { registry: { streams: context.identity.streams, permission: 'dns:read' } });
        service.dnsStreams.add(stream);
        stream.onClose(service.feeds.dns.subscribe((event) => stream.send(event)));
        stream.send({ type: 'stats', data: await service.dnsStats() });
      },
    },
    {
      method: 'GET', path: '/api/v1/settings/dashboard-history', access: 'settings:read', tags: ['settings'],
      summary: 'Read how much metric history the dashboard keeps',
      schema: { response: { 200: HistoryView } },
      handler: () => service.history.view(),
    },
    route({
      method: 'PUT', path: '/api/v1/settings/dashboard-history', access: 'settings:write', tags: ['settings'],
      summary: 'Change the dashboard history: by duration or by memory budget (applies at once)',
      schema: { body: service.history.section.schemas.patch, response: { 200: HistoryView } },
      handler: (request) => {
        service.history.update(request.body as ConfigData);
        return service.history.view();
      },
    }),
    {
      method: 'GET', path: '/api/v1/settings/metrics-store', access: 'settings:read', tags: ['settings'],
      summary: 'Read the external metrics store settings and connection status',
      schema: { response: { 200: StoreView } },
      handler: () => service.storeSettings.view(),
    },
    route({
      method: 'PUT', path: '/api/v1/settings/metrics-store', access: 'settings:write', tags: ['settings'],
      summary: 'Change the external metrics store (Valkey/Redis); reconnects at once',
      schema: { body: service.storeSettings.section.schemas.patch, response: { 200: StoreView } },
      handler: async (request) => {
        await service.storeSettings.update(request.body as ConfigData);
        return service.storeSettings.view();
      },
    }),
  ];
}
