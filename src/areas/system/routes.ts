import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import type { ConfigData } from '../../store/config-store.js';
import { badRequest } from '../../core/errors.js';
import { ApplyReport, Banner, Console, General, Ssh, SystemInfo } from './schema.js';
import { SystemService, validateGeneral } from './service.js';
import { listTimezones } from './timezones.js';
import { hostSettingsOf } from '../common/host-settings.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { registerHostSettingsApplier, registerStateTableRestore } from './host-applier.js';

const TAGS = ['system'];
const READ = 'settings:read' as const;
const WRITE = 'settings:write' as const;

let zones: string[] | null = null;
const timezones = () => (zones ??= listTimezones());

function routes(context: AppContext): RouteSpec[] {
  const system = new SystemService(context);
  const host = hostSettingsOf(context);
  const sections: Record<string, SingletonModel> = {};
  const section = (kind: string, path: string, schema: typeof General | typeof Banner | typeof Ssh | typeof Console, noun: string, apply: (data: ConfigData) => Promise<object>, validate?: (data: ConfigData) => void): RouteSpec[] => {
    const model = context.models.singleton({ kind, noun, writeAccess: WRITE, schema, validate });
    sections[kind] = model;
    const [get] = singletonRoutes(model, { path, access: { read: READ, write: WRITE }, tags: TAGS });
    return [
      get,
      route({
        method: 'PUT', path, access: WRITE, tags: TAGS,
        summary: `Change ${noun} (fields not sent are kept) and put it in force on the host (409 with the reason, nothing changed, when the host refuses it)`,
        schema: { body: model.schemas.patch, response: { 200: ApplyReport } },
        // Applied to the host first, stored only once in force: a refusal leaves host and stored settings as they were.
        handler: (request) => host.exclusive(async () => {
          const previous = model.read();
          const report = await apply(model.preview(request.body as ConfigData));
          await host.keep(kind, () => model.write(request.body as ConfigData), () => apply(previous));
          return report;
        }),
      }),
    ];
  };
  const general = { read: () => ({ domain: '', ...(context.store.getSingleton('system_general') ?? {}) }) };
  const routeList: RouteSpec[] = [
    {
      method: 'GET', path: '/api/v1/system/info', access: READ, tags: TAGS, summary: 'OS, hardware, uptime, load, memory and disk of the appliance',
      schema: { response: { 200: SystemInfo } },
      handler: () => system.info(general.read()),
    },
    ...section('system_general', '/api/v1/system/general', General, 'hostname, domain and timezone', (d) => system.applyGeneral(d), (d) => validateGeneral(d, timezones)),
    ...section('system_banner', '/api/v1/system/banner', Banner, 'login banner and message of the day', (d) => system.applyBanner(d), (d) => {
      for (const field of ['login_banner', 'motd']) {
        if (Buffer.byteLength(String(d[field])) > 8192) throw badRequest(`body.${field} must be at most 8 KiB`);
      }
    }),
    ...section('system_ssh', '/api/v1/system/ssh', Ssh, 'SSH server settings', (d) => system.applySsh(d)),
    ...section('system_console', '/api/v1/system/console', Console, 'console settings', (d) => system.applyConsole(d)),
    {
      method: 'GET', path: '/api/v1/system/timezones', access: READ, tags: TAGS, summary: 'IANA timezones of the system zone database',
      schema: { response: { 200: Type.Array(Type.String()) } },
      handler: () => timezones(),
    },
  ];
  registerHostSettingsApplier(context, system, sections);
  registerStateTableRestore(context);
  return routeList;
}

export function createSystemArea(context: AppContext): Area {
  return { name: 'system', routes: routes(context) };
}
