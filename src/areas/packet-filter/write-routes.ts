import type { TSchema } from 'typebox';
import type { CollectionModel } from '../../model/collection-model.js';
import { route, type RouteSpec } from '../../http/route.js';
import { objectTag, taggedRecord, type CollectionRouteParts } from '../../http/collection-routes.js';
import { requireIfMatch, requirePreconditions } from '../../http/conditional.js';
import { IdParams } from '../../model/schema-helpers.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';

/**
 * POST and PUT for a collection whose request body differs from its record (wire-format.md §3: flat
 * `*_port_start` fields and input spellings in, nested objects and canonical values out). The request is
 * normalised into the stored shape, then the model's own create/update validates, checks uniqueness and
 * references, and stores it. A client may also send back a record it read.
 */
export function normalisedWriteRoutes(
  model: CollectionModel,
  parts: Pick<CollectionRouteParts, 'path' | 'access' | 'tags'>,
  options: {
    createBody: TSchema;
    updateBody: TSchema;
    /** Request → stored fields. `existing` is the stored object on PUT. */
    toStored(body: Record<string, unknown>, existing?: ConfigObject): ConfigData;
    /** Wraps the store write, e.g. to keep rules sorted by priority in the same transaction. */
    around?<T>(write: () => T): T;
    /** Fields a write's answer adds to the record (not stored, not part of its entity tag), e.g. warnings. */
    annotate?: { schema: Record<string, object>; add(object: ConfigObject): Record<string, unknown> };
  },
): RouteSpec[] {
  const stored = model.schemas.record as { properties: Record<string, object> };
  const record = options.annotate ? { ...stored, properties: { ...stored.properties, ...options.annotate.schema } } : stored;
  const annotated = (answer: object, object: ConfigObject) => (options.annotate ? { ...answer, ...options.annotate.add(object) } : answer);
  const around = options.around ?? (<T>(write: () => T) => write());
  // The bodies are the area's request schemas, passed in: their fields are the normaliser's to read.
  const fieldsOf = (body: unknown) => body as Record<string, unknown>;
  return [
    route({
      method: 'POST', path: parts.path, access: parts.access.write, tags: parts.tags, summary: `Create a ${model.noun}`,
      schema: { body: options.createBody, response: { 201: record } },
      handler: (request, reply) => {
        const object = around(() => model.create(options.toStored(fieldsOf(request.body))));
        reply.status(201);
        const created = model.find(object.id);
        return annotated(model.toRecord(created), created);
      },
      change: {
        op: 'create', body: options.createBody,
        apply: (_params, body) => {
          const created = around(() => model.create(options.toStored(fieldsOf(body))));
          return { kind: model.kind, id: created.id, before: null, after: model.toRecord(model.find(created.id)) };
        },
      },
    }),
    route({
      method: 'PUT', path: `${parts.path}/{id}`, access: parts.access.write, tags: parts.tags, conditional: 'write',
      summary: `Update one ${model.noun} (fields not sent are kept)`,
      schema: { params: IdParams(), body: options.updateBody, response: { 200: record } },
      handler: (request, reply) => {
        const id = request.params.id;
        const existing = model.find(id);
        requirePreconditions(request, objectTag(model, existing));
        around(() => model.update(id, options.toStored(fieldsOf(request.body), existing)));
        const updated = model.find(id);
        return annotated(taggedRecord(model, updated, reply), updated);
      },
      change: {
        op: 'update', body: options.updateBody,
        apply: (params, body, ifMatch, field) => {
          const existing = model.find(params.id);
          requireIfMatch(ifMatch, objectTag(model, existing), field);
          around(() => model.update(existing.id, options.toStored(fieldsOf(body), existing)));
          return { kind: model.kind, id: existing.id, before: model.toRecord(existing), after: model.toRecord(model.find(existing.id)) };
        },
      },
    }),
  ];
}
