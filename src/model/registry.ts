import { badRequest, conflict } from '../core/errors.js';
import { canonicalJson } from '../core/canonical-json.js';
import type { Sealer } from '../core/crypto.js';
import type { ConfigData, ConfigObject, ConfigStore } from '../store/config-store.js';
import { ChangeHooks } from './change-hooks.js';
import { CollectionModel, type ModelSite } from './collection-model.js';
import { checkConfiguration, type ConfigurationCheck } from './configuration-check.js';
import type { ChangeHook, CollectionDeclaration, ModelChange, ObjectWrite, SingletonDeclaration } from './declarations.js';
import { referencedValues, referenceKeyOf } from './references.js';
import { SingletonModel } from './singleton-model.js';
import type { DataOf, JsonObjectSchema } from './schema-helpers.js';

/**
 * Every declared kind of one configuration store: collections and settings sections, the references between
 * them, the change hooks, and the whole-configuration operations (check, replace) import, restore and
 * commit-confirm go through.
 */
export class ModelRegistry implements ModelSite {
  private readonly collectionsByKind = new Map<string, CollectionModel>();
  private readonly singletonsByKind = new Map<string, SingletonModel>();
  private readonly hooks: ChangeHooks;
  /** What was written since the running transaction began; the hooks fire once it commits. */
  private pending: { kinds: Set<string>; objects: ObjectWrite[] } | undefined;

  constructor(
    readonly store: ConfigStore,
    readonly sealer: Sealer,
    onHookError: (error: unknown) => void,
  ) {
    this.hooks = new ChangeHooks(onHookError);
  }

  collection(declaration: CollectionDeclaration): CollectionModel {
    this.assertNew(declaration.kind);
    const model = new CollectionModel(declaration, this);
    this.collectionsByKind.set(declaration.kind, model);
    this.store.kinds.declare({ kind: declaration.kind, shape: 'collection', writeOnly: [...(declaration.writeOnly ?? [])], writeAccess: declaration.writeAccess });
    return model;
  }

  singleton<S extends JsonObjectSchema>(declaration: SingletonDeclaration<S>): SingletonModel<DataOf<S>> {
    this.assertNew(declaration.kind);
    const model = new SingletonModel<DataOf<S>>(declaration, this);
    this.singletonsByKind.set(declaration.kind, model);
    this.store.kinds.declare({ kind: declaration.kind, shape: 'singleton', writeOnly: [...(declaration.writeOnly ?? [])], writeAccess: declaration.writeAccess });
    return model;
  }

  /** The collection model of a kind (services reach another area's objects and secrets through it). */
  get(kind: string): CollectionModel {
    const model = this.collectionsByKind.get(kind);
    if (!model) throw new Error(`no collection of kind ${kind}`);
    return model;
  }

  collections(): CollectionModel[] {
    return [...this.collectionsByKind.values()];
  }

  private readonly committedListeners = new Set<(change: Pick<ModelChange, 'kinds' | 'objects'>) => void>();

  /** Called synchronously after every committed write, with what it wrote (the audit of configuration changes). */
  onCommitted(listener: (change: Pick<ModelChange, 'kinds' | 'objects'>) => void): () => void {
    this.committedListeners.add(listener);
    return () => this.committedListeners.delete(listener);
  }

  /** Registers a hook for changes of any of `kinds` (see ChangeHooks); returns its removal. */
  onChanged(kinds: readonly (string | { kind: string })[], hook: ChangeHook): () => void {
    return this.hooks.on(kinds.map((kind) => (typeof kind === 'string' ? kind : kind.kind)), hook);
  }

  /** Runs fn and waits for the change hooks its writes fired (the HTTP layer wraps every write request in it). */
  settle<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.hooks.settle(fn);
  }

  /** Called by the models after each write: the hooks of the kinds written fire once the outermost transaction commits. */
  changed(kind: string, write?: Omit<ObjectWrite, 'kind'>): void {
    const first = this.pending === undefined;
    const pending = (this.pending ??= { kinds: new Set(), objects: [] });
    pending.kinds.add(kind);
    if (write) pending.objects.push({ kind, ...write });
    if (!first) return;
    this.store.afterTransaction((committed) => {
      this.pending = undefined;
      if (!committed) return;
      for (const listener of this.committedListeners) listener(pending);
      this.hooks.fire({ ...pending, cause: 'write' });
    });
  }

  /**
   * Every problem a direct write would refuse in the objects of `store` (by default the live one): the check
   * import and restore pass before anything is replaced, and GET /config/check reports.
   */
  check(store: ConfigStore = this.store): ConfigurationCheck {
    return checkConfiguration(store, {
      collections: this.collections(),
      singletons: [...this.singletonsByKind.values()],
      catalogue: this.store.kinds,
      assertNotReferenced: (target, within) => this.assertNotReferenced(target, within),
    });
  }

  /**
   * Replaces the whole configuration (import, restore, commit-confirm rollback), then fires the hooks of every
   * kind whose objects differ, so pending flags and appliers see the new data; resolves once the hooks ran (a
   * hook's failure rejects, after the store was replaced). The caller has checked the objects (see check).
   */
  replaceAll(objects: readonly ConfigObject[]): Promise<void> {
    return this.hooks.settle(() => {
      const changed = changedKinds(this.store.snapshot(), objects);
      this.store.replaceAll(objects);
      if (changed.size > 0) this.hooks.fire({ kinds: changed, objects: [], cause: 'replace' });
    });
  }

  assertReferencesExist(declaration: CollectionDeclaration, data: ConfigData, store: ConfigStore): void {
    for (const reference of declaration.references ?? []) {
      const by = reference.by ?? 'id';
      for (const value of referencedValues(reference, data)) {
        const found = store.list(reference.kind).some((o) => referenceKeyOf(o, by) === value);
        if (!found) throw badRequest(`body.${reference.field}: ${reference.kind} "${String(value)}" does not exist`);
      }
    }
  }

  /** 409 when any object of any kind in `store` still names this one. */
  assertNotReferenced(target: ConfigObject, store: ConfigStore = this.store): void {
    for (const model of this.collectionsByKind.values()) {
      for (const reference of model.declaration.references ?? []) {
        if (reference.kind !== target.kind) continue;
        const key = referenceKeyOf(target, reference.by);
        const user = store.list(model.kind).find((o) => referencedValues(reference, o.data).includes(key));
        if (user) throw conflict(`${target.kind} ${String(key)} is in use by ${model.noun} ${user.id} (field ${reference.field})`);
      }
    }
  }

  private assertNew(kind: string): void {
    if (this.collectionsByKind.has(kind) || this.singletonsByKind.has(kind)) throw new Error(`kind ${kind} declared twice`);
  }
}

/** The kinds whose objects (ids, order or data) differ between two whole configurations. */
function changedKinds(before: readonly ConfigObject[], after: readonly ConfigObject[]): Set<string> {
  const fingerprints = (objects: readonly ConfigObject[]) => {
    const byKind = new Map<string, ConfigObject[]>();
    for (const object of objects) {
      let list = byKind.get(object.kind);
      if (!list) byKind.set(object.kind, (list = []));
      list.push(object);
    }
    return new Map([...byKind].map(([kind, list]) => [
      kind,
      // Canonical: the same data with its keys in another order (a version stores them sorted) is no change.
      canonicalJson(list.sort((a, b) => a.position - b.position || a.created_at.localeCompare(b.created_at)).map((o) => [o.id, o.data])),
    ]));
  };
  const old = fingerprints(before);
  const next = fingerprints(after);
  return new Set([...new Set([...old.keys(), ...next.keys()])].filter((kind) => old.get(kind) !== next.get(kind)));
}
