import type { FastifyRequest } from 'fastify';
import type { Collection } from '../../http/collection.js';
import type { RouteSpec } from '../../http/route.js';
import { IdParams } from '../../http/schema-helpers.js';
import { requirePreconditions, setEntityTag } from '../../http/conditional.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';

/**
 * POST and PUT for a collection whose request body differs from its record (wire-format.md §3: flat
 * `*_port_start` fields and input spellings in, nested objects and canonical values out). The request is
 * normalised into the stored shape, then the collection's own create/update validates, checks uniqueness and
 * references, and stores it. A client may also send back a record it read.
 */
export function normalisedWriteRoutes(
  collection: Collection,
  options: {
    createBody: object;
    updateBody: object;
    /** Request → stored fields. `existing` is the stored object on PUT. */
    toStored(body: Record<string, unknown>, existing?: ConfigObject): ConfigData;
    /** Wraps the store write, e.g. to keep rules sorted by priority in the same transaction. */
    around?<T>(write: () => T): T;
  },
): RouteSpec[] {
  const { spec } = collection;
  const read = collection.routes().find((r) => r.method === 'GET' && r.path.endsWith('{id}'));
  const list = collection.routes().find((r) => r.method === 'GET' && !r.path.endsWith('{id}'));
  const record = (read ?? list)!.schema!.response![200] as { items?: object };
  const recordSchema = read ? record : record.items!;
  const around = options.around ?? (<T>(write: () => T) => write());
  const itemPath = spec.itemPath ?? `${spec.path}/{id}`;
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  return [
    {
      method: 'POST', path: spec.path, access: spec.access.write, tags: spec.tags, summary: `Create a ${spec.noun}`,
      schema: { body: options.createBody, response: { 201: recordSchema } },
      handler: (request, reply) => {
        const object = around(() => collection.create(options.toStored(request.body as Record<string, unknown>)));
        return reply.status(201).send(collection.toRecord(collection.find(object.id)));
      },
    },
    {
      method: 'PUT', path: itemPath, access: spec.access.write, tags: spec.tags, conditional: 'write',
      summary: `Update one ${spec.noun} (fields not sent are kept)`,
      schema: { params: IdParams(), body: options.updateBody, response: { 200: recordSchema } },
      handler: (request, reply) => {
        const id = idOf(request);
        const existing = collection.find(id);
        requirePreconditions(request, collection.entityTag(existing));
        around(() => collection.update(id, options.toStored(request.body as Record<string, unknown>, existing)));
        const updated = collection.find(id);
        const served = collection.toRecord(updated);
        setEntityTag(reply, collection.entityTag(updated, served));
        return served;
      },
    },
  ];
}
