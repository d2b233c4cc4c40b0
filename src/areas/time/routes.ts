import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { LogLines, LogQuery, tailLines } from '../common/log-query.js';
import { describeRefusal, logRefusal } from '../common/checker-refusal.js';
import { TimeActionResult, TimeConfig, TimeSource, TimeStatus } from './schema.js';
import { TIME_KINDS, TimeService, validateSource, validateTimeConfig } from './service.js';

const TAGS = ['time'];
const READ = 'settings:read' as const;
const WRITE = 'settings:write' as const;

/** The time service: chrony's configuration, its applier, and the default sources seeded at the first start. */
export function createTimeArea(context: AppContext): Area {
  const { models } = context;
  const config = models.singleton({ kind: TIME_KINDS.config, noun: 'time-service configuration', writeAccess: WRITE, schema: TimeConfig, validate: (data) => validateTimeConfig(data, context.config.dataDir) });
  // A source is a host name or an address: host names are compared regardless of case.
  const sources = models.collection({ kind: TIME_KINDS.source, noun: 'time source', writeAccess: WRITE, schema: TimeSource, unique: [{ field: 'address', caseInsensitive: true }], validate: validateSource });
  const access = { read: READ, write: WRITE };
  const time = new TimeService(context, { config, sources });
  context.apply.register('time', async () => {
    // Nothing to do for a service that is off and not running (the check hook still validates it).
    if (config.read().enabled || time.active) await time.apply();
  }, {
    check: async () => {
      const { check: result, text } = await time.check();
      if (!result.ok) {
        logRefusal(context, 'chronyd', result);
        return { errors: [describeRefusal('chrony', result, text)] };
      }
      return { errors: [], info: [result.checked ? `the chrony configuration passes ${result.checker}` : result.output] };
    },
  });
  const action = (name: 'start' | 'stop' | 'restart'): RouteSpec => ({
    method: 'POST', path: `/api/v1/time/${name}`, access: WRITE, tags: TAGS, summary: `${name[0].toUpperCase()}${name.slice(1)} chronyd`,
    schema: { response: { 200: TimeActionResult } },
    handler: () => time.control(name),
  });
  const routes: RouteSpec[] = [
    {
      method: 'GET', path: '/api/v1/time/status', access: READ, tags: TAGS, summary: 'NTP service state and source synchronisation',
      schema: { response: { 200: TimeStatus } },
      handler: async () => {
        const status = await context.platform.daemons.status('chronyd');
        const tracking = await context.platform.daemons.timeTracking();
        const { pid, config_version, config_sha256 } = await time.report();
        return {
          running: status.running,
          pid,
          config_version,
          config_sha256,
          version: `${status.version} (${status.running ? 'running' : 'stopped'})`,
          sources_count: sources.objects().filter((s) => s.data.enabled).length,
          ...tracking,
          ...time.applyState(),
          simulated: status.simulated,
        };
      },
    },
    ...singletonRoutes(config, { path: '/api/v1/time/config', access, tags: TAGS }),
    {
      method: 'POST', path: '/api/v1/time/apply', access: WRITE, tags: TAGS, summary: 'Render chrony.conf, check it with chronyd -p, and restart or stop chronyd',
      schema: { response: { 200: TimeActionResult } },
      handler: () => time.apply(),
    },
    action('start'),
    action('stop'),
    action('restart'),
    route({
      method: 'GET', path: '/api/v1/time/logs', access: READ, tags: TAGS, summary: 'Tail of the time-service log, newest first',
      schema: { querystring: LogQuery, response: { 200: LogLines } },
      handler: async (request) => tailLines(await context.platform.daemons.logs('chronyd'), request.query),
    }),
    ...collectionRoutes(sources, { path: '/api/v1/time/sources', access, tags: TAGS, operations: ['list', 'create', 'read', 'update', 'delete'] }),
  ];
  return { name: 'time', routes, start: () => time.seed() };
}

