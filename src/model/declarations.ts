/**
 * What an area declares about a kind of configuration object. The model layer turns a declaration into the
 * one place every write of that kind goes through — routes, services, import, restore and commit-confirm —
 * so validation, uniqueness, references, sealing and change hooks cannot be skipped. Nothing here knows HTTP.
 */
import type { RouteAccess } from '../core/permissions.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../store/config-store.js';
import type { JsonObjectSchema } from './schema-helpers.js';

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

/**
 * A field whose value no two objects of the kind (within one parent, when nested) may share. Names a person
 * reads are compared without regard to case (`WebServers` and `webservers` are one alias).
 */
export type UniqueField = string | { field: string; caseInsensitive: true };

/** What a validator may consult: the store being written or checked (a candidate one during import and restore). */
export interface ValidateContext {
  store: ConfigStore;
  /** The object being updated (or, in a whole-configuration check, the object itself); undefined on create. */
  existing?: ConfigObject;
  /** 409 when an object in `store` still names `target`. */
  assertNotReferenced(target: ConfigObject): void;
}

interface KindDeclarationBase {
  kind: string;
  /** Singular noun for messages, e.g. `alias` ("alias 5 not found"). */
  noun: string;
  /** Object schema of the stored fields. */
  schema: JsonObjectSchema;
  /**
   * The permission any change of this kind needs, wherever it comes from: its routes (which must declare the
   * same), import, restore and passphrase exports hold callers to it.
   */
  writeAccess: RouteAccess;
  /** Secret fields: sealed at rest, accepted on write, never serialised. */
  writeOnly?: readonly string[];
}

export interface CollectionDeclaration extends KindDeclarationBase {
  /**
   * Rewrites the data of a create or update before it is checked and sealed (e.g. moves secrets written inside
   * a JSON text field into a write-only field); `existing` is the stored object on update. Throws badRequest.
   */
  prepare?: (data: ConfigData, existing: ConfigObject | undefined) => void;
  unique?: readonly UniqueField[];
  references?: readonly Reference[];
  /** Nested collections live under a parent object, e.g. peers under a tunnel: `field` holds the parent's id. */
  parent?: { kind: string; field: string };
  /** Invariants beyond the schema; throws badRequest/conflict. Runs on every write and in whole-configuration checks. */
  validate?: (data: ConfigData, context: ValidateContext) => void;
  /** Throws when an object may not be deleted for a reason references cannot express (built in, in use by the host). */
  beforeRemove?: (object: ConfigObject) => void;
  /** Fields added to each record on output (declared so the serialiser may emit them). */
  computed?: { schema: Record<string, object>; add: (object: ConfigObject) => Record<string, unknown> };
}

export interface SingletonDeclaration<S extends JsonObjectSchema = JsonObjectSchema> extends KindDeclarationBase {
  /** Every field should carry a default: reading answers the defaults before the first write. */
  schema: S;
  validate?: (data: ConfigData) => void;
}

/** One object written: created (no `before`), changed (both) or deleted (no `after`). */
export interface ObjectWrite {
  kind: string;
  before?: ConfigObject;
  after?: ConfigObject;
}

/** What changed, as the hooks registered for any of these kinds see it. */
export interface ModelChange {
  kinds: ReadonlySet<string>;
  /** The collection objects written, in order (empty after a replace: a hook then reads the store). */
  objects: readonly ObjectWrite[];
  /**
   * `write`: objects were created, changed or deleted. `replace`: the whole configuration was replaced
   * (import, restore, commit-confirm rollback), and the apply coordinator applies it right after.
   */
  cause: 'write' | 'replace';
}

export type ChangeHook = (change: ModelChange) => unknown;
