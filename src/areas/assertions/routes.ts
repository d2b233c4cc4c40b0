/** The assertions area: the /assertions collection (with each one's last result), running them now, and the continuous check. */
import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { collectionRoutes, type CollectionRouteParts } from '../../http/collection-routes.js';
import { route, type RouteSpec } from '../../http/route.js';
import { listQueryFor, pageOf, readListParams } from '../../http/paging.js';
import { Nullable } from '../../compile/firewall-schemas.js';
import { StringEnum } from '../../model/schema-helpers.js';
import type { PacketFilterService } from '../packet-filter/service.js';
import { normalisedWriteRoutes } from '../packet-filter/write-routes.js';
import { AssertionCreateBody, AssertionUpdateBody, ASSERTION_KIND, declareAssertions, toStoredAssertion } from './schema.js';
import { AssertionService } from './service.js';

export const AssertionResultSchema = Type.Object({
  holds: Type.Boolean(),
  outcome: StringEnum(['pass', 'block', 'error']),
  expect: StringEnum(['pass', 'block']),
  decided_by: Type.String({ description: 'the rule (or system rule, default policy, probe) that decided' }),
  rule_id: Nullable(Type.String()),
  detail: Type.String({ description: 'the packet judged or the probe run, and what it found' }),
  against: StringEnum(['stored', 'candidate', 'kernel', 'probe']),
  checked_at: Type.String(),
  ms: Type.Number(),
});

export const JudgedSchema = Type.Object({ id: Type.String(), name: Type.String(), kind: StringEnum(['transit', 'probe']), result: AssertionResultSchema });

export function createAssertionsArea(context: AppContext, needs: { packetFilter: PacketFilterService }): Area & { service: AssertionService } {
  const model = declareAssertions(context.models);
  const service = new AssertionService(context, needs.packetFilter);
  context.apply.addGate(service);
  // A deleted assertion's result goes with it.
  context.store.onChange((change) => {
    if (change.kind === ASSERTION_KIND || change.kind === '*') service.retainOnly(new Set(context.store.list(ASSERTION_KIND).map((o) => o.id)));
  });
  const parts: CollectionRouteParts = { path: '/api/v1/assertions', access: { read: 'rules:read', write: 'rules:write' }, tags: ['rules'] };
  const record = model.schemas.record as { properties: Record<string, object> };
  const withResult = { ...record, properties: { ...record.properties, last_result: Nullable(AssertionResultSchema) } };
  const routes: RouteSpec[] = [
    {
      method: 'GET', path: parts.path, access: parts.access.read, tags: parts.tags,
      summary: 'List assertions, each with its last result: when, what it found, and what decided it (extension)',
      schema: { querystring: listQueryFor(model.filterable), response: { 200: { type: 'array', items: withResult } } },
      handler: (request, reply) => {
        const params = readListParams(request.query as Record<string, unknown>, model.filterable);
        const { page, total } = pageOf(model.objects().map((o) => ({ ...model.toRecord(o), last_result: service.last(o.id) })), params);
        reply.header('x-total-count', String(total));
        return page;
      },
    },
    ...collectionRoutes(model, { ...parts, operations: ['read', 'delete'] }),
    ...normalisedWriteRoutes(model, parts, { createBody: AssertionCreateBody, updateBody: AssertionUpdateBody, toStored: toStoredAssertion }),
    route({
      method: 'POST', path: '/api/v1/assertions/run', access: 'rules:write', tags: parts.tags,
      summary: 'Judges every enabled assertion now: transit ones against the stored configuration, probe ones run by the box; answers each result (extension)',
      schema: { response: { 200: Type.Array(JudgedSchema) } },
      handler: () => service.runAll(),
    }),
  ];
  return {
    name: 'assertions',
    service,
    routes,
    start() {
      service.startSchedule();
    },
    stop() {
      service.stopSchedule();
    },
  };
}
