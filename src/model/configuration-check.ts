import { problemOf } from '../core/errors.js';
import type { ConfigObject, ConfigStore } from '../store/config-store.js';
import type { KindCatalogue } from '../store/kind-catalogue.js';
import type { CollectionModel } from './collection-model.js';
import { referencedValues, referenceKeyOf } from './references.js';
import type { SingletonModel } from './singleton-model.js';
import { uniqueKey } from './unique-fields.js';
import { describeValidationErrors } from './validation.js';

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

/** What the check consults: every declared model, the store's catalogue (hand-kept sections) and reference lookups. */
export interface CheckedModels {
  collections: readonly CollectionModel[];
  singletons: readonly SingletonModel[];
  catalogue: KindCatalogue;
  assertNotReferenced(target: ConfigObject, store: ConfigStore): void;
}

/** At most this many messages of each sort: a broken import can have thousands. */
const MESSAGE_LIMIT = 200;

/**
 * Re-validates every object of `store` (the live configuration, or a candidate one: an import, a restore) as a
 * direct write would: a collection's schema, unique fields, references (to objects of the same store) and its
 * own validator, which sees that store too; a settings section's schema and validator; a hand-kept section's
 * check. Kinds that nothing of this build declares are reported, not silently passed.
 */
export function checkConfiguration(
  store: ConfigStore,
  models: CheckedModels,
): ConfigurationCheck {
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
      index = new Set(store.list(kind).map((o) => referenceKeyOf(o, by)));
      indexes.set(key, index);
    }
    return index;
  };
  const limit = (list: string[], message: string) => {
    if (list.length < MESSAGE_LIMIT) list.push(message);
  };

  const covered = new Set<string>();
  for (const model of models.collections) {
    const { declaration } = model;
    covered.add(model.kind);
    const objects = store.list(model.kind);
    if (objects.length === 0) continue;
    let referencesChecked = 0;
    const seen = new Map<string, string>();
    for (const object of objects) {
      const label = `${model.kind} ${object.id}`;
      if (!model.validateStored(structuredClone(object.data))) {
        limit(errors, `${label}: ${describeValidationErrors(model.validateStored.errors ?? [], 'data')}`);
        continue;
      }
      for (const rule of model.unique) {
        const value = uniqueKey(rule, object.data);
        if (value === undefined) continue;
        const scope = declaration.parent ? String(object.data[declaration.parent.field]) : '';
        const key = `${rule.field}\n${scope}\n${JSON.stringify(value)}`;
        const other = seen.get(key);
        if (other) limit(errors, `${label}: ${rule.field} "${String(object.data[rule.field])}" is also used by ${other}`);
        else seen.set(key, object.id);
      }
      for (const reference of declaration.references ?? []) {
        const index = indexOf(reference.kind, reference.by ?? 'id');
        for (const value of referencedValues(reference, object.data)) {
          referencesChecked++;
          if (!index.has(value)) limit(errors, `${label}: ${reference.field} names ${reference.kind} "${String(value)}", which does not exist`);
        }
      }
      const problem = declaration.validate && problemOf(() => declaration.validate!(structuredClone(object.data), {
        store, existing: object, assertNotReferenced: (target) => models.assertNotReferenced(target, store),
      }));
      if (problem) limit(errors, `${label}: ${problem}`);
    }
    kinds.push({ kind: model.kind, objects: objects.length, schema: 'collection', references_checked: referencesChecked });
  }
  const sectionChecks = [
    ...models.singletons.map((model) => ({ kind: model.kind, check: (data: Record<string, unknown>) => model.problemWith(data) })),
    ...models.catalogue.all().filter((declaration) => declaration.shape === 'singleton' && declaration.check).map((declaration) => ({ kind: declaration.kind, check: declaration.check! })),
  ];
  for (const { kind, check } of sectionChecks) {
    if (covered.has(kind)) continue;
    covered.add(kind);
    const objects = store.list(kind);
    if (objects.length === 0) continue;
    for (const object of objects) {
      const problem = check(object.data);
      if (problem) limit(errors, `${kind}: ${problem}`);
    }
    kinds.push({ kind, objects: objects.length, schema: 'settings section', references_checked: 0 });
  }
  for (const [kind, count] of [...present].sort()) {
    if (covered.has(kind)) continue;
    kinds.push({ kind, objects: count, schema: 'none', references_checked: 0 });
    warnings.push(`${kind}: ${count} object(s) not schema-checked: no collection or settings section of this build declares the kind`);
  }
  kinds.sort((a, b) => a.kind.localeCompare(b.kind));
  return { errors, warnings, kinds, objects: snapshot.length };
}
