import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { ErrorAnswer, NoContent } from '../../http/documented-responses.js';
import { Type } from 'typebox';
import { DEMOTED, PROMOTED } from '../../render/keepalived/keepalived.js';
import type { PacketFilterService } from '../packet-filter/service.js';
import type { DashboardBroadcaster } from '../../live/dashboard-broadcaster.js';
import type { ConfigData } from '../../store/config-store.js';
import { ClusterLocal, ClusterRoleBody, ClusterStatus, PfsyncConfig } from './schema.js';
import { ClusterService } from './service.js';
import { HealthSummary, healthSummary } from './health-summary.js';

const TAGS = ['cluster'];
/** GET /cluster/pfsync: the settings with `id` once set, else null (wire-format §10). */
const PfsyncView = Type.Union([Type.Object({ id: Type.String(), ...PfsyncConfig.properties }), Type.Null()]);
const ACCESS = { read: 'ha:manage', write: 'ha:manage' } as const;
const ROLES = ['primary', 'secondary', 'standalone'];
/** GET /cluster/failover-history: the role changes of the last 24 h (wire-format §10). */
const FailoverEntry = Type.Object({
  id: Type.String(), ts: Type.String({ format: 'date-time' }), from_role: Type.Union(ROLES.map((r) => Type.Literal(r))), to_role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  cause: Type.Union(['vrrp', 'promote', 'demote', 'role_set'].map((c) => Type.Literal(c)), { description: 'vrrp: a transition keepalived reported; the others: the operator' }),
  detail: Type.Union([Type.String(), Type.Null()]),
});

/** High availability (issue 39 items 1-2): VRRP virtual addresses (keepalived), state sync (conntrackd), health checks. */
export function createClusterArea(context: AppContext, deps: { packetFilter?: PacketFilterService; dashboard?: DashboardBroadcaster } = {}): Area & { service: ClusterService } {
  const service = new ClusterService(context);
  // Role changes, health changes and sync metrics reach the dashboard WebSocket as cluster frames (wire-format §5.1).
  const { dashboard } = deps;
  // Only sockets of accounts holding ha:manage receive them.
  if (dashboard) service.onFrame((event) => dashboard.broadcastEvent({ channel: 'cluster', event }, 'ha:manage'), () => dashboard.socketCount > 0);
  deps.packetFilter?.useClusterInterfaces(() => service.systemInterfaces());
  // The system rules need no load here: the packet filter's own applier runs in the same apply and reloads the
  // stored configuration, these rules included (the change hook below loads them after a cluster edit). Reapplying
  // them here loaded nothing, yet waited behind that load's read-back: 0.3-0.7 s after a one-rule delta, 2.3 s
  // after a whole table of 10,000 rules, on every POST /reload's path (docs/packet-filter.md, benchmarks).
  context.apply.register('cluster', async () => {
    await service.apply();
  });
  context.models.onChanged([service.carp.kind, service.pfsync.kind, service.local.kind], async () => {
    // The VRRP and sync rules follow the virtual addresses' interfaces.
    await deps.packetFilter?.reapplySystemRules().catch((error: Error) => context.log.warn({ err: error.message }, 'cluster system rules not reloaded'));
  });
  const noContent = (action: () => Promise<void>): RouteSpec['handler'] => async (_request, reply) => {
    await action();
    reply.status(204);
    return null;
  };
  const routes: RouteSpec[] = [
    ...collectionRoutes(service.carp, { path: '/api/v1/cluster/carp', access: ACCESS, tags: TAGS }),
    ...collectionRoutes(service.health, { path: '/api/v1/cluster/health', access: ACCESS, tags: TAGS }),
    {
      method: 'GET', path: '/api/v1/cluster/pfsync', access: 'ha:manage', tags: TAGS, summary: 'Connection state sync (conntrackd FTFW on linux), or null',
      schema: { response: { 200: PfsyncView } },
      handler: () => service.pfsyncView(),
    },
    route({
      method: 'PUT', path: '/api/v1/cluster/pfsync', access: 'ha:manage', tags: TAGS, summary: 'Set connection state sync and apply it at once',
      schema: { body: service.pfsync.schemas.patch, response: { 200: PfsyncView, 409: ErrorAnswer('conntrackd or keepalived refused'), 503: ErrorAnswer('conntrackd is not installed (names the Debian package)') } },
      handler: async (request) => {
        service.pfsync.write(request.body as ConfigData);
        return service.pfsyncView();
      },
    }),
    {
      method: 'GET', path: '/api/v1/cluster/role', access: 'ha:manage', tags: TAGS, summary: "This node's role in the pair (node-local, never synchronised)",
      schema: { response: { 200: ClusterLocal } },
      handler: () => service.local.read(),
    },
    route({
      method: 'PUT', path: '/api/v1/cluster/role', access: 'ha:manage', tags: TAGS, summary: "Set this node's role: primary, secondary or standalone (no VRRP)",
      schema: { body: ClusterRoleBody, response: { 200: ClusterLocal, 409: ErrorAnswer('keepalived refused'), 503: ErrorAnswer('keepalived is not installed (names the Debian package)') } },
      handler: async (request) => service.local.write({ role: (request.body as { role: string }).role }),
    }),
    {
      method: 'GET', path: '/api/v1/cluster/status', access: 'ha:manage', tags: TAGS, summary: 'Live role, peer reachability, synced state count and sync errors',
      schema: { response: { 200: ClusterStatus } },
      handler: () => service.status(),
    },
    {
      method: 'POST', path: '/api/v1/cluster/promote', access: 'ha:manage', tags: TAGS, summary: 'Clear a demotion (primary) or raise the priority by 100 (secondary): this node takes the virtual addresses',
      schema: { response: { 204: NoContent('The priority is raised; keepalived moves the addresses') } },
      handler: noContent(() => service.setDemotion(service.role() === 'primary' ? 0 : PROMOTED)),
    },
    {
      method: 'POST', path: '/api/v1/cluster/demote', access: 'ha:manage', tags: TAGS, summary: 'Lower this node\'s VRRP priority by 240 (gives the virtual addresses away)',
      schema: { response: { 204: NoContent('The priority is lowered; keepalived gives the addresses away') } },
      handler: noContent(() => service.setDemotion(DEMOTED)),
    },
    {
      method: 'GET', path: '/api/v1/cluster/failover-history', access: 'ha:manage', tags: TAGS, summary: 'Role changes of the last 24 h: VRRP transitions, promote, demote, role settings (persisted)',
      schema: { response: { 200: Type.Array(FailoverEntry) } },
      handler: () => service.history.recent(),
    },
    {
      method: 'GET', path: '/api/v1/cluster/health-summary', access: 'ha:manage', tags: TAGS, summary: 'What needs attention: failing checks, daemons not running, sync errors, peer, demotion',
      schema: { response: { 200: HealthSummary } },
      handler: () => healthSummary(service, context),
    },
    {
      method: 'POST', path: '/api/v1/cluster/health/run', access: 'ha:manage', tags: TAGS, summary: 'Run every health check now',
      schema: { response: { 202: NoContent('The checks run now; GET /cluster/status reports their outcome') } },
      handler: async (_request, reply) => {
        service.restartChecks();
        return reply.status(202).send();
      },
    },
  ];
  return {
    name: 'cluster', service, routes,
    async start() {
      await service.start().catch((error: Error) => context.log.warn({ err: error.message }, 'high availability did not start'));
    },
    async stop() {
      service.stop();
    },
  };
}
