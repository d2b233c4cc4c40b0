import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { ReverseProxyService } from './service.js';
import { LogsQuery, ProxyStatus } from './schema.js';

const tags = ['reverse-proxy'];
const Message = Type.Object({ message: Type.String() });
const access = { read: 'proxy:read', write: 'proxy:write' } as const;

/** Where each of the eleven collections is served, under /api/v1/reverse-proxy/. */
const COLLECTION_PATHS: Record<string, string> = {
  rp_entrypoint: 'entrypoints',
  rp_http_service: 'http/services',
  rp_http_middleware: 'http/middlewares',
  rp_tcp_service: 'tcp/services',
  rp_udp_service: 'udp/services',
  rp_tls_cert: 'tls/certs',
  rp_tls_option: 'tls/options',
  rp_cert_resolver: 'cert-resolvers',
  rp_http_router: 'http/routers',
  rp_tcp_router: 'tcp/routers',
  rp_udp_router: 'udp/routers',
};

export function createReverseProxyArea(context: AppContext): Area & { service: ReverseProxyService } {
  const proxy = new ReverseProxyService(context);
  // One applier of the whole configuration (POST /reload, restore, import, commit-confirm).
  context.apply.register('reverse-proxy', async () => {
    // Nothing to do for a proxy that is off and not running (the check hook still validates it).
    if (proxy.config.read().enabled === true || (await context.platform.reverseProxy.status().catch(() => ({ running: false }))).running) await proxy.apply();
  }, {
    check: async () => {
      const result = await proxy.validate();
      return result.valid ? { errors: [], info: ['the reverse-proxy configuration passes its checker'] } : { errors: [result.message] };
    },
  });
  return {
    name: 'reverse-proxy',
    service: proxy,
    routes: routes(context, proxy),
    // A proxy that was enabled runs again after a restart of Bulwark (with the configuration last applied).
    start() {
      proxy.sealStoredSecrets();
      if (proxy.config.read().enabled !== true) return;
      // In the background: Caddy may take seconds to answer, and nothing else waits for it.
      void proxy.control('start').catch((error: Error) => context.log.warn({ err: error }, 'the reverse proxy did not start'));
    },
  };
}

function routes(context: AppContext, proxy: ReverseProxyService): RouteSpec[] {
  const control = (action: 'start' | 'stop' | 'restart'): RouteSpec => ({
    method: 'POST', path: `/api/v1/reverse-proxy/${action}`, access: 'proxy:write', tags, summary: `${action[0].toUpperCase()}${action.slice(1)} the reverse proxy`,
    schema: { response: { 200: Message } },
    handler: async () => ({ message: await proxy.control(action) }),
  });
  return [
    {
      method: 'GET', path: '/api/v1/reverse-proxy/status', access: 'proxy:read', tags, summary: 'Process status and counts of enabled objects',
      schema: { response: { 200: ProxyStatus } },
      handler: () => proxy.status(),
    },
    control('start'),
    control('stop'),
    control('restart'),
    route({
      method: 'GET', path: '/api/v1/reverse-proxy/logs', access: 'proxy:read', tags, summary: 'Tail of the access or server log, newest first',
      schema: { querystring: LogsQuery, response: { 200: Type.Array(Type.String()) } },
      handler: (request) => proxy.logs(request.query),
    }),
    {
      method: 'POST', path: '/api/v1/reverse-proxy/validate', access: 'proxy:write', tags, summary: 'Render the configuration and check it without applying',
      schema: { response: { 200: Type.Object({ valid: Type.Boolean(), message: Type.String() }) } },
      handler: () => proxy.validate(),
    },
    {
      method: 'POST', path: '/api/v1/reverse-proxy/apply', access: 'proxy:write', tags, summary: 'Render, write and install the configuration',
      schema: { response: { 200: Type.Object({ message: Type.String(), path: Type.String() }) } },
      handler: () => proxy.apply(),
    },
    ...singletonRoutes(proxy.config, { path: '/api/v1/reverse-proxy/config', access, tags }),
    ...singletonRoutes(proxy.keyFiles, { path: '/api/v1/reverse-proxy/tls/key-files', access: { read: 'proxy:read', write: 'settings:write' }, tags }),
    ...Object.values(proxy.collections).flatMap((model) =>
      collectionRoutes(model, { path: `/api/v1/reverse-proxy/${COLLECTION_PATHS[model.kind]}`, access, tags, operations: ['list', 'create', 'update', 'delete'] })),
  ];
}
