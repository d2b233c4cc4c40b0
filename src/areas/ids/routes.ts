import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { badRequest } from '../../core/errors.js';
import { ErrorBody, route, type RouteSpec } from '../../http/route.js';
import { IdParams } from '../../model/schema-helpers.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { IdsService } from './service.js';
import type { AlertFeed } from '../../live/feeds.js';
import {
  AlertsQuery, ClassifyBody, IdsAlert, IdsRule, IdsStats, RulesQuery, RuleUpdate, RulesetCreate, RulesetRecord, RulesetUpdate,
} from './schema.js';

const tags = ['ids'];
const Message = Type.Object({ message: Type.String() });
const errors = { 400: ErrorBody, 404: ErrorBody };
const access = { read: 'ids:read', write: 'ids:write' } as const;

/** The IDS area: it publishes alerts to the dashboard's feed; its service is the AI area's source of alerts. */
export function createIdsArea(context: AppContext, needs: { alerts: AlertFeed }): Area & { service: IdsService } {
  const service = new IdsService(context, needs.alerts);
  const active = () => service.config.read().mode !== 'disabled';
  // One applier of the whole configuration (POST /reload, restore, import, commit-confirm): an engine that is
  // off and not running has nothing to do.
  context.apply.register('ids', async () => {
    if (active() || (await context.platform.idsEngine.status().catch(() => ({ running: false }))).running) await service.reload();
  });
  // A start of Bulwark runs what the engine was last made to run (the applied record), never edits not yet reloaded;
  // an engine left running with it is adopted. In the background: Suricata loads rules for seconds.
  // Without a record (a database from before records were kept) the stored configuration is what ran: see restoreApplied.
  const appliedOn = () => (service.applied().recorded ? service.applied().config : service.config.read()).mode !== 'disabled';
  context.restore.register({
    name: 'ids', daemon: 'suricata',
    enabled: appliedOn,
    running: async () => (await context.platform.idsEngine.status()).running,
    appliedVersion: () => service.applied().version,
    restore: () => service.restoreApplied(),
  });
  return { name: 'ids', routes: routes(context, service), service };
}

function routes(context: AppContext, ids: IdsService): RouteSpec[] {
  return [
    ...singletonRoutes(ids.config, { path: '/api/v1/ids/config', access, tags }),
    {
      method: 'POST', path: '/api/v1/ids/reload', access: 'ids:write', tags,
      summary: 'Compile enabled rules of enabled rulesets (overrides and suppressions applied) and reload the engine',
      schema: { response: { 200: Type.Object({ message: Type.String(), loaded_rules: Type.Integer() }) } },
      handler: () => ids.reload(),
    },
    {
      method: 'GET', path: '/api/v1/ids/stats', access: 'ids:read', tags, summary: 'Engine counters and alert aggregates',
      schema: { response: { 200: IdsStats } },
      handler: () => ids.stats(),
    },
    route({
      method: 'GET', path: '/api/v1/ids/alerts', access: 'ids:read', tags, summary: 'Alerts, newest first (X-Total-Count carries the total)',
      schema: { querystring: AlertsQuery, response: { 200: Type.Array(IdsAlert), ...errors } },
      handler: (request, reply) => {
        const { total, alerts } = ids.alerts(request.query);
        reply.header('x-total-count', String(total));
        return alerts;
      },
    }),
    {
      method: 'DELETE', path: '/api/v1/ids/alerts', access: 'ids:write', tags, summary: 'Purge every alert',
      schema: { response: { 200: Type.Object({ message: Type.String(), purged: Type.Integer() }) } },
      handler: () => {
        const purged = ids.purgeAlerts();
        return { message: `${purged} alerts purged`, purged };
      },
    },
    {
      method: 'GET', path: '/api/v1/ids/alerts/buffer-stats', access: 'ids:read', tags, summary: "The engine's alert buffer counters",
      schema: { response: { 200: Type.Object({ alerts_total: Type.Integer(), running: Type.Boolean(), uptime_secs: Type.Integer(), simulated: Type.Boolean() }) } },
      handler: () => ids.bufferStats(),
    },
    route({
      method: 'GET', path: '/api/v1/ids/alerts/{id}', access: 'ids:read', tags, summary: 'One alert with payload excerpt and metadata',
      schema: { params: IdParams(), response: { 200: IdsAlert, ...errors } },
      handler: (request) => ids.alert(request.params.id),
    }),
    route({
      method: 'PUT', path: '/api/v1/ids/alerts/{id}/acknowledge', access: 'ids:write', tags, summary: 'Acknowledge an alert',
      schema: { params: IdParams(), response: { 200: Message, ...errors } },
      handler: (request) => {
        ids.acknowledge(request.params.id);
        return { message: 'alert acknowledged' };
      },
    }),
    route({
      method: 'PUT', path: '/api/v1/ids/alerts/{id}/classify', access: 'ids:write', tags, summary: 'Classify an alert (also acknowledges it)',
      schema: { params: IdParams(), body: ClassifyBody, response: { 200: Message, ...errors } },
      handler: (request) => {
        const body = request.body;
        ids.classify(request.params.id, body.classification, body.notes);
        return { message: `alert classified as ${body.classification}` };
      },
    }),
    ...collectionRoutes(ids.rulesets, { path: '/api/v1/ids/rulesets', access, tags, operations: ['list'] }),
    route({
      method: 'POST', path: '/api/v1/ids/rulesets', access: 'ids:write', tags,
      summary: 'Add a ruleset; rules_text installs rules at once, else an enabled ruleset with a source_url is downloaded',
      bodyLimit: 70 * 1024 * 1024,
      schema: { body: RulesetCreate, response: { 201: RulesetRecord, ...errors } },
      handler: async (request, reply) => reply.status(201).send(ids.rulesets.toRecord(await ids.createRuleset(request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/ids/rulesets/{id}', access: 'ids:write', tags, summary: 'Enable, disable or change a ruleset (install as on create)',
      bodyLimit: 70 * 1024 * 1024,
      schema: { params: IdParams(), body: RulesetUpdate, response: { 200: RulesetRecord, ...errors } },
      handler: async (request) => ids.rulesets.toRecord(await ids.updateRuleset(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/ids/rulesets/{id}', access: 'ids:write', tags, summary: 'Remove a ruleset and its rules',
      schema: { params: IdParams(), response: { 404: ErrorBody } },
      handler: (request, reply) => {
        ids.deleteRuleset(request.params.id);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/ids/rules', access: 'ids:read', tags, summary: 'Individual SIDs, paginated (q/search: full-text)',
      schema: { querystring: RulesQuery, response: { 200: Type.Array(IdsRule), ...errors } },
      handler: (request, reply) => {
        const { total, rules } = ids.rules(request.query);
        reply.header('x-total-count', String(total));
        return rules;
      },
    }),
    route({
      method: 'GET', path: '/api/v1/ids/rules/search', access: 'ids:read', tags, summary: 'Full-text search across SIDs, messages and rule text (best match first)',
      schema: { querystring: RulesQuery, response: { 200: Type.Array(IdsRule), ...errors } },
      handler: (request, reply) => {
        const query = request.query;
        if (query.q === undefined && query.search === undefined) throw badRequest('querystring.q is required');
        const { total, rules } = ids.rules(request.query);
        reply.header('x-total-count', String(total));
        return rules;
      },
    }),
    route({
      method: 'GET', path: '/api/v1/ids/rules/{id}', access: 'ids:read', tags, summary: 'One rule',
      schema: { params: IdParams(), response: { 200: IdsRule, ...errors } },
      handler: (request) => ids.rule(request.params.id),
    }),
    route({
      method: 'PUT', path: '/api/v1/ids/rules/{id}', access: 'ids:write', tags, summary: 'Enable/disable one SID or override its action (applied at the next reload)',
      schema: { params: IdParams(), body: RuleUpdate, response: { 200: IdsRule, ...errors } },
      handler: (request) => ids.updateRule(request.params.id, request.body),
    }),
    ...collectionRoutes(ids.suppressions, { path: '/api/v1/ids/suppressions', access, tags, operations: ['list', 'create', 'delete'] }),
  ];
}
