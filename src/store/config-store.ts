import type { Db } from './database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { newId } from '../core/ids.js';
import { KindCatalogue } from './kind-catalogue.js';
import { storedDataText } from './data-text.js';

export type ConfigData = Record<string, unknown>;

export interface ConfigObject {
  id: string;
  kind: string;
  position: number;
  data: ConfigData;
  created_at: string;
  updated_at: string;
}

interface Row {
  id: string;
  kind: string;
  position: number;
  data: string;
  created_at: string;
  updated_at: string;
}

export type ConfigChange = { kind: string; op: 'insert' | 'update' | 'delete' | 'reorder' | 'replace' };

const singletonId = (kind: string) => `singleton:${kind}`;

/**
 * The configuration store: every configuration object of every kind in one table, so history, export,
 * restore and commit-confirm work on the whole configuration at once. Reads are served from an in-memory
 * copy per kind (this process is the only writer); any failed transaction drops the copy so it is re-read.
 */
export class ConfigStore {
  private readonly cache = new Map<string, ConfigObject[]>();
  private readonly listeners = new Set<(change: ConfigChange) => void>();
  private readonly writeGuards = new Set<(kind: string) => void>();
  /** Counts changes per kind; `epoch` counts changes to every kind at once (replaceAll, a rolled-back transaction). */
  private readonly kindGenerations = new Map<string, number>();
  private epoch = 0;
  private changes = 0;
  private depth = 0;
  private settleQueue: ((committed: boolean) => void)[] = [];
  private readonly statements;
  /** Which kinds exist and which of their fields are secret (filled by collections and settings sections). */
  readonly kinds = new KindCatalogue();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.statements = {
      byKind: db.prepare('SELECT * FROM config_objects WHERE kind = ? ORDER BY position, created_at'),
      insert: db.prepare(
        'INSERT INTO config_objects (id, kind, position, data, created_at, updated_at) VALUES (@id, @kind, @position, @data, @created_at, @updated_at)',
      ),
      update: db.prepare('UPDATE config_objects SET data = ?, updated_at = ? WHERE id = ? AND kind = ?'),
      position: db.prepare('UPDATE config_objects SET position = ? WHERE id = ? AND kind = ?'),
      remove: db.prepare('DELETE FROM config_objects WHERE id = ? AND kind = ?'),
      all: db.prepare('SELECT * FROM config_objects ORDER BY kind, position, created_at'),
      kinds: db.prepare('SELECT DISTINCT kind FROM config_objects ORDER BY kind'),
      clear: db.prepare('DELETE FROM config_objects'),
    };
  }

  /** Runs fn in one SQLite transaction (nesting joins the outer one). */
  transaction<T>(fn: () => T): T {
    const outermost = this.depth === 0;
    this.depth++;
    let result: T;
    try {
      result = this.db.transaction(fn)();
    } catch (error) {
      this.cache.clear();
      this.kindsPresent = undefined;
      this.contentStamp++;
      // The in-memory copy may have shown the rolled-back writes: whatever was derived from it is stale.
      this.epoch++;
      this.depth--;
      if (outermost) this.settle(false);
      throw error;
    }
    this.depth--;
    if (outermost) this.settle(true);
    return result;
  }

  /**
   * Calls `settled` once the outermost transaction running now ends: with true when it committed, false when it
   * rolled back. Outside a transaction it is called at once with true. Change hooks use it, so they never act on
   * a write that was rolled back.
   */
  afterTransaction(settled: (committed: boolean) => void): void {
    if (this.depth === 0) settled(true);
    else this.settleQueue.push(settled);
  }

  onChange(listener: (change: ConfigChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `guard` just before every change is written (insert, update, delete, reorder, replaceAll); a guard that
   * throws refuses the change with nothing written. Conditional writes use it (http/conditional-twins.ts).
   */
  guardWrites(guard: (kind: string) => void): () => void {
    this.writeGuards.add(guard);
    return () => this.writeGuards.delete(guard);
  }

  /**
   * Bumped before every write and whenever the in-memory copy is dropped: `everything()` (one SQL query and a
   * 10,000-element array) is remembered in between, as a version, the hash and the diff each ask for it.
   */
  private contentStamp = 0;
  private everythingMemo: { stamp: number; objects: readonly ConfigObject[] } | undefined;
  private kindsPresent: string[] | undefined;

  /**
   * A value that differs whenever the objects of `kind` (default: of any kind) may have changed since it was
   * last read (every insert, update, delete, reorder, replaceAll and rolled-back transaction), for caches
   * derived from them.
   */
  generation(kind?: string): string {
    return `${this.epoch}.${kind === undefined ? this.changes : (this.kindGenerations.get(kind) ?? 0)}`;
  }

  list(kind: string): readonly ConfigObject[] {
    let objects = this.cache.get(kind);
    if (!objects) {
      objects = (this.statements.byKind.all(kind) as Row[]).map(fromRow);
      this.cache.set(kind, objects);
    }
    return objects;
  }

  get(kind: string, id: string): ConfigObject | undefined {
    return this.list(kind).find((o) => o.id === id);
  }

  insert(kind: string, data: ConfigData, id = newId()): ConfigObject {
    const objects = this.mutable(kind);
    const now = isoTime(this.clock.now());
    const position = objects.length === 0 ? 0 : objects[objects.length - 1].position + 1;
    const object: ConfigObject = { id, kind, position, data, created_at: now, updated_at: now };
    this.beforeWrite(kind);
    this.statements.insert.run({ ...object, data: storedDataText(data) });
    if (objects.length === 0) this.kindsPresent = undefined;
    objects.push(object);
    this.emit({ kind, op: 'insert' });
    return object;
  }

  update(kind: string, id: string, data: ConfigData): ConfigObject | undefined {
    const objects = this.mutable(kind);
    const index = objects.findIndex((o) => o.id === id);
    if (index < 0) return undefined;
    this.beforeWrite(kind);
    const updated: ConfigObject = { ...objects[index], data, updated_at: isoTime(this.clock.now()) };
    this.statements.update.run(storedDataText(data), updated.updated_at, id, kind);
    objects[index] = updated;
    this.emit({ kind, op: 'update' });
    return updated;
  }

  /** Changes several objects of one kind in one transaction, announcing the change once. */
  updateMany(kind: string, changes: readonly { id: string; data: ConfigData }[]): void {
    if (changes.length === 0) return;
    this.transaction(() => {
      this.beforeWrite(kind);
      const objects = this.mutable(kind);
      const indexById = new Map(objects.map((o, index) => [o.id, index]));
      const now = isoTime(this.clock.now());
      for (const { id, data } of changes) {
        const index = indexById.get(id);
        if (index === undefined) throw new Error(`${kind} ${id} does not exist`);
        this.statements.update.run(storedDataText(data), now, id, kind);
        objects[index] = { ...objects[index], data, updated_at: now };
      }
    });
    this.emit({ kind, op: 'update' });
  }

  remove(kind: string, id: string): boolean {
    const objects = this.mutable(kind);
    const index = objects.findIndex((o) => o.id === id);
    if (index < 0) return false;
    this.beforeWrite(kind);
    this.statements.remove.run(id, kind);
    objects.splice(index, 1);
    if (objects.length === 0) this.kindsPresent = undefined;
    this.emit({ kind, op: 'delete' });
    return true;
  }

  /** Gives the objects of a kind a new complete order; the caller has checked that ids is a permutation. */
  reorder(kind: string, ids: readonly string[]): void {
    this.transaction(() => {
      this.beforeWrite(kind);
      const byId = new Map(this.mutable(kind).map((o) => [o.id, o]));
      const reordered = ids.map((id, position) => {
        this.statements.position.run(position, id, kind);
        return { ...byId.get(id)!, position };
      });
      this.cache.set(kind, reordered);
    });
    this.emit({ kind, op: 'reorder' });
  }

  /** Settings sections and other one-of-a-kind objects. */
  getSingleton(kind: string): ConfigData | undefined {
    return this.get(kind, singletonId(kind))?.data;
  }

  putSingleton(kind: string, data: ConfigData): ConfigData {
    return this.transaction(() => {
      const id = singletonId(kind);
      return (this.update(kind, id, data) ?? this.insert(kind, data, id)).data;
    });
  }

  /**
   * Every object of every kind from the in-memory copy, by kind then position: no SQL or JSON parsing. The
   * objects are the store's own and must not be changed.
   */
  everything(): readonly ConfigObject[] {
    if (this.everythingMemo?.stamp !== this.contentStamp) {
      // The kinds present change only when a kind gains its first object or loses its last (or on a replace or
      // rollback): asked of SQLite (a scan of every row) only then, not after every write.
      this.kindsPresent ??= (this.statements.kinds.all() as { kind: string }[]).map(({ kind }) => kind);
      this.everythingMemo = { stamp: this.contentStamp, objects: this.kindsPresent.flatMap((kind) => this.list(kind)) };
    }
    return this.everythingMemo.objects;
  }

  /** The whole configuration, for versions, export and diff. */
  snapshot(): ConfigObject[] {
    return (this.statements.all.all() as Row[]).map(fromRow);
  }

  /** Replaces the whole configuration atomically (restore, import). */
  replaceAll(objects: readonly ConfigObject[]): void {
    this.transaction(() => {
      this.beforeWrite('*');
      this.statements.clear.run();
      for (const object of objects) this.statements.insert.run({ ...object, data: storedDataText(object.data) });
      this.cache.clear();
      this.kindsPresent = undefined;
    });
    this.emit({ kind: '*', op: 'replace' });
  }

  private settle(committed: boolean): void {
    const queue = this.settleQueue;
    this.settleQueue = [];
    for (const settled of queue) settled(committed);
  }

  private beforeWrite(kind: string): void {
    this.contentStamp++;
    for (const guard of this.writeGuards) guard(kind);
  }

  private mutable(kind: string): ConfigObject[] {
    return this.list(kind) as ConfigObject[];
  }

  private emit(change: ConfigChange): void {
    this.changes++;
    if (change.kind === '*') this.epoch++;
    else this.kindGenerations.set(change.kind, (this.kindGenerations.get(change.kind) ?? 0) + 1);
    for (const listener of this.listeners) listener(change);
  }
}

function fromRow(row: Row): ConfigObject {
  return { ...row, data: JSON.parse(row.data) as ConfigData };
}
