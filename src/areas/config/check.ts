import Database from 'better-sqlite3';
import type { ValidateFunction } from 'ajv';
import type { Clock } from '../../core/clock.js';
import { problemOf } from '../../core/errors.js';
import type { Collection, CollectionRegistry, Reference } from '../../http/collection.js';
import { compileBodyValidator, describeValidationErrors } from '../../model/validation.js';
import { ConfigStore, type ConfigData, type ConfigObject } from '../../store/config-store.js';
import { migrate } from '../../store/database.js';
import { MIGRATIONS } from '../../store/migrations.js';
import type { KindCatalogue } from '../../store/kind-catalogue.js';

export interface KindCheck {
  kind: string;
  objects: number;
  /** What the objects were checked against. */
  schema: 'collection' | 'settings section' | 'none';
  references_checked: number;
}

export interface ConfigurationCheck {
  errors: string[];
  warnings: string[];
  kinds: KindCheck[];
  objects: number;
}

/**
 * A configuration store of its own in memory, holding a candidate configuration (an import, a restore) so it is
 * checked with the same code and the same collection validators as the live one, before anything is written.
 */
export function scratchStore(objects: readonly ConfigObject[], clock: Clock): { store: ConfigStore; close(): void } {
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS.filter((m) => m.version === 1));
  const store = new ConfigStore(db, clock);
  store.replaceAll(objects);
  return { store, close: () => db.close() };
}

const storedValidators = new WeakMap<Collection, ValidateFunction>();

/** The collection's schema for stored data: every field but the sealed write-only ones (as Collection does). */
function storedValidator(collection: Collection): ValidateFunction {
  let validate = storedValidators.get(collection);
  if (!validate) {
    const writeOnly = new Set(collection.spec.writeOnly ?? []);
    const properties = Object.fromEntries(Object.entries(collection.spec.schema.properties).filter(([name]) => !writeOnly.has(name)));
    validate = compileBodyValidator({
      type: 'object',
      properties,
      required: (collection.spec.schema.required ?? []).filter((name) => !writeOnly.has(name)),
    });
    storedValidators.set(collection, validate);
  }
  return validate;
}

function referencedValues(reference: Reference, data: ConfigData): unknown[] {
  if (reference.values) return reference.values(data);
  const value = data[reference.field];
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Re-validates every stored object against what declares its kind: the collection's schema, unique fields,
 * references (to objects of the same store) and its own invariants; a settings section's schema. Kinds that no
 * collection or section of this build declares are reported, not silently passed.
 */
export function checkConfiguration(store: ConfigStore, collections: CollectionRegistry, catalogue: KindCatalogue): ConfigurationCheck {
  const errors: string[] = [];
  const warnings: string[] = [];
  const kinds: KindCheck[] = [];
  const snapshot = store.snapshot();
  const present = new Map<string, number>();
  for (const object of snapshot) present.set(object.kind, (present.get(object.kind) ?? 0) + 1);
  const indexes = new Map<string, Set<unknown>>();
  const indexOf = (kind: string, by: string) => {
    const key = `${kind}\n${by}`;
    let index = indexes.get(key);
    if (!index) {
      index = new Set(store.list(kind).map((o) => (by === 'id' ? o.id : o.data[by])));
      indexes.set(key, index);
    }
    return index;
  };
  const limit = (list: string[], message: string) => {
    if (list.length < 200) list.push(message);
  };

  const covered = new Set<string>();
  for (const collection of collections.all()) {
    const { spec } = collection;
    covered.add(spec.kind);
    const objects = store.list(spec.kind);
    if (objects.length === 0) continue;
    const validate = storedValidator(collection);
    let referencesChecked = 0;
    const seen = new Map<string, string>();
    for (const object of objects) {
      const label = `${spec.kind} ${object.id}`;
      if (!validate(structuredClone(object.data))) {
        limit(errors, `${label}: ${describeValidationErrors(validate.errors ?? [], 'data')}`);
        continue;
      }
      for (const field of spec.unique ?? []) {
        const value = object.data[field];
        if (value === undefined) continue;
        const scope = spec.parent ? String(object.data[spec.parent.field]) : '';
        const key = `${field}\n${scope}\n${JSON.stringify(value)}`;
        const other = seen.get(key);
        if (other) limit(errors, `${label}: ${field} "${String(value)}" is also used by ${other}`);
        else seen.set(key, object.id);
      }
      for (const reference of spec.references ?? []) {
        const index = indexOf(reference.kind, reference.by ?? 'id');
        for (const value of referencedValues(reference, object.data)) {
          referencesChecked++;
          if (!index.has(value)) limit(errors, `${label}: ${reference.field} names ${reference.kind} "${String(value)}", which does not exist`);
        }
      }
      const problem = spec.validate && problemOf(() => spec.validate!(object.data, { store, existing: object, collections }));
      if (problem) limit(errors, `${label}: ${problem}`);
    }
    kinds.push({ kind: spec.kind, objects: objects.length, schema: 'collection', references_checked: referencesChecked });
  }
  for (const declaration of catalogue.all()) {
    if (declaration.shape !== 'singleton' || covered.has(declaration.kind)) continue;
    covered.add(declaration.kind);
    const objects = store.list(declaration.kind);
    if (objects.length === 0) continue;
    for (const object of objects) {
      const problem = declaration.check?.(object.data);
      if (problem) limit(errors, `${declaration.kind}: ${problem}`);
    }
    kinds.push({ kind: declaration.kind, objects: objects.length, schema: 'settings section', references_checked: 0 });
  }
  for (const [kind, count] of [...present].sort()) {
    if (covered.has(kind)) continue;
    kinds.push({ kind, objects: count, schema: 'none', references_checked: 0 });
    warnings.push(`${kind}: ${count} object(s) not schema-checked: no collection or settings section of this build declares the kind`);
  }
  kinds.sort((a, b) => a.kind.localeCompare(b.kind));
  return { errors, warnings, kinds, objects: snapshot.length };
}
