import { Type, type Static } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Permission } from '../core/permissions.js';
import { badRequest, forbidden, unauthorized } from '../core/errors.js';
import { TEMPLATE_SECTIONS } from '../agent/sections.js';
import { AGENT_PATHS } from '../agent/protocol.js';
import { roleAllows, type ControllerIdentity } from './accounts.js';
import type { Controller } from './server.js';
import { CHANNELS } from './channels.js';
import { checkSections, checkVariables } from './templates.js';
import { listAudit, recordAudit } from './audit.js';
import { PageFields, pageOf } from './paging.js';
import { searchFleet } from './search.js';
import { ApplianceSecrets } from './secrets.js';
import { CONSOLE_CSP, CONSOLE_CSS, CONSOLE_HTML, CONSOLE_JS } from './console/page.js';

/** What a controller route requires: a permission of the appliance's catalogue, any account, or nothing. */
export type ControllerAccess = Permission | 'authenticated' | 'public';

declare module 'fastify' {
  interface FastifyRequest {
    controllerIdentity?: ControllerIdentity;
  }
  interface FastifyContextConfig {
    controllerAccess?: ControllerAccess;
  }
}

const Credentials = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });
const NewAccount = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }), role: Type.String() }, { additionalProperties: false });
const NewToken = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 120, pattern: '^[^\\x00-\\x1f]+$' }),
  variables: Type.Optional(Type.Record(Type.String(), Type.String())),
  expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 86400, description: 'default 86400' })),
}, { additionalProperties: false });
const Enrol = Type.Object({ token: Type.String({ maxLength: 300 }), csr: Type.String({ maxLength: 16384 }), sealing_key: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false });
const SecretParams = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }) });
const SecretName = Type.Object({ name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }) });
const SecretValue = Type.Object({ value: Type.String({ minLength: 1, maxLength: 8192, writeOnly: true }) }, { additionalProperties: false });
const FleetSecret = Type.Object({ value: Type.String({ minLength: 1, maxLength: 8192, writeOnly: true }), appliance_ids: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100000, uniqueItems: true })) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const Variables = Type.Object({ variables: Type.Record(Type.String(), Type.String()) }, { additionalProperties: false });
const DriftPolicy = Type.Union([Type.Literal('overwrite'), Type.Literal('adopt')], { description: 'a local edit to an owned object: overwritten at the next rollout (default), or adopted into the template' });
const RulePlacement = Type.Union([Type.Literal('priority'), Type.Literal('first'), Type.Literal('last')], { description: "where the template's rules go: each at the priority it gives (default), or one block in the template's order before (first) or after (last) the appliance's own rules" });
const NewTemplate = Type.Object({ name: Type.String({ minLength: 1, maxLength: 120 }), sections: Type.Object({}, { additionalProperties: true }), drift_policy: Type.Optional(DriftPolicy), rule_placement: Type.Optional(RulePlacement) }, { additionalProperties: false });
const TemplateUpdate = Type.Object({ sections: Type.Object({}, { additionalProperties: true }), drift_policy: Type.Optional(DriftPolicy), rule_placement: Type.Optional(RulePlacement) }, { additionalProperties: false });
const NewRollout = Type.Object({
  template_id: Type.String({ format: 'uuid' }),
  appliance_ids: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100000, uniqueItems: true })),
  canary: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'appliances in the first wave (default 1)' })),
  percentages: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), { maxItems: 20, description: 'cumulative share of the targets after each later wave (default [10, 50, 100])' })),
  wave_interval_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86400, description: 'soak time between a wave applied and the next opening (default 0)' })),
  max_failures: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, description: 'failures tolerated before the rollout halts (default 0: the first failure halts)' })),
  rollback_on_halt: Type.Optional(Type.Boolean({ description: 'when it halts, the appliances it already changed get their previous configuration back as a new revision (default false)' })),
}, { additionalProperties: false });
const ApplianceQuery = Type.Object({ drifted: Type.Optional(Type.Boolean()), version: Type.Optional(Type.String({ maxLength: 64 })), ...PageFields }, { additionalProperties: false });
const PageQuery = Type.Object(PageFields, { additionalProperties: false });
const AuditQuery = Type.Object({
  before: Type.Optional(Type.Integer({ minimum: 1, description: 'only events older than this id (a cursor new events do not shift)' })),
  appliance_id: Type.Optional(Type.String({ format: 'uuid' })),
  action: Type.Optional(Type.String({ maxLength: 64 })),
  actor: Type.Optional(Type.String({ maxLength: 120 })),
  ...PageFields,
}, { additionalProperties: false });
const SearchQuery = Type.Object({
  contains: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'text a string value of an owned object contains' })),
  section: Type.Optional(Type.String({ maxLength: 32, description: 'only objects of this section' })),
  version: Type.Optional(Type.String({ maxLength: 64, description: 'the release the appliance reported' })),
  ...PageFields,
}, { additionalProperties: false });
const Halt = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false });

type Reply = { status(n: number): unknown; header(name: string, value: string): unknown };

const bearerOf = (request: FastifyRequest): string | null => {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer (\S+)$/i.exec(header) : null;
  return match ? match[1] : null;
};

/** The controller's API: accounts, enrolment, the fleet's appliances, templates and rollouts. */
export function registerControllerRoutes(app: FastifyInstance, controller: Controller): void {
  const { accounts, enrolment, views, templates, rollouts, pool } = controller;
  const secrets = new ApplianceSecrets(pool);

  // Access: every route names what it needs; the account is read from PostgreSQL per request.
  app.addHook('preHandler', async (request) => {
    const access = request.routeOptions.config.controllerAccess;
    if (access === undefined || access === 'public') return;
    const token = bearerOf(request);
    const identity = token ? await accounts.identify(token) : null;
    if (!identity) throw unauthorized('sign in: POST /api/v1/auth/login, then Authorization: Bearer <token>');
    if (access !== 'authenticated' && !roleAllows(identity.role, access)) throw forbidden(`requires ${access}`);
    request.controllerIdentity = identity;
  });
  const who = (request: FastifyRequest) => request.controllerIdentity!.username;
  const route = <S extends Record<string, unknown>>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, access: ControllerAccess, schema: S, handler: (request: FastifyRequest<never>, reply: never) => unknown) =>
    app.route({ method, url, schema, config: { controllerAccess: access }, handler: handler as never });

  // The console page and its two files (console/page.ts): static, signed in through the API like any client.
  for (const [url, type, text] of [['/fleet', 'text/html; charset=utf-8', CONSOLE_HTML], ['/fleet/console.js', 'text/javascript; charset=utf-8', CONSOLE_JS], ['/fleet/console.css', 'text/css; charset=utf-8', CONSOLE_CSS]] as const) {
    route('GET', url, 'public', {}, async (_request, reply: Reply & { type(t: string): unknown }) => {
      reply.type(type);
      reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      return text;
    });
  }
  route('GET', '/api/v1/health', 'public', {}, async () => {
    await pool.query('SELECT 1');
    return { status: 'ok', database: 'reachable', agents_connected_here: controller.hub.connectedCount };
  });
  route('GET', '/api/v1/auth/register', 'public', {}, async () => ({ open: (await accounts.count()) === 0 }));
  route('POST', '/api/v1/auth/register', 'public', { body: Credentials }, async (request: FastifyRequest<{ Body: Static<typeof Credentials> }>) =>
    accounts.registerFirst(request.body.username, request.body.password));
  route('POST', '/api/v1/auth/login', 'public', { body: Credentials }, async (request: FastifyRequest<{ Body: Static<typeof Credentials> }>) =>
    accounts.login(request.body.username, request.body.password));
  route('POST', '/api/v1/auth/logout', 'authenticated', {}, async (request: FastifyRequest) => {
    await accounts.logout(bearerOf(request)!);
    return { signed_out: true };
  });
  route('GET', '/api/v1/accounts', 'users:read', {}, async () => accounts.list());
  route('POST', '/api/v1/accounts', 'users:write', { body: NewAccount }, async (request: FastifyRequest<{ Body: Static<typeof NewAccount> }>) => {
    const created = await accounts.create(request.body.username, request.body.password, request.body.role);
    await recordAudit(pool, { actor: who(request), action: 'account.created', detail: { account_id: created.id, username: created.username, role: created.role } });
    return created;
  });

  route('POST', '/api/v1/enrolment-tokens', 'settings:write', { body: NewToken }, async (request: FastifyRequest<{ Body: Static<typeof NewToken> }>) =>
    enrolment.issue({ name: request.body.name, variables: checkVariables(request.body.variables), ttlSeconds: request.body.expires_in_seconds ?? 86400, createdBy: who(request) }));
  route('GET', AGENT_PATHS.ca, 'public', {}, async (_request, reply: { type(t: string): unknown }) => {
    reply.type('application/x-pem-file');
    return controller.ca.certificate_pem;
  });
  route('POST', AGENT_PATHS.enrol, 'public', { body: Enrol }, async (request: FastifyRequest<{ Body: Static<typeof Enrol> }>) =>
    enrolment.enrol(request.body.token, request.body.csr, request.body.sealing_key));
  route('PUT', '/api/v1/appliances/:id/secrets/:name', 'settings:write', { params: SecretParams, body: SecretValue }, async (request: FastifyRequest<{ Params: Static<typeof SecretParams>; Body: Static<typeof SecretValue> }>) =>
    secrets.put(request.params.name, request.body.value, [request.params.id], who(request)));
  route('GET', '/api/v1/appliances/:id/secrets', 'settings:read', { params: IdParams }, async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>) => {
    await views.appliance(request.params.id);
    return secrets.list(request.params.id);
  });
  route('DELETE', '/api/v1/appliances/:id/secrets/:name', 'settings:write', { params: SecretParams }, async (request: FastifyRequest<{ Params: Static<typeof SecretParams> }>) => {
    await secrets.remove(request.params.id, request.params.name, who(request));
    return { removed: true };
  });
  route('PUT', '/api/v1/secrets/:name', 'settings:write', { params: SecretName, body: FleetSecret }, async (request: FastifyRequest<{ Params: Static<typeof SecretName>; Body: Static<typeof FleetSecret> }>) =>
    secrets.put(request.params.name, request.body.value, request.body.appliance_ids, who(request)));

  route('GET', '/api/v1/fleet/summary', 'dashboard:view', {}, async () => views.summary());
  route('GET', '/api/v1/appliances', 'dashboard:view', { querystring: ApplianceQuery }, async (request: FastifyRequest<{ Querystring: Static<typeof ApplianceQuery> }>, reply: Reply) => {
    const { total, items } = await views.appliances(request.query, pageOf(request.query));
    reply.header('x-total-count', String(total));
    return items;
  });
  route('GET', '/api/v1/fleet/search', 'dashboard:view', { querystring: SearchQuery }, async (request: FastifyRequest<{ Querystring: Static<typeof SearchQuery> }>, reply: Reply) => {
    const { section, contains, version } = request.query;
    if (section !== undefined && !(section in TEMPLATE_SECTIONS)) throw badRequest(`querystring.section: not a section a template can own (${Object.keys(TEMPLATE_SECTIONS).join(', ')})`);
    if (section !== undefined && contains === undefined) throw badRequest('querystring.contains: give the text to look for in that section');
    if (contains === undefined && version === undefined) throw badRequest('querystring: give contains (with section, optionally) or version');
    const { total, appliances } = await searchFleet(pool, { section, contains, version }, pageOf(request.query));
    reply.header('x-total-count', String(total));
    return appliances;
  });
  route('GET', '/api/v1/audit', 'logs:view', { querystring: AuditQuery }, async (request: FastifyRequest<{ Querystring: Static<typeof AuditQuery> }>, reply: Reply) => {
    const { total, events } = await listAudit(pool, { ...request.query, ...pageOf(request.query) });
    reply.header('x-total-count', String(total));
    return events;
  });
  route('GET', '/api/v1/appliances/:id', 'dashboard:view', { params: IdParams }, async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>) =>
    views.appliance(request.params.id));
  route('PUT', '/api/v1/appliances/:id/variables', 'settings:write', { params: IdParams, body: Variables }, async (request: FastifyRequest<{ Params: Static<typeof IdParams>; Body: Static<typeof Variables> }>) => {
    await views.appliance(request.params.id);
    const variables = checkVariables(request.body.variables);
    await pool.query('UPDATE appliances SET variables = $2 WHERE id = $1', [request.params.id, JSON.stringify(variables)]);
    await recordAudit(pool, { actor: who(request), applianceId: request.params.id, action: 'appliance.variables_set', detail: { names: Object.keys(variables) } });
    return views.appliance(request.params.id);
  });
  route('POST', '/api/v1/appliances/:id/revoke', 'settings:write', { params: IdParams }, async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>) => {
    await views.appliance(request.params.id);
    // The notification reaches every controller process at commit: whichever holds the connection closes it.
    await pool.query('UPDATE appliances SET revoked_at = coalesce(revoked_at, now()), connected_to = NULL WHERE id = $1', [request.params.id]);
    await pool.query('SELECT pg_notify($1, $2)', [CHANNELS.revoke, request.params.id]);
    await recordAudit(pool, { actor: who(request), applianceId: request.params.id, action: 'appliance.revoked' });
    return views.appliance(request.params.id);
  });

  route('GET', '/api/v1/templates', 'rules:read', { querystring: PageQuery }, async (request: FastifyRequest<{ Querystring: Static<typeof PageQuery> }>, reply: Reply) => {
    const { total, items } = await templates.list(pageOf(request.query));
    reply.header('x-total-count', String(total));
    return items;
  });
  route('POST', '/api/v1/templates', 'rules:write', { body: NewTemplate }, async (request: FastifyRequest<{ Body: Static<typeof NewTemplate> }>, reply: Reply) => {
    const placement = request.body.rule_placement ?? 'priority';
    const created = await templates.create(request.body.name, checkSections(request.body.sections, 'body.sections', placement), request.body.drift_policy ?? 'overwrite', placement);
    await recordAudit(pool, { actor: who(request), action: 'template.created', detail: { template_id: created.id, name: created.name, sections: Object.keys(created.sections) } });
    reply.status(201);
    return created;
  });
  route('GET', '/api/v1/templates/:id', 'rules:read', { params: IdParams }, async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>) => templates.get(request.params.id));
  route('PUT', '/api/v1/templates/:id', 'rules:write', { params: IdParams, body: TemplateUpdate }, async (request: FastifyRequest<{ Params: Static<typeof IdParams>; Body: Static<typeof TemplateUpdate> }>) => {
    // Without a new placement the stored one judges the rules (a priority is refused under first or last).
    const placement = request.body.rule_placement ?? (await templates.get(request.params.id)).rule_placement;
    const updated = await templates.update(request.params.id, checkSections(request.body.sections, 'body.sections', placement), request.body.drift_policy, request.body.rule_placement);
    await recordAudit(pool, { actor: who(request), action: 'template.updated', detail: { template_id: updated.id, name: updated.name, sections: Object.keys(updated.sections) } });
    return updated;
  });

  route('GET', '/api/v1/rollouts', 'dashboard:view', { querystring: PageQuery }, async (request: FastifyRequest<{ Querystring: Static<typeof PageQuery> }>, reply: Reply) => {
    const { total, items } = await views.rollouts(pageOf(request.query));
    reply.header('x-total-count', String(total));
    return items;
  });
  route('POST', '/api/v1/rollouts', 'backup:write', { body: NewRollout }, async (request: FastifyRequest<{ Body: Static<typeof NewRollout> }>, reply: Reply) => {
    const body = request.body;
    const { id } = await rollouts.create({
      template_id: body.template_id, appliance_ids: body.appliance_ids, canary: body.canary ?? 1, percentages: body.percentages ?? [10, 50, 100],
      wave_interval_seconds: body.wave_interval_seconds ?? 0, max_failures: body.max_failures ?? 0, rollback_on_halt: body.rollback_on_halt ?? false,
    }, who(request));
    reply.status(201);
    return views.rollout(id);
  });
  route('GET', '/api/v1/rollouts/:id', 'dashboard:view', { params: IdParams }, async (request: FastifyRequest<{ Params: Static<typeof IdParams> }>) => views.rollout(request.params.id));
  route('POST', '/api/v1/rollouts/:id/halt', 'backup:write', { params: IdParams, body: Type.Optional(Halt) }, async (request: FastifyRequest<{ Params: Static<typeof IdParams>; Body: Static<typeof Halt> | undefined }>) => {
    await views.rollout(request.params.id);
    await rollouts.halt(request.params.id, request.body?.reason ?? `halted by ${who(request)}`, who(request));
    return views.rollout(request.params.id);
  });
}
