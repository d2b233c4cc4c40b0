import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { RouteSpec } from '../../http/route.js';
import { Singleton } from '../../http/singleton.js';
import { LogLines, LogQuery, tailLines } from '../common/log-query.js';
import { describeRefusal, logRefusal } from '../common/checker-refusal.js';
import { TimeActionResult, TimeConfig, TimeSource, TimeStatus } from './schema.js';
import { TIME_KINDS, TimeService, validateSource, validateTimeConfig } from './service.js';

const TAGS = ['time'];
const READ = 'settings:read' as const;
const WRITE = 'settings:write' as const;
const services = new Map<AppContext, TimeService>();

function routes(context: AppContext): RouteSpec[] {
  const config = new Singleton({ kind: TIME_KINDS.config, path: '/api/v1/time/config', schema: TimeConfig, access: { read: READ, write: WRITE }, validate: (data) => validateTimeConfig(data, context.config.dataDir), tags: TAGS, noun: 'time-service configuration' }, context.store, context.sealer);
  const sources = context.collections.declare({
    kind: TIME_KINDS.source, path: '/api/v1/time/sources', schema: TimeSource, access: { read: READ, write: WRITE },
    operations: ['list', 'create', 'update', 'delete'], unique: ['address'], validate: validateSource, tags: TAGS, noun: 'time source',
  });
  const time = new TimeService(context, { config, sources });
  services.set(context, time);
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
  return [
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
    ...config.routes(),
    {
      method: 'POST', path: '/api/v1/time/apply', access: WRITE, tags: TAGS, summary: 'Render chrony.conf, check it with chronyd -p, and restart or stop chronyd',
      schema: { response: { 200: TimeActionResult } },
      handler: () => time.apply(),
    },
    action('start'),
    action('stop'),
    action('restart'),
    {
      method: 'GET', path: '/api/v1/time/logs', access: READ, tags: TAGS, summary: 'Tail of the time-service log, newest first',
      schema: { querystring: LogQuery, response: { 200: LogLines } },
      handler: async (request) => tailLines(await context.platform.daemons.logs('chronyd'), request.query as { lines?: number; search?: string }),
    },
    ...sources.routes(),
  ];
}

export const timeArea: Area = { name: 'time', routes, start: (context) => services.get(context)?.seed() };
