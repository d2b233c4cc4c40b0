/**
 * The packet-filter part of the configuration as one value, and what differs between two of them:
 * "pending" is the difference between the stored configuration and the last applied one.
 */
import { sha256Hex } from '../../core/crypto.js';
import type { Db } from '../../store/database.js';
import { dataText } from '../../store/data-text.js';
import type { ConfigStore } from '../../store/config-store.js';

/** Configuration kinds the packet filter compiles, and their names in pending reports. */
export const PENDING_KINDS = { rule: 'rules', alias: 'aliases', schedule: 'schedules', nat: 'nat' } as const;
export type FilterKind = keyof typeof PENDING_KINDS;
export const SETTINGS_KIND = 'pf_settings';
/** The WAN default block setting (GET/PUT /rules/wan-default-block). */
export const WAN_POLICY_KIND = 'pf_wan_default_block';
/** Interface roles (the networking area's kind): LAN-role interfaces restrict anti-lockout. */
export const INTERFACE_ROLE_KIND = 'interface_role';

/**
 * Settings the compiled ruleset depends on, with the value an older applied snapshot (written before the
 * setting existed) stands for, and their names in pending reports.
 */
export const SETTING_DEFAULTS: Record<string, { name: string; default: unknown }> = {
  block_logging: { name: 'block-logging', default: true },
  anti_lockout_interfaces: { name: 'anti-lockout-interfaces', default: [] },
  // An applied snapshot from before the setting existed blocked nothing by default.
  wan_default_block_interfaces: { name: 'wan-default-block', default: [] },
};

export interface SnapshotObject {
  id: string;
  data: Record<string, unknown>;
}

export interface FilterSnapshot {
  objects: Record<FilterKind, readonly SnapshotObject[]>;
  settings: Record<string, unknown>;
}

export interface KindChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface PendingReport {
  /** Rules, aliases, schedules or settings (block logging, anti-lockout interfaces) differ from what is applied. */
  firewall: boolean;
  /** NAT rules differ from what is applied. */
  nat: boolean;
  changes: Record<(typeof PENDING_KINDS)[FilterKind] | 'settings', KindChanges>;
  /** When the applied configuration was loaded; null before the first reload. */
  applied_at: string | null;
}

// Each kind's list as last taken from a store, with the store's generation of that kind: while the kind is
// unchanged a snapshot hands out the same array, so the compile, the applied rows and the pending report can tell
// an unchanged kind by identity (10,000 rules are not walked again when an alias changed).
const takenLists = new WeakMap<ConfigStore, Map<FilterKind, { generation: string; objects: SnapshotObject[] }>>();

export function takeSnapshot(store: ConfigStore, settings: Record<string, unknown>): FilterSnapshot {
  let taken = takenLists.get(store);
  if (!taken) takenLists.set(store, (taken = new Map()));
  const objects = {} as FilterSnapshot['objects'];
  for (const kind of Object.keys(PENDING_KINDS) as FilterKind[]) {
    const generation = store.generation(kind);
    let list = taken.get(kind);
    if (list?.generation !== generation) {
      list = { generation, objects: store.list(kind).map((o) => ({ id: o.id, data: o.data })) };
      taken.set(kind, list);
    }
    objects[kind] = list.objects;
  }
  return { objects, settings };
}

/** Before the first reload nothing is applied: no objects, and the settings' defaults. */
export const emptySnapshot = (): FilterSnapshot => ({ objects: { rule: [], alias: [], schedule: [], nat: [] }, settings: { block_logging: true } });

// Serialising 10,000 stored rules on every check would dominate: each data object's text is remembered (data-text.ts).
const textOf = dataText;

/** Ids whose relative order changed: everything outside a longest increasing run of old positions. */
function moved(commonInNewOrder: string[], oldIndex: Map<string, number>): Set<string> {
  const positions = commonInNewOrder.map((id) => oldIndex.get(id)!);
  const tails: number[] = [];
  const tailIndex: number[] = [];
  const previous = new Array<number>(positions.length).fill(-1);
  positions.forEach((value, i) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tails[mid] < value) lo = mid + 1;
      else hi = mid;
    }
    tails[lo] = value;
    tailIndex[lo] = i;
    previous[i] = lo > 0 ? tailIndex[lo - 1] : -1;
  });
  const keep = new Set<string>();
  for (let i = tails.length ? tailIndex[tails.length - 1] : -1; i >= 0; i = previous[i]) keep.add(commonInNewOrder[i]);
  return new Set(commonInNewOrder.filter((id) => !keep.has(id)));
}

export function diffKind(stored: readonly SnapshotObject[], applied: readonly SnapshotObject[], ordered: boolean): KindChanges {
  // Right after a reload the applied objects are the stored ones, in order: nothing to compare by text.
  if (stored === applied) return { added: [], changed: [], removed: [] };
  if (stored.length === applied.length && stored.every((o, i) => o.id === applied[i].id && o.data === applied[i].data)) {
    return { added: [], changed: [], removed: [] };
  }
  const appliedById = new Map(applied.map((o, index) => [o.id, { o, index }]));
  const storedIds = new Set(stored.map((o) => o.id));
  const added: string[] = [];
  const changed: string[] = [];
  const common: string[] = [];
  for (const object of stored) {
    const before = appliedById.get(object.id);
    if (!before) {
      added.push(object.id);
      continue;
    }
    common.push(object.id);
    if (textOf(object.data) !== textOf(before.o.data)) changed.push(object.id);
  }
  if (ordered) {
    const reordered = moved(common, new Map([...appliedById].map(([id, { index }]) => [id, index])));
    const already = new Set(changed);
    for (const id of common) if (reordered.has(id) && !already.has(id)) changed.push(id);
  }
  const removed = applied.filter((o) => !storedIds.has(o.id)).map((o) => o.id);
  return { added, changed, removed };
}

export function pendingReport(stored: FilterSnapshot, applied: FilterSnapshot, appliedAt: string | null): PendingReport {
  const changes = {} as PendingReport['changes'];
  for (const [kind, name] of Object.entries(PENDING_KINDS) as [FilterKind, (typeof PENDING_KINDS)[FilterKind]][]) {
    changes[name] = diffKind(stored.objects[kind], applied.objects[kind], kind === 'rule' || kind === 'nat');
  }
  const changedSettings = Object.entries(SETTING_DEFAULTS)
    .filter(([key, { default: fallback }]) => JSON.stringify(stored.settings[key] ?? fallback) !== JSON.stringify(applied.settings[key] ?? fallback))
    .map(([, { name }]) => name);
  changes.settings = { added: [], changed: changedSettings, removed: [] };
  const any = (c: KindChanges) => c.added.length + c.changed.length + c.removed.length > 0;
  return {
    firewall: any(changes.rules) || any(changes.aliases) || any(changes.schedules) || any(changes.settings),
    nat: any(changes.nat),
    changes,
    applied_at: appliedAt,
  };
}

/**
 * What was loaded, in a few bytes rather than the megabytes of its text: its digest (CompiledRuleset.digest:
 * equal rulesets, equal digests) and the scheduled rules in force (a schedule edge changes that list).
 */
export interface AppliedRuleset {
  /** The compiled ruleset's digest (the name is the stored rows'; older rows hold the text's sha256). */
  text_sha256: string;
  scheduled_in_force: string[];
}

export function appliedRuleset(digest: string, scheduledInForce: readonly string[]): AppliedRuleset {
  return { text_sha256: digest, scheduled_in_force: [...scheduledInForce] };
}

/** A row written before the digest form kept the whole text: the scheduled rules in force are read from it. */
function legacyRuleset(text: string, snapshot: FilterSnapshot): AppliedRuleset {
  const loaded = text.split('\n').filter((line) => !line.trimStart().startsWith('#')).join('\n');
  const scheduled = snapshot.objects.rule.filter((r) => r.data.schedule_id).map((r) => r.id);
  return appliedRuleset(sha256Hex(text), scheduled.filter((id) => loaded.includes(`"${id}"`) || loaded.includes(`rule_${id}`) || loaded.includes(`"rule ${id}"`)));
}

interface Applied {
  snapshot: FilterSnapshot;
  appliedAt: string | null;
  ruleset: AppliedRuleset | null;
}

/** pf_applied.snapshot in the per-object form: the objects are rows of pf_applied_objects. */
interface StoredHead {
  objects: null;
  settings: Record<string, unknown>;
}

/**
 * The last applied configuration: a head row (pf_applied: time, dialect, settings, ruleset digest) and one row per
 * object (pf_applied_objects), so applying one changed rule among 10,000 rewrites one row. What is kept in memory
 * is each row as written (position, data and its text); a write touches only the rows that differ, telling an
 * unchanged object by identity first (a stored object that did not change is the same object) and by text after.
 */
export class AppliedStore {
  private cached: (Applied & { rows: AppliedRows | null; headText: string | null }) | undefined;
  private readonly statements;

  constructor(private readonly db: Db) {
    this.statements = {
      head: db.prepare('SELECT applied_at, snapshot, ruleset FROM pf_applied WHERE id = 1'),
      objects: db.prepare('SELECT kind, id, position, data FROM pf_applied_objects ORDER BY kind, position'),
      putHead: db.prepare(
        `INSERT INTO pf_applied (id, applied_at, dialect, snapshot, ruleset) VALUES (1, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET applied_at = excluded.applied_at, dialect = excluded.dialect,
           snapshot = excluded.snapshot, ruleset = excluded.ruleset`,
      ),
      putObject: db.prepare(
        `INSERT INTO pf_applied_objects (kind, id, position, data) VALUES (?, ?, ?, ?)
         ON CONFLICT (kind, id) DO UPDATE SET position = excluded.position, data = excluded.data`,
      ),
      removeObject: db.prepare('DELETE FROM pf_applied_objects WHERE kind = ? AND id = ?'),
      appliedAt: db.prepare('UPDATE pf_applied SET applied_at = ? WHERE id = 1'),
    };
  }

  read(): Applied {
    if (!this.cached) {
      const row = this.statements.head.get() as { applied_at: string; snapshot: string; ruleset: string } | undefined;
      if (row) {
        const stored = JSON.parse(row.snapshot) as FilterSnapshot | StoredHead;
        let snapshot: FilterSnapshot;
        let rows: AppliedRows | null = null;
        if (stored.objects === null) {
          const objects: Record<FilterKind, SnapshotObject[]> = { rule: [], alias: [], schedule: [], nat: [] };
          rows = emptyRows();
          for (const object of this.statements.objects.all() as { kind: FilterKind; id: string; position: number; data: string }[]) {
            const data = JSON.parse(object.data) as Record<string, unknown>;
            objects[object.kind]?.push({ id: object.id, data });
            rows[object.kind]?.set(object.id, { position: object.position, data, text: object.data });
          }
          snapshot = { objects, settings: stored.settings };
        } else {
          snapshot = stored; // written whole by an earlier version: rewritten as rows at the next apply
        }
        const ruleset = row.ruleset.startsWith('{"text_sha256"') ? JSON.parse(row.ruleset) as AppliedRuleset : legacyRuleset(row.ruleset, snapshot);
        this.cached = { snapshot, appliedAt: row.applied_at, ruleset, rows, headText: rows ? `${row.snapshot}\n${row.ruleset}` : null };
      } else {
        this.cached = { snapshot: emptySnapshot(), appliedAt: null, ruleset: null, rows: null, headText: null };
      }
    }
    const { rows: _rows, headText: _head, ...applied } = this.cached;
    return applied;
  }

  write(snapshot: FilterSnapshot, appliedAt: string, dialect: string, ruleset: AppliedRuleset): void {
    this.read();
    const current = this.cached!;
    const head: StoredHead = { objects: null, settings: snapshot.settings };
    const headText = `${JSON.stringify(head)}\n${JSON.stringify(ruleset)}`;
    const before = current.rows ?? emptyRows();
    const rows = emptyRows();
    const changed: [FilterKind, string, AppliedRow][] = [];
    const removed: [FilterKind, string][] = [];
    for (const kind of Object.keys(PENDING_KINDS) as FilterKind[]) {
      const previousRows = before[kind];
      // The same list as last written (the snapshot hands one out while a kind is unchanged): the same rows.
      if (current.rows !== null && snapshot.objects[kind] === current.snapshot.objects[kind]) {
        rows[kind] = previousRows;
        continue;
      }
      const next = rows[kind];
      snapshot.objects[kind].forEach(({ id, data }, position) => {
        const previous = previousRows.get(id);
        if (previous && previous.position === position && (previous.data === data || previous.text === textOf(data))) {
          next.set(id, previous.data === data ? previous : { position, data, text: previous.text });
          return;
        }
        const row = { position, data, text: textOf(data) };
        next.set(id, row);
        changed.push([kind, id, row]);
      });
      for (const id of previousRows.keys()) if (!next.has(id)) removed.push([kind, id]);
    }
    this.db.transaction(() => {
      if (current.rows === null) this.db.prepare('DELETE FROM pf_applied_objects').run();
      for (const [kind, id, row] of changed) this.statements.putObject.run(kind, id, row.position, row.text);
      for (const [kind, id] of removed) this.statements.removeObject.run(kind, id);
      // Re-applying what is applied (compared by content) moves only the time.
      if (headText === current.headText && changed.length + removed.length === 0) this.statements.appliedAt.run(appliedAt);
      else this.statements.putHead.run(appliedAt, dialect, JSON.stringify(head), JSON.stringify(ruleset));
    })();
    this.cached = { snapshot, appliedAt, ruleset, rows, headText };
  }
}

/** A row of pf_applied_objects as kept in memory: the data object it was written from, and its text. */
interface AppliedRow {
  position: number;
  data: Record<string, unknown>;
  text: string;
}

/** The rows by kind, then by id. */
type AppliedRows = Record<FilterKind, Map<string, AppliedRow>>;
const emptyRows = (): AppliedRows => ({ rule: new Map(), alias: new Map(), schedule: new Map(), nat: new Map() });
