/** The packet-filter area: rules, aliases, schedules, NAT, reload, pending and its stream. */
import type { CompiledGeoIp } from '../../compile/geoip-sets.js';
import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { badRequest, HttpError } from '../../core/errors.js';
import { collectionRoutes, type CollectionRouteParts } from '../../http/collection-routes.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { Uuid } from '../../model/schema-helpers.js';
import { route, type RouteSpec } from '../../http/route.js';
import { EventStreamAnswers } from '../../http/documented-responses.js';
import { CompileError } from '../../compile/firewall-model.js';
import { nftSystemView } from '../../compile/nftables.js';
import { pfSystemLines } from '../../compile/pf.js';
import { EventStream, EventStreamSet } from '../../live/event-stream.js';
import type { PendingFlags } from '../../live/pending-flags.js';
import { declareRules, RULE_KIND, RuleCreateBody, RuleUpdateBody, sortRulesByPriority, toStoredRule } from './rules.js';
import { AliasCreateBody, AliasUpdateBody, declareAliases, toStoredAlias } from './aliases.js';
import { declareSchedules, ScheduleCreateBody, ScheduleUpdateBody, toStoredSchedule } from './schedules.js';
import { declareNat, NAT_KIND, NatCreateBody, NatUpdateBody, toStoredNat } from './nat.js';
import { normalisedWriteRoutes } from './write-routes.js';
import { applyFailureWho, PacketFilterService } from './service.js';
import { SETTINGS_KIND, WAN_POLICY_KIND } from './snapshot.js';
import { auditPacketFilter } from './audit.js';
import { SimulateAnswer, SimulateBody, simulateRequest } from './simulate.js';
import { AnalysisAnswer, AnalysisQuery, analyseStored, RuleWarning, warningsFor } from './analysis.js';
import { RuleHitCounters, type SeriesSink } from './hit-counters.js';
import { listQueryFor, pageOf, readListParams } from '../../http/paging.js';

/** A broken assertion as GET /pending lists it. */
export interface BrokenAssertionView {
  id: string;
  name: string;
  expect: string;
  outcome: string;
  decided_by: string;
  rule_id: string | null;
  detail: string;
}

const ReorderBody = Type.Object({ rule_ids: Type.Array(Uuid(), { maxItems: 100_000 }) }, { additionalProperties: false });
const ReorderResult = Type.Object({ message: Type.String(), count: Type.Integer() });
const Lines = Type.Array(Type.String());
const Changes = Type.Object({ added: Type.Array(Type.String()), changed: Type.Array(Type.String()), removed: Type.Array(Type.String()) });
const Pending = Type.Object({
  firewall: Type.Boolean(),
  nat: Type.Boolean(),
  dns: Type.Boolean({ description: 'the DNS resolver configuration changed since it was last applied' }),
  changes: Type.Object({ rules: Changes, aliases: Changes, schedules: Changes, nat: Changes, settings: Changes }),
  applied_at: Type.Union([Type.String(), Type.Null()]),
  broken_assertions: Type.Array(Type.Object({
    id: Type.String(), name: Type.String(), expect: Type.String(), outcome: Type.String(),
    decided_by: Type.String({ description: 'the rule (or system rule, default policy) that decides the packet' }),
    rule_id: Type.Union([Type.String(), Type.Null()]), detail: Type.String(),
  }), { description: 'enabled transit assertions the stored configuration would break if applied (POST /reload refuses it unless force=true)' }),
});
const ReloadQuery = Type.Object({
  force: Type.Boolean({ default: false, description: 'apply even when enabled assertions would break (recorded in the audit trail)' }),
}, { additionalProperties: false });
const ReloadResult = Type.Object({
  message: Type.String(), version: Type.Union([Type.Integer(), Type.Null()]), applied_at: Type.String(), dialect: Type.String(), rules: Type.Integer(), nat_rules: Type.Integer(),
  apply_mode: Type.Union([Type.Literal('delta'), Type.Literal('full')], { description: '`delta`: only the changed sets and chains were replaced, in one transaction; `full`: the whole table or anchor was replaced' }),
});

/** Checks that ids is a complete permutation of the kind's objects; 400 names what is wrong. */
function assertPermutation(context: AppContext, kind: string, ids: readonly string[], noun: string): void {
  const existing = new Set(context.store.list(kind).map((o) => o.id));
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw badRequest(`body.rule_ids lists ${noun} ${id} twice`);
    seen.add(id);
    if (!existing.has(id)) throw badRequest(`body.rule_ids: unknown ${noun} ${id}`);
  }
  const missing = [...existing].filter((id) => !seen.has(id));
  if (missing.length) {
    throw badRequest(`body.rule_ids must list every ${noun} exactly once; missing ${missing.length}: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
  }
}

/** New complete rule order: each rule's priority becomes its position, in one transaction. */
export function reorderRules(context: AppContext, ids: readonly string[]): void {
  assertPermutation(context, RULE_KIND, ids, 'rule');
  const { store } = context;
  store.transaction(() => {
    const byId = new Map(store.list(RULE_KIND).map((o) => [o.id, o]));
    const changed = ids.flatMap((id, index) => {
      const rule = byId.get(id)!;
      return rule.data.priority === index ? [] : [{ id, data: { ...rule.data, priority: index } }];
    });
    store.updateMany(RULE_KIND, changed);
    store.reorder(RULE_KIND, ids);
  });
}

/**
 * The packet-filter area: rules, aliases, schedules, NAT, reload, and GET /pending with its stream, which also
 * carries the flags other areas own (`pendingFlags`).
 */
export function createPacketFilterArea(
  context: AppContext,
  needs: { pendingFlags: PendingFlags; geoip?: { compiled(): CompiledGeoIp; kind: string; onRefreshed(listener: () => Promise<void>): void }; metrics?: SeriesSink },
): Area & { service: PacketFilterService; hits: RuleHitCounters; usePendingAssertions(source: () => BrokenAssertionView[]): void; publishPending(): void } {
  const { models } = context;
  const aliases = declareAliases(models);
  const schedules = declareSchedules(models);
  const rules = declareRules(models);
  const nat = declareNat(models);
  const blockLogging = models.singleton({
    kind: SETTINGS_KIND, noun: 'block logging', writeAccess: 'rules:write',
    schema: Type.Object({ enabled: Type.Boolean({ default: true, description: 'log every blocked packet (NFLOG / pflog), not only rules with log set' }) }),
  });
  // A fresh appliance is not open: on a real platform, what enters a WAN-role interface is blocked unless a rule
  // passes it (as pfSense and OPNsense ship); the simulated `npm start` keeps the open default it always had.
  const wanPolicy = models.singleton({
    kind: WAN_POLICY_KIND, noun: 'WAN default block', writeAccess: 'rules:write',
    schema: Type.Object({
      enabled: Type.Boolean({
        default: !context.platform.simulated,
        description: 'block new connections entering an interface with the WAN role unless a rule passes them (the anti-lockout rule keeps the API reachable from LAN); default on for linux and freebsd, off on simulated',
      }),
    }),
  });
  const pf = new PacketFilterService(context, blockLogging, wanPolicy, needs.geoip ? () => needs.geoip!.compiled() : undefined);
  // Geo-IP rules are compiled into the ruleset in force: once a ruleset is loaded, a rule change reloads it
  // (a refusal answers the rule's write with the reload's 409 or 503).
  if (needs.geoip) {
    const reloadIfLoaded = async () => {
      if (pf.applied.read().appliedAt === null) return;
      const outcome = await pf.reload();
      if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
    };
    models.onChanged([needs.geoip.kind], reloadIfLoaded);
    needs.geoip.onRefreshed(reloadIfLoaded);
  }
  const hits = new RuleHitCounters(context, needs.metrics);
  pf.countWith(hits);
  const hitFields = { hits: Type.Object({ packets: Type.Number(), bytes: Type.Number() }), last_hit_at: Type.Union([Type.String(), Type.Null()]) };
  const ruleRecord = rules.schemas.record as { properties: Record<string, object> };
  const ruleWithHits = { ...ruleRecord, properties: { ...ruleRecord.properties, ...hitFields } };
  const streams = new EventStreamSet();
  // GET /pending: the packet filter's report plus the flags other areas own (`dns`). The stream re-sends
  // it whenever any part changes.
  // The assertions area judges the pending change against the enabled transit assertions (areas/assertions).
  let brokenAssertions: () => BrokenAssertionView[] = () => [];
  const pendingReport = () => {
    const { firewall, nat, ...rest } = pf.pending();
    return { firewall, nat, dns: needs.pendingFlags.read('dns'), ...rest, broken_assertions: brokenAssertions() };
  };
  let lastSent = '';
  const publishPending = () => {
    const report = pendingReport();
    const text = JSON.stringify(report);
    if (text === lastSent) return;
    lastSent = text;
    streams.broadcast(report);
  };
  pf.subscribe(publishPending);
  needs.pendingFlags.onAnnounced(publishPending);
  // Configuration events (applied, saved, commit-confirm started / confirmed / rolled back) are announced
  // on the pending stream too, under their topic as the SSE event name.
  context.events.on('*', (event) => {
    if (event.topic.startsWith('config.')) streams.broadcast({ ...event.payload, at: event.at }, event.topic);
  });

  // The packet filter is one applier of the configuration: POST /reload, restore, import and the
  // commit-confirm rollback all apply through the coordinator, which records a version on success.
  let lastReload: Extract<Awaited<ReturnType<PacketFilterService['reload']>>, { ok: true }> | undefined;
  context.apply.register(
    'packet_filter',
    async () => {
      const outcome = await pf.reload();
      if (!outcome.ok) throw new HttpError(outcome.status, outcome.error);
      lastReload = outcome;
    },
    {
      check: async () => {
        try {
          const compiled = pf.compile(pf.storedSnapshot());
          const result = await context.platform.packetFilter.check({ dialect: compiled.dialect, text: compiled.text });
          return result.ok
            ? { errors: [], info: [`${compiled.ruleCount} rules and ${compiled.natCount} NAT rules compile to ${compiled.dialect} and pass its check`] }
            : { errors: [`${applyFailureWho(result.stage, compiled.dialect)}: ${result.message}`] };
        } catch (error) {
          if (error instanceof CompileError) return { errors: [`does not compile: ${error.message}`] };
          throw error;
        }
      },
    },
  );

  const compiledOr409 = <T>(produce: () => T): T => {
    try {
      return produce();
    } catch (error) {
      if (error instanceof CompileError) throw new HttpError(409, `the stored configuration does not compile: ${error.message}`);
      throw error;
    }
  };

  const ruleParts: CollectionRouteParts = { path: '/api/v1/rules', access: { read: 'rules:read', write: 'rules:write' }, tags: ['rules'] };
  const aliasParts: CollectionRouteParts = { path: '/api/v1/aliases', access: { read: 'aliases:read', write: 'aliases:write' }, tags: ['aliases'] };
  // endpoints.tsv lists no GET /schedules/{id}: it is an extension (src/http/extensions.ts)
  const scheduleParts: CollectionRouteParts = { path: '/api/v1/schedules', access: { read: 'rules:read', write: 'rules:write' }, tags: ['rules'] };
  const natParts: CollectionRouteParts = { path: '/api/v1/nat', access: { read: 'nat:read', write: 'nat:write' }, tags: ['nat'] };
  const routes: RouteSpec[] = [
    // create and update take the flat request form (wire-format.md §3.2) and normalise it into the record
    {
      method: 'GET', path: ruleParts.path, access: ruleParts.access.read, tags: ruleParts.tags, conditional: 'read',
      summary: 'List rule objects, each with its hit counters (packets, bytes, last hit) since counting began',
      schema: { querystring: listQueryFor(rules.filterable), response: { 200: { type: 'array', items: ruleWithHits } } },
      handler: (request, reply) => {
        const params = readListParams(request.query as Record<string, unknown>, rules.filterable);
        const cache = request.server.readCache;
        // Cached per configuration generation and per hit sample that changed a total.
        const answer = () => cache.send(reply, RULE_KIND, `hits${hits.version}?${JSON.stringify(request.query)}`, () => {
          const records = rules.objects().map((o) => ({ ...cache.recordOf(o, (object) => rules.toRecord(object)), ...hits.of(o.id) }));
          const { page, total } = pageOf(records, params);
          return { body: page, headers: { 'x-total-count': String(total) }, itemSchema: ruleWithHits };
        });
        // Hits at most HIT_FRESH_MS old: a sample first when the last is older (no promise on the common path).
        return hits.stale() ? hits.fresh().then(answer) : answer();
      },
    },
    ...collectionRoutes(rules, { ...ruleParts, operations: ['read', 'delete'] }),
    ...normalisedWriteRoutes(rules, ruleParts, {
      createBody: RuleCreateBody,
      updateBody: RuleUpdateBody,
      toStored: (body, existing) => toStoredRule(body, existing, context.store.list(RULE_KIND)),
      around: (write) => context.store.transaction(() => {
        const result = write();
        sortRulesByPriority(context);
        return result;
      }),
      // The analysis' findings about the rule written, never blocking the write.
      annotate: { schema: { warnings: Type.Array(RuleWarning) }, add: (object) => ({ warnings: warningsFor(pf, object.id) }) },
    }),
    route({
      method: 'PUT', path: '/api/v1/rules/reorder', access: 'rules:write', tags: ['rules'],
      summary: 'Give all rules a new complete order (priority = position), atomically',
      schema: { body: ReorderBody, response: { 200: ReorderResult } },
      handler: (request) => {
        const ids = request.body.rule_ids;
        reorderRules(context, ids);
        return { message: `${ids.length} rules reordered`, count: ids.length };
      },
      // In a change set (a fleet revision's rules kept as one block), with ids of rules created earlier as $refs.
      change: {
        op: 'update', body: ReorderBody,
        apply: (_params, body) => {
          const before = context.store.list(RULE_KIND).map((rule) => rule.id);
          const ids = (body as { rule_ids: string[] }).rule_ids;
          reorderRules(context, ids);
          return { kind: RULE_KIND, before: { rule_ids: before }, after: { rule_ids: ids } };
        },
      },
    }),
    route({
      method: 'POST', path: '/api/v1/rules/simulate', access: 'rules:read', tags: ['rules'],
      summary: 'Would this packet pass? The verdict for a new connection\'s first packet, with NAT and a trace of every rule (extension)',
      schema: { body: SimulateBody, response: { 200: SimulateAnswer } },
      handler: (request) => simulateRequest(context, pf, request.body),
    }),
    route({
      method: 'GET', path: '/api/v1/rules/analysis', access: 'rules:read', tags: ['rules'],
      summary: 'Rule analysis of the stored rules: never matching (shadowed), redundant, conflicting, empty aliases in use, schedules that never fire, unused rules (extension)',
      schema: { querystring: AnalysisQuery, response: { 200: AnalysisAnswer } },
      handler: async (request) => {
        const analysis = analyseStored(pf);
        const days = request.query.unused_days;
        if (days === undefined) return analysis;
        await hits.fresh();
        return { ...analysis, unused: hits.unused(days) };
      },
    }),
    ...singletonRoutes(blockLogging, { path: '/api/v1/rules/block-logging', access: { read: 'rules:read', write: 'rules:write' }, tags: ['rules'] }),
    ...singletonRoutes(wanPolicy, { path: '/api/v1/rules/wan-default-block', access: { read: 'rules:read', write: 'rules:write' }, tags: ['rules'] }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/rules/system', access: 'rules:read', tags: ['rules'],
      summary: 'The read-only rules the appliance always adds (state handling, loopback, anti-lockout, default policy)',
      schema: { response: { 200: Lines } },
      handler: () => {
        const config = pf.configFor(pf.storedSnapshot());
        if (context.platform.packetFilter.dialect === 'pf') return pfSystemLines(config);
        return nftSystemView(config);
      },
    },
    ...collectionRoutes(schedules, { ...scheduleParts, operations: ['list', 'read', 'delete'] }),
    ...normalisedWriteRoutes(schedules, scheduleParts, { createBody: ScheduleCreateBody, updateBody: ScheduleUpdateBody, toStored: toStoredSchedule }),
    ...collectionRoutes(aliases, { ...aliasParts, operations: ['list', 'read', 'delete'] }),
    ...normalisedWriteRoutes(aliases, aliasParts, { createBody: AliasCreateBody, updateBody: AliasUpdateBody, toStored: toStoredAlias }),
    ...collectionRoutes(nat, { ...natParts, operations: ['list', 'read', 'delete'] }),
    ...normalisedWriteRoutes(nat, natParts, { createBody: NatCreateBody, updateBody: NatUpdateBody, toStored: toStoredNat }),
    route({
      method: 'PUT', path: '/api/v1/nat/reorder', access: 'nat:write', tags: ['nat'],
      summary: 'Give all NAT rules a new complete order, atomically',
      schema: { body: ReorderBody, response: { 200: ReorderResult } },
      handler: (request) => {
        const ids = request.body.rule_ids;
        assertPermutation(context, NAT_KIND, ids, 'NAT rule');
        context.store.reorder(NAT_KIND, ids);
        return { message: `${ids.length} NAT rules reordered`, count: ids.length };
      },
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/nat/pf-output', access: 'nat:read', tags: ['nat'],
      summary: 'The compiled NAT part of the stored configuration (pf anchor text, or nftables NAT chains on Linux)',
      schema: { response: { 200: Lines } },
      handler: () => compiledOr409(() => pf.compile(pf.storedSnapshot()).natLines),
    },
    {
      method: 'POST', path: '/api/v1/reload', access: 'rules:write', tags: ['status'],
      summary: 'Compile the stored configuration and apply it atomically; on failure the previous ruleset stays. 409 when enabled assertions would break, unless force=true',
      schema: { querystring: ReloadQuery, response: { 200: ReloadResult } },
      handler: async (request) => {
        const actor = request.identity?.username ?? 'unknown';
        try {
          await context.apply.gate('stored', { actor, clientIp: request.ip, force: (request.query as { force?: boolean }).force, what: 'reload' });
          const { version } = await context.apply.applyAll(actor, 'reload');
          const { ok: _ok, ...result } = lastReload!;
          audit(context, actor, request.ip, 'success', `applied ${result.rules} rules, ${result.nat_rules} NAT rules as version ${version?.version}`);
          return { message: 'Changes applied successfully', version: version?.version ?? null, ...result };
        } catch (error) {
          audit(context, actor, request.ip, 'failure', (error as Error).message);
          throw error;
        }
      },
    },
    {
      method: 'GET', path: '/api/v1/pending', access: 'dashboard:view', tags: ['status'],
      summary: 'What is stored but not yet applied: per kind, the ids added, changed and removed',
      schema: { response: { 200: Pending } },
      handler: () => pendingReport(),
    },
    {
      method: 'GET', path: '/api/v1/pending/stream', access: 'dashboard:view', tags: ['status'], acceptsTicket: true,
      summary: 'Server-Sent Events: the pending report now and whenever it changes; keep-alive comment every 15 s; EventSource may pass ?ticket=',
      schema: { response: EventStreamAnswers('The pending report as JSON `data:` lines, one `id:` each, counting from 1') },
      handler: (request, reply) => {
        // Computed first, so a change noticed by this very call is not also broadcast to the new stream.
        const report = pendingReport();
        lastSent = JSON.stringify(report);
        const stream = new EventStream(request, reply, { registry: { streams: context.identity.streams, permission: 'dashboard:view' } });
        streams.add(stream);
        stream.send(report);
      },
    },
  ];
  // The applied ruleset is loaded again by start() (restoreApplied), before the API answers.
  context.restore.register({
    name: 'packet-filter',
    daemon: context.platform.name === 'freebsd' ? 'pf' : 'nftables',
    enabled: () => !context.platform.simulated && pf.hasApplied(),
    running: async () => (await context.platform.packetFilter.status()).running,
    appliedVersion: () => context.apply.versions.activeVersion(),
  });
  return {
    name: 'packet-filter',
    service: pf,
    hits,
    routes,
    usePendingAssertions(source) {
      brokenAssertions = source;
    },
    publishPending,
    async start() {
      pf.start();
      hits.start();
      await pf.restoreApplied();
    },
    beforeClose: () => streams.closeAll(),
    stop: async () => {
      hits.stop();
      pf.stop();
      await pf.bootRulesetSettled();
    },
  };
}

const audit = (context: AppContext, actor: string | null, ip: string, outcome: 'success' | 'failure', details: string) =>
  auditPacketFilter(context, { action: 'reload', actor, ip, outcome, details });
