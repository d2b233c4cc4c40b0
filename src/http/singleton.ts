import type { RouteAccess } from '../core/permissions.js';
import { problemOf } from '../core/errors.js';
import type { Sealer } from '../core/crypto.js';
import type { ConfigData, ConfigStore } from '../store/config-store.js';
import type { RouteSpec } from './route.js';
import { assertValid, compileBodyValidator, describeValidationErrors } from './validation.js';
import { withoutDefaults, type JsonObjectSchema } from './schema-helpers.js';
import { requirePreconditions, setEntityTag, strongTagOfValue } from './conditional.js';

export interface SingletonSpec {
  kind: string;
  path: string;
  /** Every field should carry a default: GET answers the defaults before the first PUT. */
  schema: JsonObjectSchema;
  access: { read: RouteAccess; write: RouteAccess };
  writeOnly?: readonly string[];
  validate?: (data: ConfigData) => void;
  tags: string[];
  noun: string;
}

/** A settings section: one object, GET answers it (with defaults), PUT changes the fields it sends. */
export class Singleton {
  private readonly validateFull;
  private readonly writeOnly: ReadonlySet<string>;
  private readonly visibleSchema: object;

  constructor(
    readonly spec: SingletonSpec,
    private readonly store: ConfigStore,
    private readonly sealer: Sealer,
  ) {
    this.writeOnly = new Set(spec.writeOnly ?? []);
    const visible = Object.fromEntries(Object.entries(spec.schema.properties).filter(([k]) => !this.writeOnly.has(k)));
    this.validateFull = compileBodyValidator({ ...spec.schema, properties: visible, required: [], additionalProperties: false });
    this.visibleSchema = { type: 'object', properties: visible, additionalProperties: false };
    store.kinds.declare({
      kind: spec.kind, shape: 'singleton', writeOnly: [...this.writeOnly], writeAccess: spec.access.write,
      check: (data) => this.problemWith(data),
    });
  }

  /** What a direct PUT would refuse in stored data (schema, then the section's own invariants), for import and restore. */
  private problemWith(data: ConfigData): string | undefined {
    const visible = structuredClone(this.visible(data));
    if (!this.validateFull(visible)) return describeValidationErrors(this.validateFull.errors ?? [], this.spec.kind);
    return problemOf(() => this.spec.validate?.({ ...data, ...visible }));
  }

  /** The current values (defaults filled in), secrets still sealed. */
  read(): ConfigData {
    const data: ConfigData = { ...(this.store.getSingleton(this.spec.kind) ?? {}) };
    const visible = this.visible(data);
    this.validateFull(visible); // fills defaults for fields never written
    return { ...data, ...visible };
  }

  /** The section's entity tag: a hash of its values, sealed secrets included (a new secret changes the tag). */
  entityTag(data = this.read()): string {
    return strongTagOfValue(data);
  }

  visible(data: ConfigData): ConfigData {
    return Object.fromEntries(Object.entries(data).filter(([k]) => !this.writeOnly.has(k)));
  }

  /** Opens a sealed secret for the service that needs it. */
  secret(field: string): string | undefined {
    const value = this.read()[field];
    return typeof value === 'string' && value !== '' ? this.sealer.open(value) : undefined;
  }

  write(patch: ConfigData): ConfigData {
    const current = this.read();
    const merged: ConfigData = { ...current, ...patch };
    const visible = this.visible(merged);
    assertValid(this.validateFull, visible);
    this.spec.validate?.(merged);
    for (const field of this.writeOnly) {
      const value = patch[field];
      if (typeof value === 'string') merged[field] = value === '' ? '' : this.sealer.seal(value);
      else if (current[field] !== undefined) merged[field] = current[field];
    }
    return this.store.putSingleton(this.spec.kind, merged);
  }

  routes(): RouteSpec[] {
    const { spec } = this;
    return [
      {
        method: 'GET', path: spec.path, access: spec.access.read, tags: spec.tags, summary: `Read ${spec.noun}`, conditional: 'read',
        schema: { response: { 200: this.visibleSchema } },
        handler: (_request, reply) => {
          const data = this.read();
          setEntityTag(reply, this.entityTag(data));
          return this.visible(data);
        },
      },
      {
        method: 'PUT', path: spec.path, access: spec.access.write, tags: spec.tags, summary: `Change ${spec.noun} (fields not sent are kept)`, conditional: 'write',
        schema: { body: { ...withoutDefaults(spec.schema), required: [], additionalProperties: false }, response: { 200: this.visibleSchema } },
        handler: (request, reply) => {
          requirePreconditions(request, this.entityTag());
          this.write(request.body as ConfigData);
          const data = this.read();
          setEntityTag(reply, this.entityTag(data));
          return this.visible(data);
        },
      },
    ];
  }
}
