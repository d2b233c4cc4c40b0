import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RouteAccess } from '../core/permissions.js';
import type { CollectionModel } from '../model/collection-model.js';
import type { ConfigData, ConfigObject } from '../store/config-store.js';
import { Uuid } from '../model/schema-helpers.js';
import { listQueryFor, pageOf, readListParams } from './paging.js';
import type { RouteSpec } from './route.js';
import { requireIfMatch, requirePreconditions, setEntityTag, strongTagOfValue } from './conditional.js';

/**
 * The entity tag of one object: a hash of its record as served and of its stored data (sealed secrets
 * included, so changing only a secret changes the tag). Other objects never change it.
 */
export const objectTag = (model: CollectionModel, object: ConfigObject, record: object = model.toRecord(object)): string =>
  strongTagOfValue([record, object.data]);

/** An object's record as answered, its entity tag set on the reply. */
export function taggedRecord(model: CollectionModel, object: ConfigObject, reply: FastifyReply): object {
  const served = model.toRecord(object);
  setEntityTag(reply, objectTag(model, object, served));
  return served;
}

export type Operation = 'list' | 'create' | 'read' | 'update' | 'delete';
const ALL_OPERATIONS: readonly Operation[] = ['list', 'create', 'read', 'update', 'delete'];

/** Where and to whom a collection is served: everything about its routes that is not the model. */
export interface CollectionRouteParts {
  /** Collection path as in endpoints.tsv, e.g. `/api/v1/aliases` or `/api/v1/vpn/wg/{id}/peers`. */
  path: string;
  /** Item path; default `${path}/{id}`. */
  itemPath?: string;
  /** Name of the item id parameter in itemPath; default `id`. */
  idParam?: string;
  /** For a nested collection: the parent id's parameter in `path`, and in `itemPath` when it is named otherwise. */
  parentParams?: { list: string; item?: string };
  /** `write` must be the model's writeAccess: import and restore hold callers to the same permission. */
  access: { read: RouteAccess; write: RouteAccess };
  operations?: readonly Operation[];
  tags: string[];
}

/**
 * The routes of a declared collection (list with paging, filters and sort; create; read; update; delete), each
 * a thin translation of HTTP onto the model's method of the same name.
 */
export function collectionRoutes(model: CollectionModel, parts: CollectionRouteParts): RouteSpec[] {
  if (parts.access.write !== model.declaration.writeAccess) {
    throw new Error(`${model.kind}: routes write with ${parts.access.write}, the model with ${model.declaration.writeAccess}`);
  }
  const { noun } = model;
  const { tags } = parts;
  const operations = parts.operations ?? ALL_OPERATIONS;
  const idParam = parts.idParam ?? 'id';
  const itemPath = parts.itemPath ?? `${parts.path}/{${idParam}}`;
  const listParent = parts.parentParams?.list;
  const itemParent = parts.parentParams ? (parts.parentParams.item ?? parts.parentParams.list) : undefined;
  const params = (names: (string | undefined)[]) =>
    Type.Object(Object.fromEntries(names.filter((n): n is string => !!n).map((n) => [n, Uuid()])));
  const listParams = params([listParent]);
  const itemParams = params([itemParent, idParam]);
  const param = (request: FastifyRequest, name?: string) => (name ? (request.params as Record<string, string>)[name] : undefined);
  const record = model.schemas.record;
  const routes: RouteSpec[] = [];
  if (operations.includes('list')) {
    routes.push({
      method: 'GET', path: parts.path, access: parts.access.read, tags, summary: `List ${noun} objects`, conditional: 'read',
      schema: { params: listParams, querystring: listQueryFor(model.filterable), response: { 200: { type: 'array', items: record } } },
      handler: (request, reply) => {
        const parentId = param(request, listParent);
        if (parentId !== undefined) model.requireParent(parentId);
        const params = readListParams(request.query as Record<string, unknown>, model.filterable);
        // Computed fields come from the running system, not the store: those lists are built every time.
        if (model.declaration.computed) {
          const { page, total } = pageOf(model.records(parentId), params);
          return reply.header('x-total-count', String(total)).send(page);
        }
        const cache = request.server.readCache;
        return cache.send(reply, model.kind, `${parentId ?? ''}?${JSON.stringify(request.query)}`, () => {
          const { page, total } = pageOf(model.objects(parentId).map((o) => cache.recordOf(o, (object) => model.toRecord(object))), params);
          return { body: page, headers: { 'x-total-count': String(total) }, itemSchema: record };
        });
      },
    });
  }
  if (operations.includes('create')) {
    routes.push({
      method: 'POST', path: parts.path, access: parts.access.write, tags, summary: `Create a ${noun}`,
      schema: { params: listParams, body: model.schemas.create, response: { 201: record } },
      handler: (request, reply) => {
        reply.status(201);
        return model.toRecord(model.create(request.body as ConfigData, param(request, listParent)));
      },
      change: {
        op: 'create', body: model.schemas.create,
        apply: (params, body) => {
          const created = model.create(body!, listParent ? params[listParent] : undefined);
          return { kind: model.kind, id: created.id, before: null, after: model.toRecord(created) };
        },
      },
    });
  }
  if (operations.includes('read')) {
    routes.push({
      method: 'GET', path: itemPath, access: parts.access.read, tags, summary: `Read one ${noun}`, conditional: 'read',
      schema: { params: itemParams, response: { 200: record } },
      handler: (request, reply) => {
        const object = model.find(param(request, idParam)!, param(request, itemParent));
        return taggedRecord(model, object, reply);
      },
    });
  }
  if (operations.includes('update')) {
    routes.push({
      method: 'PUT', path: itemPath, access: parts.access.write, tags, summary: `Update one ${noun} (fields not sent are kept)`, conditional: 'write',
      schema: { params: itemParams, body: model.schemas.update, response: { 200: record } },
      handler: (request, reply) => {
        const id = param(request, idParam)!;
        const parentId = param(request, itemParent);
        requirePreconditions(request, objectTag(model, model.find(id, parentId)));
        const updated = model.update(id, request.body as ConfigData, parentId);
        return taggedRecord(model, updated, reply);
      },
      change: {
        op: 'update', body: model.schemas.update,
        apply: (params, body, ifMatch, field) => {
          const existing = model.find(params[idParam], itemParent ? params[itemParent] : undefined);
          requireIfMatch(ifMatch, objectTag(model, existing), field);
          const updated = model.update(existing.id, body!, itemParent ? params[itemParent] : undefined);
          return { kind: model.kind, id: existing.id, before: model.toRecord(existing), after: model.toRecord(updated) };
        },
      },
    });
  }
  if (operations.includes('delete')) {
    routes.push({
      method: 'DELETE', path: itemPath, access: parts.access.write, tags, summary: `Delete one ${noun}`, conditional: 'write',
      schema: { params: itemParams },
      handler: (request, reply) => {
        requirePreconditions(request, objectTag(model, model.find(param(request, idParam)!, param(request, itemParent))));
        model.remove(param(request, idParam)!, param(request, itemParent));
        reply.status(204);
      },
      change: {
        op: 'delete',
        apply: (params, _body, ifMatch, field) => {
          const existing = model.find(params[idParam], itemParent ? params[itemParent] : undefined);
          requireIfMatch(ifMatch, objectTag(model, existing), field);
          model.remove(existing.id, itemParent ? params[itemParent] : undefined);
          return { kind: model.kind, id: existing.id, before: model.toRecord(existing), after: null };
        },
      },
    });
  }
  return routes;
}
