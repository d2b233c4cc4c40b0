import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RouteAccess } from '../core/permissions.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import type { Sealer } from '../core/crypto.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../store/config-store.js';
import type { RouteSpec } from './route.js';
import { assertValid, compileBodyValidator } from './validation.js';
import { ListQuery, pageOf, readListParams } from './paging.js';
import { Uuid, withoutDefaults, type JsonObjectSchema } from './schema-helpers.js';
import { requirePreconditions, setEntityTag, strongTagOfValue } from './conditional.js';
import { ReadCache } from './read-cache.js';

/** A field of one kind that names objects of another kind. */
export interface Reference {
  /** The referencing field, named in error messages. */
  field: string;
  kind: string;
  /** The field of the target that the value matches: `id` (default) or e.g. `name`. */
  by?: string;
  /** Extracts the referenced values; default: the field's value (a string or an array of strings). */
  values?: (data: ConfigData) => unknown[];
}

export type Operation = 'list' | 'create' | 'read' | 'update' | 'delete';
const ALL_OPERATIONS: readonly Operation[] = ['list', 'create', 'read', 'update', 'delete'];

export interface ValidateContext {
  store: ConfigStore;
  /** The object being updated; undefined on create. */
  existing?: ConfigObject;
  collections: CollectionRegistry;
}

export interface CollectionSpec {
  kind: string;
  /** Collection path as in endpoints.tsv, e.g. `/api/v1/aliases` or `/api/v1/vpn/wg/{id}/peers`. */
  path: string;
  /** Item path; default `${path}/{id}`. */
  itemPath?: string;
  /** Name of the item id parameter in itemPath; default `id`. */
  idParam?: string;
  /** Object schema of the stored fields (the create body). */
  schema: JsonObjectSchema;
  access: { read: RouteAccess; write: RouteAccess };
  operations?: readonly Operation[];
  /** Fields unique within the collection (and within the parent, when nested): duplicates answer 409. */
  unique?: readonly string[];
  references?: readonly Reference[];
  /** Secret fields: sealed at rest, accepted on write, never serialised. */
  writeOnly?: readonly string[];
  /** Nested collections live under a parent object, e.g. peers under a tunnel. */
  parent?: { kind: string; field: string; listParam: string; itemParam?: string };
  /** Invariants beyond the schema; throw badRequest/conflict. */
  validate?: (data: ConfigData, context: ValidateContext) => void;
  /** Fields the service adds to each record on output (declared so the serialiser may emit them). */
  computed?: { schema: Record<string, object>; add: (object: ConfigObject) => Record<string, unknown> };
  tags: string[];
  /** Singular noun for summaries and messages, e.g. `alias`. */
  noun: string;
}

export type CollectionRecord = Record<string, unknown> & { id: string; created_at: string; updated_at: string };

const RESERVED_BODY_FIELDS = { id: Type.Optional(Type.String()), created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) };

/**
 * A declared collection of configuration objects: the five routes, validation, uniqueness, references,
 * sealed write-only fields and paging come from the declaration. Services use the same methods the routes do.
 */
export class Collection {
  readonly spec: CollectionSpec;
  private readonly writeOnly: ReadonlySet<string>;
  private readonly createBody: object;
  private readonly updateBody: object;
  private readonly validateStored;
  private readonly filterable: ReadonlySet<string>;
  private readonly recordSchema: object;

  constructor(
    spec: CollectionSpec,
    private readonly store: ConfigStore,
    private readonly sealer: Sealer,
    private readonly registry: CollectionRegistry,
  ) {
    this.spec = spec;
    this.writeOnly = new Set(spec.writeOnly ?? []);
    store.kinds.declare({ kind: spec.kind, shape: 'collection', writeOnly: [...this.writeOnly], writeAccess: spec.access.write });
    const properties = spec.schema.properties;
    const parentField = spec.parent?.field;
    const bodyProperties = Object.fromEntries(Object.entries(properties).filter(([name]) => name !== parentField));
    const required = (spec.schema.required ?? []).filter((name) => name !== parentField);
    this.createBody = { ...spec.schema, type: 'object', properties: { ...bodyProperties, ...RESERVED_BODY_FIELDS }, required, additionalProperties: false };
    this.updateBody = { type: 'object', properties: { ...withoutDefaults(bodyProperties), ...RESERVED_BODY_FIELDS }, additionalProperties: false };
    // The merged object is re-validated without the write-only fields, which hold sealed text once stored.
    const storedProperties = Object.fromEntries(Object.entries(properties).filter(([name]) => !this.writeOnly.has(name)));
    this.validateStored = compileBodyValidator({
      type: 'object',
      properties: storedProperties,
      required: (spec.schema.required ?? []).filter((name) => !this.writeOnly.has(name)),
    });
    this.filterable = new Set(
      Object.entries(storedProperties)
        .filter(([, schema]) => ['string', 'integer', 'number', 'boolean'].includes(String((schema as { type?: unknown }).type)))
        .map(([name]) => name),
    );
    this.recordSchema = {
      type: 'object',
      properties: {
        id: { type: 'string' },
        ...storedProperties,
        ...(spec.computed?.schema ?? {}),
        created_at: { type: 'string' },
        updated_at: { type: 'string' },
      },
      additionalProperties: false,
    };
  }

  get kind(): string {
    return this.spec.kind;
  }

  /** All objects of the kind (optionally within one parent), in position order, as records. */
  records(parentId?: string): CollectionRecord[] {
    return this.objects(parentId).map((object) => this.toRecord(object));
  }

  objects(parentId?: string): readonly ConfigObject[] {
    const all = this.store.list(this.kind);
    const field = this.spec.parent?.field;
    return field && parentId !== undefined ? all.filter((o) => o.data[field] === parentId) : all;
  }

  find(id: string, parentId?: string): ConfigObject {
    const object = this.store.get(this.kind, id);
    const field = this.spec.parent?.field;
    if (!object || (field && parentId !== undefined && object.data[field] !== parentId)) {
      throw notFound(`${this.spec.noun} ${id} not found`);
    }
    return object;
  }

  create(body: ConfigData, parentId?: string): ConfigObject {
    return this.store.transaction(() => {
      const data = this.clean(body);
      if (this.spec.parent) {
        this.requireParent(parentId!);
        data[this.spec.parent.field] = parentId;
      }
      this.check(data, undefined);
      return this.store.insert(this.kind, this.seal(data, undefined));
    });
  }

  update(id: string, body: ConfigData, parentId?: string): ConfigObject {
    return this.store.transaction(() => {
      const existing = this.find(id, parentId);
      const merged = { ...this.visible(existing.data), ...this.clean(body) };
      if (this.spec.parent) merged[this.spec.parent.field] = existing.data[this.spec.parent.field];
      this.check(merged, existing);
      return this.store.update(this.kind, id, this.seal(merged, existing))!;
    });
  }

  remove(id: string, parentId?: string): void {
    this.store.transaction(() => {
      const existing = this.find(id, parentId);
      this.registry.assertNotReferenced(existing);
      this.store.remove(this.kind, id);
    });
  }

  /** Opens a sealed write-only field for the service that needs the secret (never for a response). */
  secret(object: ConfigObject, field: string): string | undefined {
    const value = object.data[field];
    return typeof value === 'string' ? this.sealer.open(value) : undefined;
  }

  /**
   * The entity tag of one object: a hash of its record as served and of its stored data (sealed secrets
   * included, so changing only a secret changes the tag). Other objects never change it.
   */
  entityTag(object: ConfigObject, record = this.toRecord(object)): string {
    return strongTagOfValue([record, object.data]);
  }

  toRecord(object: ConfigObject): CollectionRecord {
    return {
      id: object.id,
      ...this.visible(object.data),
      ...(this.spec.computed?.add(object) ?? {}),
      created_at: object.created_at,
      updated_at: object.updated_at,
    };
  }

  routes(): RouteSpec[] {
    const { spec } = this;
    const operations = spec.operations ?? ALL_OPERATIONS;
    const idParam = spec.idParam ?? 'id';
    const itemPath = spec.itemPath ?? `${spec.path}/{${idParam}}`;
    const listParent = spec.parent?.listParam;
    const itemParent = spec.parent ? (spec.parent.itemParam ?? spec.parent.listParam) : undefined;
    const params = (names: (string | undefined)[]) =>
      Type.Object(Object.fromEntries(names.filter((n): n is string => !!n).map((n) => [n, Uuid()])));
    const listParams = params([listParent]);
    const itemParams = params([itemParent, idParam]);
    const parentOf = (request: FastifyRequest, name?: string) =>
      name ? (request.params as Record<string, string>)[name] : undefined;
    const idOf = (request: FastifyRequest) => (request.params as Record<string, string>)[idParam];
    const record = this.recordSchema;
    const routes: RouteSpec[] = [];
    const tags = spec.tags;
    if (operations.includes('list')) {
      routes.push({
        method: 'GET', path: spec.path, access: spec.access.read, tags, summary: `List ${spec.noun} objects`, conditional: 'read',
        schema: { params: listParams, querystring: ListQuery, response: { 200: { type: 'array', items: record } } },
        handler: (request, reply) => {
          const parentId = parentOf(request, listParent);
          if (parentId !== undefined) this.requireParent(parentId);
          const params = readListParams(request.query as Record<string, unknown>, this.filterable);
          // Computed fields come from the running system, not the store: those lists are built every time.
          if (spec.computed) {
            const { page, total } = pageOf(this.records(parentId), params);
            return reply.header('x-total-count', String(total)).send(page);
          }
          const cache = this.registry.readCache;
          return cache.send(reply, this.kind, `${parentId ?? ''}?${JSON.stringify(request.query)}`, () => {
            const { page, total } = pageOf(this.objects(parentId).map((o) => cache.recordOf(o, (object) => this.toRecord(object))), params);
            return { body: page, headers: { 'x-total-count': String(total) }, itemSchema: record };
          });
        },
      });
    }
    if (operations.includes('create')) {
      routes.push({
        method: 'POST', path: spec.path, access: spec.access.write, tags, summary: `Create a ${spec.noun}`,
        schema: { params: listParams, body: this.createBody, response: { 201: record } },
        handler: (request, reply) => {
          const object = this.create(request.body as ConfigData, parentOf(request, listParent));
          return reply.status(201).send(this.toRecord(object));
        },
      });
    }
    if (operations.includes('read')) {
      routes.push({
        method: 'GET', path: itemPath, access: spec.access.read, tags, summary: `Read one ${spec.noun}`, conditional: 'read',
        schema: { params: itemParams, response: { 200: record } },
        handler: (request, reply) => {
          const object = this.find(idOf(request), parentOf(request, itemParent));
          const served = this.toRecord(object);
          setEntityTag(reply, this.entityTag(object, served));
          return served;
        },
      });
    }
    if (operations.includes('update')) {
      routes.push({
        method: 'PUT', path: itemPath, access: spec.access.write, tags, summary: `Update one ${spec.noun} (fields not sent are kept)`, conditional: 'write',
        schema: { params: itemParams, body: this.updateBody, response: { 200: record } },
        handler: (request, reply) => {
          requirePreconditions(request, this.entityTag(this.find(idOf(request), parentOf(request, itemParent))));
          const updated = this.update(idOf(request), request.body as ConfigData, parentOf(request, itemParent));
          const served = this.toRecord(updated);
          setEntityTag(reply, this.entityTag(updated, served));
          return served;
        },
      });
    }
    if (operations.includes('delete')) {
      routes.push({
        method: 'DELETE', path: itemPath, access: spec.access.write, tags, summary: `Delete one ${spec.noun}`, conditional: 'write',
        schema: { params: itemParams },
        handler: (request, reply) => {
          requirePreconditions(request, this.entityTag(this.find(idOf(request), parentOf(request, itemParent))));
          this.remove(idOf(request), parentOf(request, itemParent));
          return reply.status(204).send();
        },
      });
    }
    return routes;
  }

  private requireParent(parentId: string): void {
    const parent = this.spec.parent!;
    if (!this.store.get(parent.kind, parentId)) throw notFound(`${parent.kind} ${parentId} not found`);
  }

  /** Drops the fields a client may echo back from a GET (id and timestamps). */
  private clean(body: ConfigData): ConfigData {
    const { id: _id, created_at: _created, updated_at: _updated, ...data } = body;
    return data;
  }

  private visible(data: ConfigData): ConfigData {
    if (this.writeOnly.size === 0) return { ...data };
    return Object.fromEntries(Object.entries(data).filter(([key]) => !this.writeOnly.has(key)));
  }

  private check(data: ConfigData, existing: ConfigObject | undefined): void {
    assertValid(this.validateStored, data);
    for (const field of this.spec.unique ?? []) {
      const value = data[field];
      if (value === undefined) continue;
      const parentId = this.spec.parent ? (data[this.spec.parent.field] as string) : undefined;
      const clash = this.objects(parentId).find((o) => o.id !== existing?.id && o.data[field] === value);
      if (clash) throw conflict(`${this.spec.noun} with ${field} "${String(value)}" already exists`);
    }
    for (const reference of this.spec.references ?? []) this.registry.assertReferenceExists(reference, data);
    this.spec.validate?.(data, { store: this.store, existing, collections: this.registry });
  }

  /** Seals newly written secrets; keeps the stored sealed value when an update does not send the field. */
  private seal(data: ConfigData, existing: ConfigObject | undefined): ConfigData {
    for (const field of this.writeOnly) {
      const value = data[field];
      if (typeof value === 'string') data[field] = this.sealer.seal(value);
      else if (existing && existing.data[field] !== undefined) data[field] = existing.data[field];
    }
    return data;
  }
}

/** All declared collections, so references can be checked in both directions. */
export class CollectionRegistry {
  private readonly byKind = new Map<string, Collection>();
  /** Serialised list answers, shared by every collection of this store. */
  readonly readCache: ReadCache;

  constructor(
    private readonly store: ConfigStore,
    private readonly sealer: Sealer,
  ) {
    this.readCache = new ReadCache(store);
  }

  declare(spec: CollectionSpec): Collection {
    if (this.byKind.has(spec.kind)) throw new Error(`collection kind ${spec.kind} declared twice`);
    const collection = new Collection(spec, this.store, this.sealer, this);
    this.byKind.set(spec.kind, collection);
    return collection;
  }

  get(kind: string): Collection {
    const collection = this.byKind.get(kind);
    if (!collection) throw new Error(`no collection of kind ${kind}`);
    return collection;
  }

  all(): Collection[] {
    return [...this.byKind.values()];
  }

  assertReferenceExists(reference: Reference, data: ConfigData): void {
    const by = reference.by ?? 'id';
    for (const value of referencedValues(reference, data)) {
      const found = this.store.list(reference.kind).some((o) => (by === 'id' ? o.id : o.data[by]) === value);
      if (!found) throw badRequest(`body.${reference.field}: ${reference.kind} "${String(value)}" does not exist`);
    }
  }

  /** 409 when any object of any kind still names this one. */
  assertNotReferenced(target: ConfigObject): void {
    for (const collection of this.byKind.values()) {
      for (const reference of collection.spec.references ?? []) {
        if (reference.kind !== target.kind) continue;
        const by = reference.by ?? 'id';
        const key = by === 'id' ? target.id : target.data[by];
        const user = collection.objects().find((o) => referencedValues(reference, o.data).includes(key));
        if (user) {
          throw conflict(`${target.kind} ${String(key)} is in use by ${collection.spec.noun} ${user.id} (field ${reference.field})`);
        }
      }
    }
  }
}

function referencedValues(reference: Reference, data: ConfigData): unknown[] {
  if (reference.values) return reference.values(data);
  const value = data[reference.field];
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}
