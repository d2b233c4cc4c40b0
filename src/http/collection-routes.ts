import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RouteAccess } from '../core/permissions.js';
import type { CollectionModel } from '../model/collection-model.js';
import type { ConfigData } from '../store/config-store.js';
import { Uuid } from '../model/schema-helpers.js';
import { listQueryFor, pageOf, readListParams } from './paging.js';
import type { RouteSpec } from './route.js';

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
      method: 'GET', path: parts.path, access: parts.access.read, tags, summary: `List ${noun} objects`,
      schema: { params: listParams, querystring: listQueryFor(model.filterable), response: { 200: { type: 'array', items: record } } },
      handler: (request, reply) => {
        const parentId = param(request, listParent);
        if (parentId !== undefined) model.requireParent(parentId);
        const { page, total } = pageOf(model.records(parentId), readListParams(request.query as Record<string, unknown>, model.filterable));
        reply.header('x-total-count', String(total));
        return page;
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
    });
  }
  if (operations.includes('read')) {
    routes.push({
      method: 'GET', path: itemPath, access: parts.access.read, tags, summary: `Read one ${noun}`,
      schema: { params: itemParams, response: { 200: record } },
      handler: (request) => model.toRecord(model.find(param(request, idParam)!, param(request, itemParent))),
    });
  }
  if (operations.includes('update')) {
    routes.push({
      method: 'PUT', path: itemPath, access: parts.access.write, tags, summary: `Update one ${noun} (fields not sent are kept)`,
      schema: { params: itemParams, body: model.schemas.update, response: { 200: record } },
      handler: (request) => model.toRecord(model.update(param(request, idParam)!, request.body as ConfigData, param(request, itemParent))),
    });
  }
  if (operations.includes('delete')) {
    routes.push({
      method: 'DELETE', path: itemPath, access: parts.access.write, tags, summary: `Delete one ${noun}`,
      schema: { params: itemParams },
      handler: (request, reply) => {
        model.remove(param(request, idParam)!, param(request, itemParent));
        reply.status(204);
      },
    });
  }
  return routes;
}
