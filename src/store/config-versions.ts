import { createHash, type Hash } from 'node:crypto';
import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';
import { sha256Hex } from '../core/crypto.js';
import type { Db } from './database.js';
import type { ConfigData, ConfigObject, ConfigStore } from './config-store.js';
import { isoTime, type Clock } from '../core/clock.js';
import { canonicalJson } from '../core/canonical-json.js';
import { whenQuiet, type QuietWork } from './when-quiet.js';

/** Why a version was recorded. */
export type VersionSource =
  | 'apply' | 'save' | 'restore' | 'import' | 'rollback' | 'pre-rollback' | 'commit-confirm' | 'objstore-import' | 'thirdparty-import'
  | 'cluster-sync';

export interface VersionRecord {
  version: number;
  /** sha256 of the canonical configuration content (kind, id, position, data of every object). */
  hash: string;
  created_at: string;
  created_by: string;
  comment: string | null;
  source: VersionSource;
  /** Recorded by a successful apply: this content was pushed to the system. */
  applied: boolean;
  applied_at: string | null;
  /** A commit-confirm window rolled away from this version. */
  rolled_back: boolean;
  resource_count: number;
}

export interface RetentionPolicy {
  /** Keep at most this many versions (null: no count limit). */
  max_versions: number | null;
  /** Keep versions at most this many days old (null: no age limit). */
  max_days: number | null;
}

export const DEFAULT_RETENTION: RetentionPolicy = { max_versions: 200, max_days: null };

interface VersionRow extends Omit<VersionRecord, 'applied' | 'rolled_back'> {
  applied: number;
  rolled_back: number;
}

const toRecord = (row: VersionRow): VersionRecord => ({ ...row, applied: row.applied === 1, rolled_back: row.rolled_back === 1 });

/** Hash order: by kind, then position, then id (equal configurations in any row order hash equally). */
const hashOrder = (a: ConfigObject, b: ConfigObject) =>
  (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Objects between two remembered states of the configuration hash. */
const HASH_CHUNK = 256;

/**
 * The configuration hash's chunks of objects as last hashed: the objects, their lines as one buffer, and the
 * hash's state after the chunk. The store replaces an object when it changes, so a chunk holding the same objects
 * hashes the same bytes: hashing resumes after the leading unchanged chunks, and the unchanged chunks after a
 * changed one are hashed from their buffer (one update each, no line looked up again). An alias changed among
 * 10,000 rules, which sorts before all of them, so costs 40 updates instead of 10,000.
 */
export class HashCheckpoints {
  private chunks: { members: readonly ConfigObject[]; state: Hash; bytes: Buffer }[] = [];

  /** The remembered chunk `index` when it holds exactly these objects. */
  same(index: number, members: readonly ConfigObject[]): { state: Hash; bytes: Buffer } | undefined {
    const known = this.chunks[index];
    return known !== undefined && known.members.length === members.length && known.members.every((o, i) => o === members[i]) ? known : undefined;
  }

  keep(index: number, members: readonly ConfigObject[], state: Hash, bytes: Buffer): void {
    this.chunks[index] = { members, state: state.copy(), bytes };
  }

  truncate(count: number): void {
    this.chunks.length = Math.min(this.chunks.length, count);
  }
}

const chunksOf = (objects: readonly ConfigObject[]) =>
  Array.from({ length: Math.ceil(objects.length / HASH_CHUNK) }, (_, c) => objects.slice(c * HASH_CHUNK, (c + 1) * HASH_CHUNK));

/**
 * The chunks of `objects` in hash order. The store lists objects in that order already: checking is linear, sorting
 * 10,000 is not, and a chunk remembered as it is was checked when it was hashed (only its edges are checked again).
 */
function chunksInHashOrder(objects: readonly ConfigObject[], checkpoints: HashCheckpoints | undefined): ConfigObject[][] {
  const chunks = chunksOf(objects);
  const inOrder = chunks.every((members, c) =>
    (c === 0 || hashOrder(chunks[c - 1][chunks[c - 1].length - 1], members[0]) <= 0) &&
    (checkpoints?.same(c, members) !== undefined || members.every((o, i) => i === 0 || hashOrder(members[i - 1], o) <= 0)));
  return inOrder ? chunks : chunksOf([...objects].sort(hashOrder));
}

/**
 * Content hash of a whole configuration: equal configurations hash equally whatever their timestamps or row
 * order. Each object contributes one line, `kind id position sha256(canonical JSON of data)`; `line` gives that
 * line and `checkpoints` the chunks last hashed (the store passes both, so after a change only changed objects are
 * serialised again, and only the chunks from the first changed one on are hashed again).
 */
export function configurationHash(
  objects: readonly ConfigObject[],
  line: (object: ConfigObject) => string | Buffer = hashLine((data) => sha256Hex(canonicalJson(data))),
  checkpoints?: HashCheckpoints,
): string {
  const chunks = chunksInHashOrder(objects, checkpoints);
  const remembered = chunks.map((members, c) => checkpoints?.same(c, members));
  let resumeAt = 0;
  while (resumeAt < chunks.length && remembered[resumeAt]) resumeAt++;
  const hash = resumeAt > 0 ? remembered[resumeAt - 1]!.state.copy() : createHash('sha256');
  for (let c = resumeAt; c < chunks.length; c++) {
    const members = chunks[c];
    const bytes = remembered[c]?.bytes ?? Buffer.concat(members.map((object) => {
      const text = line(object);
      return typeof text === 'string' ? Buffer.from(text) : text;
    }));
    hash.update(bytes);
    checkpoints?.keep(c, members, hash, bytes);
  }
  checkpoints?.truncate(chunks.length);
  return hash.digest('hex');
}

const hashLine = (dataDigest: (data: ConfigData) => string) => ({ kind, id, position, data }: ConfigObject) =>
  `${JSON.stringify(kind)} ${JSON.stringify(id)} ${position} ${dataDigest(data)}\n`;

/** A content stored as the change from another: objects added or changed (whole), and the keys of those removed. */
interface ContentDelta {
  changed: ConfigObject[];
  removed: string[];
}

const objectKey = (object: { kind: string; id: string }) => `${object.kind}\u0000${object.id}`;
/** The order the store lists objects in: by kind, then position, then creation. */
const storeOrder = (a: ConfigObject, b: ConfigObject) =>
  (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.position - b.position || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
/** Longest chain of deltas before a content is stored whole again (reading a version applies at most this many). */
const MAX_DELTA_DEPTH = 32;

/**
 * Configuration versions: metadata rows plus gzip-compressed contents stored once per distinct hash, and a
 * small key/value table for lifecycle state (active version, retention, commit-confirm window). Only this
 * file speaks SQL for them.
 */
export class ConfigVersions {
  private readonly statements;
  /** The current hash and the store generation it was computed at. */
  private cachedHash: { generation: string; hash: string } | undefined;
  /** The hash computed once writes pause (hashWhenQuiet). */
  private hashing: QuietWork | undefined;
  /**
   * Canonical text and digest of stored data objects, and the JSON of stored objects, remembered per object: the
   * store replaces a data object (and its object) on every change and never changes one in place, so after a
   * change only the changed objects are serialised again. Every decision compares the texts.
   */
  private readonly canonicalData = new WeakMap<ConfigData, { text: string; digest: string }>();
  private readonly objectTexts = new WeakMap<ConfigObject, string>();
  private readonly hashLines = new WeakMap<ConfigObject, Buffer>();
  private readonly hashLine = hashLine((data) => this.canonicalOf(data).digest);
  private readonly hashCheckpoints = new HashCheckpoints();
  /** The last content recorded from the store, object by object, so the next one can be stored as its change. */
  private lastContent: { hash: string; depth: number; objects: readonly ConfigObject[] } | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: ConfigStore,
    private readonly clock: Clock,
  ) {
    this.statements = {
      insertContent: db.prepare('INSERT OR IGNORE INTO config_contents (hash, object_count, content, base_hash, depth) VALUES (?, ?, ?, ?, ?)'),
      content: db.prepare('SELECT content, base_hash FROM config_contents WHERE hash = ?'),
      hasContent: db.prepare('SELECT 1 FROM config_contents WHERE hash = ?'),
      depth: db.prepare('SELECT depth FROM config_contents WHERE hash = ?'),
      insertVersion: db.prepare(
        `INSERT INTO config_versions (created_at, created_by, comment, source, hash, applied, applied_at, resource_count)
         VALUES (@created_at, @created_by, @comment, @source, @hash, @applied, @applied_at, @resource_count)`,
      ),
      byVersion: db.prepare('SELECT * FROM config_versions WHERE version = ?'),
      page: db.prepare('SELECT * FROM config_versions ORDER BY version DESC LIMIT ? OFFSET ?'),
      count: db.prepare('SELECT count(*) AS n FROM config_versions'),
      allNewestFirst: db.prepare('SELECT version, created_at FROM config_versions ORDER BY version DESC'),
      remove: db.prepare('DELETE FROM config_versions WHERE version = ?'),
      // A content still serving as another's base stays until that one goes.
      orphans: db.prepare(`DELETE FROM config_contents WHERE hash NOT IN (SELECT hash FROM config_versions)
        AND hash NOT IN (SELECT base_hash FROM config_contents WHERE base_hash IS NOT NULL)`),
      rolledBack: db.prepare('UPDATE config_versions SET rolled_back = 1 WHERE version = ?'),
      getMeta: db.prepare('SELECT value FROM config_meta WHERE key = ?'),
      putMeta: db.prepare('INSERT INTO config_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      deleteMeta: db.prepare('DELETE FROM config_meta WHERE key = ?'),
    };
  }

  /**
   * Computes the configuration hash once writes have paused for `quietMs`, so the next apply finds it ready instead
   * of computing it on the request's path (3 ms at 10,000 rules); a burst of writes is hashed once, after it.
   * Returns the function that stops it (before the database closes).
   */
  hashWhenQuiet(quietMs = 20): () => void {
    const hashing = whenQuiet(this.store, quietMs, () => this.currentHash());
    this.hashing = hashing;
    return () => hashing.stop();
  }

  /** Resolves once the hash of the last writes is computed (at once when none is pending). */
  hashed(): Promise<void> {
    return this.hashing?.settled() ?? Promise.resolve();
  }

  /** Hash of the configuration as it is in the store now (computed again only after the store changed). */
  currentHash(): string {
    const generation = this.store.generation();
    if (this.cachedHash?.generation !== generation) {
      this.cachedHash = { generation, hash: configurationHash(this.store.everything(), (object) => this.hashLineOf(object), this.hashCheckpoints) };
    }
    return this.cachedHash.hash;
  }

  /** Records a version of `objects` (default: the whole current configuration). */
  record(meta: { actor: string; comment?: string | null; source: VersionSource; applied: boolean }, objects?: readonly ConfigObject[]): VersionRecord {
    const hash = objects ? configurationHash(objects) : this.currentHash();
    const count = (objects ?? this.store.everything()).length;
    const now = isoTime(this.clock.now());
    return this.db.transaction(() => {
      // A content already stored (re-applying an unchanged configuration) is neither read nor packed again.
      if (!this.statements.hasContent.get(hash)) this.storeContent(hash, count, objects);
      else if (!objects && this.lastContent?.hash !== hash) this.rememberContent(hash);
      const { lastInsertRowid } = this.statements.insertVersion.run({
        created_at: now, created_by: meta.actor, comment: meta.comment ?? null, source: meta.source, hash,
        applied: meta.applied ? 1 : 0, applied_at: meta.applied ? now : null, resource_count: count,
      });
      const version = Number(lastInsertRowid);
      if (meta.applied) this.setMeta('active_version', version);
      return this.get(version)!;
    })();
  }

  get(version: number): VersionRecord | undefined {
    const row = this.statements.byVersion.get(version) as VersionRow | undefined;
    return row && toRecord(row);
  }

  /** The objects of a stored version, exactly as they were recorded (in the store's order). */
  content(version: number): ConfigObject[] | undefined {
    const record = this.get(version);
    return record ? this.contentOf(record.hash) : undefined;
  }

  private contentOf(hash: string): ConfigObject[] | undefined {
    const row = this.statements.content.get(hash) as { content: Buffer; base_hash: string | null } | undefined;
    if (!row) return undefined;
    const unpacked = JSON.parse(gunzipSync(row.content).toString('utf8')) as ConfigObject[] | ContentDelta;
    if (row.base_hash === null) return unpacked as ConfigObject[];
    const base = this.contentOf(row.base_hash);
    if (!base) return undefined;
    const delta = unpacked as ContentDelta;
    const byKey = new Map(base.map((o) => [objectKey(o), o]));
    for (const key of delta.removed) byKey.delete(key);
    for (const object of delta.changed) byKey.set(objectKey(object), object);
    return [...byKey.values()].sort(storeOrder);
  }

  /**
   * Packs a content: the change from the last content recorded from the store when it is known and the chain is
   * short, otherwise whole. The change of one object among 10,000 is a few hundred bytes instead of megabytes.
   */
  private storeContent(hash: string, count: number, objects: readonly ConfigObject[] | undefined): void {
    const pack = (value: unknown) => gzipSync(JSON.stringify(value), { level: 4, strategy: zlib.Z_DEFAULT_STRATEGY });
    if (objects) {
      this.statements.insertContent.run(hash, count, pack(objects), null, 0);
      return;
    }
    const current = this.store.everything();
    const base = this.lastContent;
    if (base && base.depth < MAX_DELTA_DEPTH && this.statements.hasContent.get(base.hash)) {
      const { changed, removed } = this.changesSince(base.objects, current);
      this.statements.insertContent.run(hash, count, gzipSync(`{"changed":[${changed.map((o) => this.objectText(o)).join(',')}],"removed":${JSON.stringify(removed)}}`, { level: 4 }), base.hash, base.depth + 1);
      this.lastContent = { hash, depth: base.depth + 1, objects: current };
      return;
    }
    this.statements.insertContent.run(hash, count, gzipSync(`[${current.map((o) => this.objectText(o)).join(',')}]`, { level: 4, strategy: zlib.Z_DEFAULT_STRATEGY }), null, 0);
    this.lastContent = { hash, depth: 0, objects: current };
  }

  /**
   * The objects that differ from recorded ones, and the keys of those gone. The store replaces an object when it
   * changes and keeps it otherwise, so identity tells the unchanged ones apart; only the few replaced objects are
   * compared by text. The usual change (objects edited in place, none added, removed or moved) is found by walking
   * both lists side by side; anything else by sets.
   */
  private changesSince(recorded: readonly ConfigObject[], current: readonly ConfigObject[]): { changed: ConfigObject[]; removed: string[] } {
    if (recorded.length === current.length) {
      const changed: ConfigObject[] = [];
      let aligned = true;
      for (let i = 0; i < current.length && aligned; i++) {
        const before = recorded[i];
        const after = current[i];
        if (before === after) continue;
        if (before.kind !== after.kind || before.id !== after.id) aligned = false;
        else if (this.objectText(before) !== this.objectText(after)) changed.push(after);
      }
      if (aligned) return { changed, removed: [] };
    }
    const recordedSet = new Set(recorded);
    const fresh = current.filter((o) => !recordedSet.has(o));
    const kept = new Set(current);
    const replaced = new Map(recorded.filter((o) => !kept.has(o)).map((o) => [objectKey(o), o]));
    const changed = fresh.filter((o) => {
      const before = replaced.get(objectKey(o));
      return !before || this.objectText(before) !== this.objectText(o);
    });
    const freshKeys = new Set(fresh.map(objectKey));
    return { changed, removed: [...replaced.keys()].filter((key) => !freshKeys.has(key)) };
  }

  /** A content already stored is the store's content again: later ones may be stored as changes from it. */
  private rememberContent(hash: string): void {
    const { depth } = this.statements.depth.get(hash) as { depth: number };
    this.lastContent = { hash, depth, objects: this.store.everything() };
  }

  list(limit: number, offset: number): { records: VersionRecord[]; total: number } {
    const rows = this.statements.page.all(limit, offset) as VersionRow[];
    return { records: rows.map(toRecord), total: (this.statements.count.get() as { n: number }).n };
  }

  /** The version last applied (or restored): what the system runs. */
  activeVersion(): number | null {
    return this.getMeta<number>('active_version') ?? null;
  }

  /** The active version when the stored configuration is still exactly its content; otherwise undefined. */
  activeIfCurrent(): VersionRecord | undefined {
    const active = this.activeVersion();
    const record = active === null ? undefined : this.get(active);
    return record && record.hash === this.currentHash() ? record : undefined;
  }

  setActive(version: number): void {
    this.setMeta('active_version', version);
  }

  markRolledBack(version: number): void {
    this.statements.rolledBack.run(version);
  }

  retention(): RetentionPolicy {
    return { ...DEFAULT_RETENTION, ...(this.getMeta<RetentionPolicy>('retention') ?? {}) };
  }

  setRetention(policy: RetentionPolicy): void {
    this.setMeta('retention', policy);
  }

  /**
   * Removes versions beyond the retention policy, never the protected ones (the active version, a
   * commit-confirm rollback target), and then every content no remaining version uses. Returns the removed numbers.
   */
  prune(protectedVersions: readonly (number | null | undefined)[]): number[] {
    const policy = this.retention();
    const keep = new Set(protectedVersions.filter((v): v is number => typeof v === 'number'));
    const cutoff = policy.max_days === null ? null : this.clock.now() - policy.max_days * 86_400_000;
    const rows = this.statements.allNewestFirst.all() as { version: number; created_at: string }[];
    const removed: number[] = [];
    this.db.transaction(() => {
      rows.forEach((row, index) => {
        if (keep.has(row.version)) return;
        const tooMany = policy.max_versions !== null && index >= policy.max_versions;
        const tooOld = cutoff !== null && Date.parse(row.created_at) < cutoff;
        if (tooMany || tooOld) {
          this.statements.remove.run(row.version);
          removed.push(row.version);
        }
      });
      // Each pass frees the bases the previous one released.
      if (removed.length > 0) while (this.statements.orphans.run().changes > 0);
    })();
    return removed;
  }

  getMeta<T>(key: string): T | undefined {
    const row = this.statements.getMeta.get(key) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  setMeta(key: string, value: unknown): void {
    if (value === undefined || value === null) this.statements.deleteMeta.run(key);
    else this.statements.putMeta.run(key, JSON.stringify(value));
  }

  /** An object's line of the configuration hash, remembered per stored object (as bytes, hashed without encoding again). */
  private hashLineOf(object: ConfigObject): Buffer {
    let line = this.hashLines.get(object);
    if (line === undefined) {
      line = Buffer.from(this.hashLine(object));
      this.hashLines.set(object, line);
    }
    return line;
  }

  /** The JSON of one stored object as a version keeps it (its data in canonical form). */
  private objectText(object: ConfigObject): string {
    let text = this.objectTexts.get(object);
    if (text === undefined) {
      const { id, kind, position, data, created_at, updated_at } = object;
      text = `{"id":${JSON.stringify(id)},"kind":${JSON.stringify(kind)},"position":${JSON.stringify(position)},"data":${this.canonicalOf(data).text},"created_at":${JSON.stringify(created_at)},"updated_at":${JSON.stringify(updated_at)}}`;
      this.objectTexts.set(object, text);
    }
    return text;
  }

  private canonicalOf(data: ConfigData): { text: string; digest: string } {
    let canonical = this.canonicalData.get(data);
    if (canonical === undefined) {
      const text = canonicalJson(data);
      canonical = { text, digest: sha256Hex(text) };
      this.canonicalData.set(data, canonical);
    }
    return canonical;
  }
}
