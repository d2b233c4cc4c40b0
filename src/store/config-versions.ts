import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { Db } from './database.js';
import type { ConfigData, ConfigObject, ConfigStore } from './config-store.js';
import { isoTime, type Clock } from '../core/clock.js';
import { canonicalJson } from '../core/canonical-json.js';

/** Why a version was recorded. */
export type VersionSource =
  | 'apply' | 'save' | 'restore' | 'import' | 'rollback' | 'pre-rollback' | 'commit-confirm' | 'objstore-import' | 'thirdparty-import';

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

/** The part of an object that is configuration (timestamps are bookkeeping and do not change the hash). */
const contentOf = (objects: readonly ConfigObject[]) =>
  [...objects]
    .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .map((o) => ({ kind: o.kind, id: o.id, position: o.position, data: o.data }));

/**
 * Content hash of a whole configuration: equal configurations hash equally whatever their timestamps or row
 * order. Each object contributes the canonical JSON of `{kind, id, position, data}`, one per line; `dataText`
 * gives the canonical JSON of a data object (the store passes a remembered one).
 */
export function configurationHash(objects: readonly ConfigObject[], dataText: (data: ConfigData) => string = canonicalJson): string {
  const hash = createHash('sha256');
  for (const { kind, id, position, data } of contentOf(objects)) {
    // Written out in canonicalJson's key order (data, id, kind, position), so the text is the same as before.
    hash.update(`{"data":${dataText(data)},"id":${JSON.stringify(id)},"kind":${JSON.stringify(kind)},"position":${JSON.stringify(position)}}\n`);
  }
  return hash.digest('hex');
}

/**
 * Configuration versions: metadata rows plus gzip-compressed contents stored once per distinct hash, and a
 * small key/value table for lifecycle state (active version, retention, commit-confirm window). Only this
 * file speaks SQL for them.
 */
export class ConfigVersions {
  private readonly statements;
  /** The current hash and the store generation it was computed at. */
  private cachedHash: { generation: string; hash: string } | undefined;
  /**
   * Canonical text of stored data objects, by identity: the store replaces a data object on update and never
   * changes one in place, so after a change only the changed objects are serialised again.
   */
  private readonly canonicalData = new WeakMap<ConfigData, string>();

  constructor(
    private readonly db: Db,
    private readonly store: ConfigStore,
    private readonly clock: Clock,
  ) {
    this.statements = {
      insertContent: db.prepare('INSERT OR IGNORE INTO config_contents (hash, object_count, content) VALUES (?, ?, ?)'),
      content: db.prepare('SELECT content FROM config_contents WHERE hash = ?'),
      hasContent: db.prepare('SELECT 1 FROM config_contents WHERE hash = ?'),
      insertVersion: db.prepare(
        `INSERT INTO config_versions (created_at, created_by, comment, source, hash, applied, applied_at, resource_count)
         VALUES (@created_at, @created_by, @comment, @source, @hash, @applied, @applied_at, @resource_count)`,
      ),
      byVersion: db.prepare('SELECT * FROM config_versions WHERE version = ?'),
      page: db.prepare('SELECT * FROM config_versions ORDER BY version DESC LIMIT ? OFFSET ?'),
      count: db.prepare('SELECT count(*) AS n FROM config_versions'),
      allNewestFirst: db.prepare('SELECT version, created_at FROM config_versions ORDER BY version DESC'),
      remove: db.prepare('DELETE FROM config_versions WHERE version = ?'),
      orphans: db.prepare('DELETE FROM config_contents WHERE hash NOT IN (SELECT hash FROM config_versions)'),
      rolledBack: db.prepare('UPDATE config_versions SET rolled_back = 1 WHERE version = ?'),
      getMeta: db.prepare('SELECT value FROM config_meta WHERE key = ?'),
      putMeta: db.prepare('INSERT INTO config_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      deleteMeta: db.prepare('DELETE FROM config_meta WHERE key = ?'),
    };
  }

  /** Hash of the configuration as it is in the store now (computed again only after the store changed). */
  currentHash(): string {
    const generation = this.store.generation();
    if (this.cachedHash?.generation !== generation) {
      this.cachedHash = { generation, hash: configurationHash(this.store.everything(), (data) => this.canonicalTextOf(data)) };
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
      if (!this.statements.hasContent.get(hash)) {
        const packed = gzipSync(this.contentText(objects), { level: 4, strategy: zlib.Z_DEFAULT_STRATEGY });
        this.statements.insertContent.run(hash, count, packed);
      }
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

  /** The objects of a stored version, exactly as they were recorded. */
  content(version: number): ConfigObject[] | undefined {
    const record = this.get(version);
    if (!record) return undefined;
    const row = this.statements.content.get(record.hash) as { content: Buffer } | undefined;
    return row ? (JSON.parse(gunzipSync(row.content).toString('utf8')) as ConfigObject[]) : undefined;
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
      if (removed.length > 0) this.statements.orphans.run();
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

  /** The JSON array of objects a version stores; the store's own objects reuse their remembered data text. */
  private contentText(objects: readonly ConfigObject[] | undefined): string {
    if (objects) return JSON.stringify(objects);
    const rows = this.store.everything().map(({ id, kind, position, data, created_at, updated_at }) =>
      `{"id":${JSON.stringify(id)},"kind":${JSON.stringify(kind)},"position":${JSON.stringify(position)},"data":${this.canonicalTextOf(data)},"created_at":${JSON.stringify(created_at)},"updated_at":${JSON.stringify(updated_at)}}`);
    return `[${rows.join(',')}]`;
  }

  private canonicalTextOf(data: ConfigData): string {
    let text = this.canonicalData.get(data);
    if (text === undefined) {
      text = canonicalJson(data);
      this.canonicalData.set(data, text);
    }
    return text;
  }
}
