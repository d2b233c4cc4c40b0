import type { ValidateFunction } from 'ajv';
import { Type } from 'typebox';
import { conflict, notFound } from '../core/errors.js';
import type { Sealer } from '../core/crypto.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../store/config-store.js';
import type { CollectionDeclaration, ObjectWrite } from './declarations.js';
import { withoutDefaults } from './schema-helpers.js';
import { uniqueKey, uniqueRule, type UniqueRule } from './unique-fields.js';
import { assertValid, compileBodyValidator } from './validation.js';

export type CollectionRecord = Record<string, unknown> & { id: string; created_at: string; updated_at: string };

/** What a model needs from the registry it belongs to: cross-kind references and change notification. */
export interface ModelSite {
  readonly store: ConfigStore;
  readonly sealer: Sealer;
  assertReferencesExist(declaration: CollectionDeclaration, data: ConfigData, store: ConfigStore): void;
  assertNotReferenced(target: ConfigObject, store: ConfigStore): void;
  changed(kind: string, write?: Omit<ObjectWrite, 'kind'>): void;
}

/** A client may echo a record it read: these fields are accepted in a body and ignored. */
const RESERVED_BODY_FIELDS = { id: Type.Optional(Type.String()), created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) };

/** The schemas a collection's objects are written and read with (the HTTP layer serves them; importers validate with them). */
export interface CollectionSchemas {
  /** A new object: every stored field but the parent link; defaults fill what is left out. */
  create: object;
  /** A change: any subset of those fields, without defaults. */
  update: object;
  /** A record as read: id, the visible fields, computed fields and timestamps. */
  record: object;
}

/**
 * A declared collection of configuration objects: validation, uniqueness, references, sealed write-only fields
 * and change notification for every write, whoever makes it.
 */
export class CollectionModel {
  readonly declaration: CollectionDeclaration;
  readonly schemas: CollectionSchemas;
  /** Scalar stored fields a list may be filtered and sorted by. */
  readonly filterable: ReadonlySet<string>;
  /** The stored-data validator (write-only fields left out: they hold sealed text once stored). */
  readonly validateStored: ValidateFunction;
  readonly unique: readonly UniqueRule[];
  private readonly writeOnly: ReadonlySet<string>;

  constructor(declaration: CollectionDeclaration, private readonly site: ModelSite) {
    this.declaration = declaration;
    this.writeOnly = new Set(declaration.writeOnly ?? []);
    this.unique = (declaration.unique ?? []).map(uniqueRule);
    const properties = declaration.schema.properties;
    const parentField = declaration.parent?.field;
    const bodyProperties = Object.fromEntries(Object.entries(properties).filter(([name]) => name !== parentField));
    const required = (declaration.schema.required ?? []).filter((name) => name !== parentField);
    const storedProperties = Object.fromEntries(Object.entries(properties).filter(([name]) => !this.writeOnly.has(name)));
    this.validateStored = compileBodyValidator({
      type: 'object',
      properties: storedProperties,
      required: (declaration.schema.required ?? []).filter((name) => !this.writeOnly.has(name)),
    });
    this.filterable = new Set(
      Object.entries(storedProperties)
        .filter(([, schema]) => ['string', 'integer', 'number', 'boolean'].includes(String((schema as { type?: unknown }).type)))
        .map(([name]) => name),
    );
    this.schemas = {
      create: { ...declaration.schema, type: 'object', properties: { ...bodyProperties, ...RESERVED_BODY_FIELDS }, required, additionalProperties: false },
      update: { type: 'object', properties: { ...withoutDefaults(bodyProperties), ...RESERVED_BODY_FIELDS }, additionalProperties: false },
      record: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          ...storedProperties,
          ...(declaration.computed?.schema ?? {}),
          created_at: { type: 'string' },
          updated_at: { type: 'string' },
        },
        additionalProperties: false,
      },
    };
  }

  get kind(): string {
    return this.declaration.kind;
  }

  get noun(): string {
    return this.declaration.noun;
  }

  /** All objects of the kind (optionally within one parent), in position order, as records. */
  records(parentId?: string): CollectionRecord[] {
    return this.objects(parentId).map((object) => this.toRecord(object));
  }

  objects(parentId?: string): readonly ConfigObject[] {
    const all = this.site.store.list(this.kind);
    const field = this.declaration.parent?.field;
    return field && parentId !== undefined ? all.filter((o) => o.data[field] === parentId) : all;
  }

  find(id: string, parentId?: string): ConfigObject {
    const object = this.site.store.get(this.kind, id);
    const field = this.declaration.parent?.field;
    if (!object || (field && parentId !== undefined && object.data[field] !== parentId)) {
      throw notFound(`${this.noun} ${id} not found`);
    }
    return object;
  }

  /** 404 when a nested collection's parent does not exist. */
  requireParent(parentId: string): void {
    const parent = this.declaration.parent!;
    if (!this.site.store.get(parent.kind, parentId)) throw notFound(`${parent.kind} ${parentId} not found`);
  }

  create(body: ConfigData, parentId?: string): ConfigObject {
    const { store } = this.site;
    const created = store.transaction(() => {
      const data = withoutEchoedFields(body);
      if (this.declaration.parent) {
        this.requireParent(parentId!);
        data[this.declaration.parent.field] = parentId;
      }
      this.declaration.prepare?.(data, undefined);
      this.check(data, undefined);
      return store.insert(this.kind, this.seal(data, undefined));
    });
    this.site.changed(this.kind, { after: created });
    return created;
  }

  /** Changes the fields `body` sends and keeps the others (write-only fields not sent keep their sealed value). */
  update(id: string, body: ConfigData, parentId?: string): ConfigObject {
    const { store } = this.site;
    const existing = this.find(id, parentId);
    const updated = store.transaction(() => {
      const merged = { ...this.visible(existing.data), ...withoutEchoedFields(body) };
      if (this.declaration.parent) merged[this.declaration.parent.field] = existing.data[this.declaration.parent.field];
      this.declaration.prepare?.(merged, existing);
      this.check(merged, existing);
      return store.update(this.kind, id, this.seal(merged, existing))!;
    });
    this.site.changed(this.kind, { before: existing, after: updated });
    return updated;
  }

  remove(id: string, parentId?: string): void {
    const { store } = this.site;
    const existing = this.find(id, parentId);
    store.transaction(() => {
      this.declaration.beforeRemove?.(existing);
      this.site.assertNotReferenced(existing, store);
      store.remove(this.kind, id);
    });
    this.site.changed(this.kind, { before: existing });
  }

  /** Opens a sealed write-only field for the service that needs the secret (never for a response). */
  secret(object: ConfigObject, field: string): string | undefined {
    const value = object.data[field];
    return typeof value === 'string' ? this.site.sealer.open(value) : undefined;
  }

  toRecord(object: ConfigObject): CollectionRecord {
    return {
      id: object.id,
      ...this.visible(object.data),
      ...(this.declaration.computed?.add(object) ?? {}),
      created_at: object.created_at,
      updated_at: object.updated_at,
    };
  }

  private visible(data: ConfigData): ConfigData {
    if (this.writeOnly.size === 0) return { ...data };
    return Object.fromEntries(Object.entries(data).filter(([key]) => !this.writeOnly.has(key)));
  }

  private check(data: ConfigData, existing: ConfigObject | undefined): void {
    const { store } = this.site;
    assertValid(this.validateStored, data);
    const parentId = this.declaration.parent ? (data[this.declaration.parent.field] as string) : undefined;
    for (const rule of this.unique) {
      const key = uniqueKey(rule, data);
      if (key === undefined) continue;
      const clash = this.objects(parentId).find((o) => o.id !== existing?.id && uniqueKey(rule, o.data) === key);
      if (clash) throw conflict(`${this.noun} with ${rule.field} "${String(data[rule.field])}" already exists`);
    }
    this.site.assertReferencesExist(this.declaration, data, store);
    this.declaration.validate?.(data, { store, existing, assertNotReferenced: (target) => this.site.assertNotReferenced(target, store) });
  }

  /** Seals newly written secrets; keeps the stored sealed value when an update does not send the field. */
  private seal(data: ConfigData, existing: ConfigObject | undefined): ConfigData {
    for (const field of this.writeOnly) {
      const value = data[field];
      if (typeof value === 'string') data[field] = this.site.sealer.seal(value);
      else if (existing && existing.data[field] !== undefined) data[field] = existing.data[field];
    }
    return data;
  }
}

/** Drops the fields a client may echo back from a read (id and timestamps). */
function withoutEchoedFields(body: ConfigData): ConfigData {
  const { id: _id, created_at: _created, updated_at: _updated, ...data } = body;
  return data;
}
