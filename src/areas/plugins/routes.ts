import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
import { Message } from '../common/schemas.js';
import { PluginsService, type AliasFeeder } from './service.js';
import { MAX_FINDINGS_PER_PLUGIN, ProvidedFinding, type PluginFindings } from '../packet-filter/plugin-findings.js';

const TAGS = ['plugins'];
const NameParams = Type.Object({ name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }) });
const PluginConfig = Type.Object({ name: Type.String(), enabled: Type.Boolean(), settings: Type.Record(Type.String(), Type.Unknown()) });
const Manifest = Type.Object({
  name: Type.String(), version: Type.String(), description: Type.String(), author: Type.String(), plugin_type: Type.String(),
  wasm_file: Type.Union([Type.String(), Type.Null()]), hooks: Type.Array(Type.String()), default_settings: Type.Record(Type.String(), Type.Unknown()),
  entry: Type.Union([Type.String(), Type.Null()]), permissions: Type.Array(Type.String()),
  settings_schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]), timer_seconds: Type.Integer(), system_blocklist: Type.Boolean(),
});

function routes(plugins: PluginsService): RouteSpec[] {
  return [
    {
      method: 'GET', path: '/api/v1/plugins', access: 'plugins:read', tags: TAGS, summary: 'Installed plugins and their state',
      schema: {
        response: {
          200: Type.Object({
            plugins: Type.Array(Type.Object({ name: Type.String(), version: Type.String(), description: Type.String(), author: Type.String(), state: Type.String(), hooks: Type.Array(Type.String()), built_in: Type.Boolean() })),
            total: Type.Integer(),
            running: Type.Integer(),
          }),
        },
      },
      handler: () => plugins.list(),
    },
    {
      method: 'GET', path: '/api/v1/plugins/discover', access: 'plugins:read', tags: TAGS, summary: 'Scan the plugin directory for plugin.toml manifests',
      schema: {
        response: {
          200: Type.Object({
            plugins: Type.Array(Type.Object({ manifest: Manifest, path: Type.String(), installed: Type.Boolean() })),
            plugin_dir: Type.String(),
            invalid: Type.Array(Type.Object({ path: Type.String(), error: Type.String() })),
          }),
        },
      },
      handler: () => plugins.discover(),
    },
    route({
      method: 'POST', path: '/api/v1/plugins/toggle', access: 'plugins:write', tags: TAGS, summary: 'Enable or disable a plugin (listed name or toggle key); enabling a third-party plugin runs it',
      schema: {
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), enabled: Type.Boolean({ default: true }) }),
        response: { 200: Message, 404: ErrorAnswer('No plugin has that name or toggle key'), 409: ErrorAnswer('The plugin could not be started (the reason); it stays disabled') },
      },
      handler: (request) => {
        const { name, enabled } = request.body;
        return plugins.toggle(name, enabled, request.identity!);
      },
    }),
    route({
      method: 'GET', path: '/api/v1/plugins/{name}/logs', access: 'plugins:read', tags: TAGS, summary: "A plugin's log (lifecycle and its own output), newest first",
      schema: { params: NameParams, querystring: Type.Object({ lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 200 })) }), response: { 200: Type.Object({ name: Type.String(), entries: Type.Array(Type.String()) }) } },
      handler: (request) => plugins.logs(request.params.name, request.query.lines ?? 200),
    }),
    route({
      method: 'PUT', path: '/api/v1/plugins/{name}/provided/entries', access: 'aliases:write', tags: TAGS,
      summary: "A running plugin feeds the addresses of the `plugin` aliases naming it (its own key only); the kernel sets follow",
      schema: {
        params: NameParams,
        body: Type.Object({ entries: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100_000 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ name: Type.String(), entries: Type.Integer(), aliases: Type.Array(Type.String()), applied: Type.Boolean() }),
          403: ErrorAnswer("The caller is not this plugin's own key"),
          409: ErrorAnswer('The packet filter refused the new sets; the previous ones stay in force'),
        },
      },
      handler: (request) => plugins.feedAliases(request.params.name, request.body.entries, request.identity!),
    }),
    route({
      method: 'PUT', path: '/api/v1/plugins/{name}/provided/findings', access: 'rules:read', tags: TAGS,
      summary: "A running plugin replaces its findings about rules, shown in GET /rules/analysis marked with it (its own key only)",
      schema: {
        params: NameParams,
        body: Type.Object({ findings: Type.Array(ProvidedFinding, { maxItems: MAX_FINDINGS_PER_PLUGIN }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ name: Type.String(), findings: Type.Integer() }),
          403: ErrorAnswer("The caller is not this plugin's own key"),
        },
      },
      handler: (request) => plugins.provideFindings(request.params.name, request.body.findings, request.identity!),
    }),
    route({
      method: 'POST', path: '/api/v1/plugins/{name}/deliveries', access: 'plugins:read', tags: TAGS,
      summary: "A running plugin posts one event to the webhook of its own settings (its own key only): signed, through the outbound guard, with retries",
      schema: {
        params: NameParams,
        body: Type.Object({
          hook: Type.String({ minLength: 1, maxLength: 64 }),
          topic: Type.String({ minLength: 1, maxLength: 128 }),
          at: Type.String({ maxLength: 64 }),
          payload: Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 }),
        }, { additionalProperties: false }),
        response: {
          202: Type.Object({ delivery: Type.String() }),
          403: ErrorAnswer("The caller is not this plugin's own key"),
          409: ErrorAnswer('The plugin has no url setting, or its url is not allowed by the outbound guard'),
        },
      },
      handler: async (request, reply) => {
        reply.code(202);
        return plugins.deliver(request.params.name, request.body, request.identity!);
      },
    }),
    route({
      method: 'GET', conditional: 'read', path: '/api/v1/plugins/{name}/config', access: 'plugins:read', tags: TAGS, summary: "A plugin's enabled flag and settings",
      schema: { params: NameParams, response: { 200: PluginConfig } },
      handler: (request) => plugins.config(request.params.name),
    }),
    route({
      method: 'PUT', path: '/api/v1/plugins/{name}/config', access: 'plugins:write', tags: TAGS, summary: "Change a plugin's settings (keys not sent are kept)",
      schema: { params: NameParams, body: Type.Object({ settings: Type.Record(Type.String(), Type.Unknown(), { default: {} }) }, { additionalProperties: false }), response: { 200: PluginConfig } },
      handler: (request) => plugins.setConfig(request.params.name, request.body.settings),
    }),
  ];
}

export function createPluginsArea(context: AppContext, needs: { aliases?: AliasFeeder; findings?: PluginFindings } = {}): Area {
  const plugins = new PluginsService(context, needs.aliases, needs.findings);
  return { name: 'plugins', routes: routes(plugins), start: (app) => plugins.start(app), stop: async () => {
    await plugins.host.stopAll();
    await plugins.deliveries.stop();
  } };
}
