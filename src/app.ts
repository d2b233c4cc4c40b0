import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { StartupConfig } from './config.js';
import type { AppContext } from './context.js';
import { systemClock, type Clock } from './core/clock.js';
import { loadOrCreateKeyFile, Sealer } from './core/crypto.js';
import type { RouteAccess } from './core/permissions.js';
import { openDatabase } from './store/database.js';
import { ConfigStore } from './store/config-store.js';
import { createPlatform } from './platform/index.js';
import type { Platform } from './platform/platform.js';
import { ModelRegistry } from './model/registry.js';
import { extensionOf } from './http/extensions.js';
import { installErrorHandling } from './http/error-handler.js';
import { installRequestBodyChecks } from './http/request-body.js';
import { MethodIndex } from './http/method-index.js';
import { toRouterPath, type RouteSpec } from './http/route.js';
import { documentedResponses } from './http/documented-responses.js';
import { finishDocument, operationIdOf } from './http/openapi-document.js';
import { validatorCompiler } from './http/validation.js';
import { installAccessControl } from './http/access.js';
import { ReadCache } from './http/read-cache.js';
import { documentConditional, installConditionalRequests, refuseUnsupportedPreconditions } from './http/conditional.js';
import { ConditionalTwins } from './http/conditional-twins.js';
import { settledWrite } from './http/settled-write.js';
import { createAreas } from './areas/index.js';
import { IdentityService } from './auth/identity-service.js';
import type { Area } from './areas/area.js';
import { BUILD } from './core/build-info.js';
import { ApplyCoordinator } from './core/apply.js';
import { EventHub } from './core/event-hub.js';
import { RequestMetrics } from './metrics/request-metrics.js';
import { ApiLogStream, LocalLogs } from './areas/settings/local-logs.js';
import { ServiceRestore } from './core/service-restore.js';
import { ConfigVersions } from './store/config-versions.js';
import { CONSOLE_ROUTES, registerConsole } from './http/console-static.js';

export interface BuildOptions {
  config: StartupConfig;
  clock?: Clock;
  platform?: Platform;
  /** Builds the areas to register on the app's context (default: every area, wired in src/areas/index.ts); tests pass their own. */
  areas?: (context: AppContext) => Area[];
  logger?: FastifyServerOptions['logger'];
  /** The built web console to serve at `/` (default: dist/console). */
  consoleDir?: string;
  /** The default logger also writes to standard output (default true); the local API log is written either way. */
  logToStdout?: boolean;
}

/** One row of the route catalogue: what the route-table test compares with endpoints.tsv. */
export interface CatalogueEntry {
  method: string;
  path: string;
  access: RouteAccess | undefined;
  /** The route validates a request body against a schema. */
  hasBody: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    context: AppContext;
    catalogue: CatalogueEntry[];
    /** Serialised configuration reads, kept per store generation (http/read-cache.ts). */
    readCache: ReadCache;
    /** The areas of this app, in registration order (tests reach an area's services through them). */
    areas: readonly Area[];
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
export const BODY_LIMIT = 10 * 1024 * 1024;

/** Paths served without credentials that are not API operations (documentation). */
const DOCUMENTATION_PREFIXES = ['/api/docs', '/api/v1/openapi.json'];

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  // The logger exists before the database; its stream is connected to logs/api.log once the store is open.
  const apiLog = new ApiLogStream(options.logToStdout === false ? null : process.stdout);
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      // Belt and braces: request logging below never includes headers or bodies, but nothing that could
      // carry a credential may ever be serialised by accident.
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.token', '*.client_secret', '*.refresh_token', '*.access_token'], censor: '[redacted]' },
      stream: apiLog,
    },
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (request) => {
      const supplied = request.headers['x-request-id'];
      return typeof supplied === 'string' && REQUEST_ID.test(supplied) ? supplied : randomUUID();
    },
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler);
  // The API speaks JSON only; any other body type is refused with a 400 that says so.
  app.removeContentTypeParser('text/plain');

  const db = openDatabase(config.dataDir);
  const sealer = new Sealer(loadOrCreateKeyFile(join(config.dataDir, 'secrets.key')));
  const store = new ConfigStore(db, clock);
  const platform = options.platform ?? createPlatform(config.platform, { aptRoot: config.aptRoot, hostRoot: config.hostRoot });
  const context = {
    config, clock, db, store, sealer, platform,
    models: new ModelRegistry(store, sealer, (error) => app.log.error({ err: error }, 'a change hook failed')),
    log: app.log,
    startedAt: clock.now(),
    apply: new ApplyCoordinator(new ConfigVersions(db, store, clock), app.log),
    events: new EventHub(clock),
    requests: new RequestMetrics(),
    localLogs: new LocalLogs(config.dataDir, store),
    restore: new ServiceRestore(app.log),
  } as AppContext;
  apiLog.attach((line) => context.localLogs.write('bulwark-api', line));
  const stopHashing = context.apply.versions.hashWhenQuiet();
  context.identity = new IdentityService(context);
  app.decorate('context', context);
  app.decorate('catalogue', [] as CatalogueEntry[]);
  app.decorate('readCache', new ReadCache(store));
  const areas = (options.areas ?? createAreas)(context);
  app.decorate('areas', areas);
  // Before every other hook: the plain listener's redirect to HTTPS answers before access control.
  for (const area of areas) area.http?.(app);

  const methods = new MethodIndex();
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (DOCUMENTATION_PREFIXES.some((prefix) => url.startsWith(prefix))) {
      route.config = { ...(route.config ?? {}), access: 'public' };
    }
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      if (!CONSOLE_ROUTES.includes(url)) methods.remember(method, url);
      app.catalogue.push({ method, path: url, access: (route.config as { access?: RouteAccess } | undefined)?.access, hasBody: Boolean(route.schema?.body) });
    }
  });

  // While shutting down, answers in flight ask the client to close its keep-alive connection, so closing
  // does not wait for idle sockets to time out.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const area of app.areas) await area.beforeClose?.();
  });
  // Per-request hooks take callbacks rather than promises: they run on every request and never wait.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // One line per request; the path only (query strings may carry tickets), never headers or bodies.
  app.addHook('onResponse', (request, reply, done) => {
    // The route's template, not the URL: ids in paths do not multiply the metric's label values.
    context.requests.record(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    request.log.info(
      { method: request.method, path: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: request.ip },
      'request',
    );
    done();
  });

  installErrorHandling(app, methods);
  installRequestBodyChecks(app);
  installAccessControl(app, context.identity);
  refuseUnsupportedPreconditions(app);
  installConditionalRequests(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Bulwark firewall appliance API',
        version: BUILD.version,
        description: 'Management API of the Bulwark firewall appliance. Errors answer `{"error": "<message>"}`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'ApiKey <secret>' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
      // Relative: the appliance that serves the document is the one it describes, whatever its address.
      servers: [{ url: '/', description: 'This appliance' }],
    },
    transform: ({ schema, url, route }) => ({ schema: documentConditional(schema as never, route.config?.conditional) as typeof schema, url }),
    transformObject: finishDocument,
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Writes of a path whose GET answers an ETag honour If-Match against that tag (http/conditional-twins.ts).
  for (const route of new ConditionalTwins(context.store).apply(areas.flatMap((area) => area.routes))) registerRoute(app, route, context);
  await registerConsole(app, options.consoleDir);
  app.addHook('onReady', async () => {
    for (const area of areas) await area.start?.(app);
    // The daemons come back from their applied state in the background: the API answers (and /status says what
    // each waits for) meanwhile.
    context.restore.start();
  });
  app.addHook('onClose', async () => {
    await context.restore.stop();
    for (const area of [...areas].reverse()) await area.stop?.();
    await platform.close();
    stopHashing();
    apiLog.attach(null);
    context.localLogs.close();
    db.close();
  });
  return app;
}

function registerRoute(app: FastifyInstance, route: RouteSpec, context: AppContext): void {
  const extension = extensionOf(route.method, route.path);
  const permissionNote = route.access === 'public' ? 'No credential needed.' : route.access === 'authenticated' ? 'Any valid credential.' : `Requires \`${route.access}\`.`;
  app.route({
    method: route.method,
    url: toRouterPath(route.path),
    config: { access: route.access, acceptsTicket: route.acceptsTicket ?? false, conditional: route.conditional },
    bodyLimit: route.bodyLimit,
    schema: {
      ...route.schema,
      response: documentedResponses(route),
      operationId: operationIdOf(route.method, route.path),
      tags: route.tags,
      summary: route.summary,
      description: extension ? `${permissionNote} Extension beyond the specification: ${extension.why}` : permissionNote,
      ...(route.access === 'public' ? { security: [] } : {}),
    },
    handler: route.method === 'GET'
      ? async (request, reply) => route.handler(request, reply)
      : settledWrite(context.models, route.handler),
  });
}
