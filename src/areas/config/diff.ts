import { createHash } from 'node:crypto';
import { formatPatch, structuredPatch, type StructuredPatch } from 'diff';
import { canonicalJson } from '../../core/canonical-json.js';
import type { Sealer } from '../../core/crypto.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import type { KindCatalogue } from '../../store/kind-catalogue.js';
import { mapSecrets, REDACTED } from './secrets.js';

export interface FieldChange {
  /** Dotted path inside the object's data (`position` for a move). */
  field: string;
  from: unknown;
  to: unknown;
  /** A secret changed: both sides are shown redacted. */
  secret?: boolean;
}

export interface ObjectSummary {
  id: string;
  position: number;
  data: ConfigData;
}

export interface KindDiff {
  added: ObjectSummary[];
  removed: ObjectSummary[];
  changed: { id: string; changes: FieldChange[] }[];
}

export interface ConfigurationDiff {
  identical: boolean;
  summary: { added: number; removed: number; changed: number };
  kinds: Record<string, KindDiff>;
  /** A unified diff of the objects that differ, one block per object (secrets redacted). */
  unified: string;
}

/** Secrets are compared by a digest of their plaintext (sealing the same secret twice gives different text). */
const SECRET_MARK = '\u0000secret:';

function comparable(object: ConfigObject, kinds: KindCatalogue, sealer: Sealer): ConfigData {
  return mapSecrets(object.data, kinds.secretFields(object.kind), (value) => {
    let plain = value;
    try {
      plain = sealer.open(value);
    } catch {
      // not sealed by this appliance: compare the text itself
    }
    return SECRET_MARK + createHash('sha256').update(plain).digest('hex');
  });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const shown = (value: unknown): unknown => (typeof value === 'string' && value.startsWith(SECRET_MARK) ? REDACTED : redactDeep(value));
function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith(SECRET_MARK) ? REDACTED : value;
  if (Array.isArray(value)) return value.map(redactDeep);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  return value;
}
const containsSecret = (value: unknown): boolean => canonicalJson(value).includes('\\u0000secret:');

function fieldChanges(from: unknown, to: unknown, path: string, out: FieldChange[]): void {
  if (isPlainObject(from) && isPlainObject(to)) {
    for (const key of [...new Set([...Object.keys(from), ...Object.keys(to)])].sort()) {
      fieldChanges(from[key], to[key], path ? `${path}.${key}` : key, out);
    }
    return;
  }
  if (canonicalJson(from ?? null) === canonicalJson(to ?? null) && (from === undefined) === (to === undefined)) return;
  const secret = containsSecret(from) || containsSecret(to);
  out.push({ field: path, from: shown(from) ?? null, to: shown(to) ?? null, ...(secret ? { secret: true } : {}) });
}

/** One object as text lines for the unified diff: a header and one `path = value` line per leaf. */
function renderObject(kind: string, id: string, position: number, data: ConfigData): string {
  const lines = [`[${kind} ${id}]`, `  position = ${position}`];
  const walk = (value: unknown, path: string) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const key of Object.keys(value).sort()) walk(value[key], path ? `${path}.${key}` : key);
    } else {
      lines.push(`  ${path} = ${JSON.stringify(redactDeep(value))}`);
    }
  };
  walk(data, '');
  return lines.join('\n') + '\n';
}

const byKindThenPosition = (a: ConfigObject, b: ConfigObject) =>
  a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Compares two whole configurations object by object (matched by id): per kind, the objects added and removed,
 * and for changed objects each field that differs. Secrets are compared by plaintext digest and shown redacted.
 * The unified text is built per differing object, so its cost follows the size of the change, not of the
 * configuration.
 */
export function diffConfigurations(
  from: readonly ConfigObject[],
  to: readonly ConfigObject[],
  options: { kinds: KindCatalogue; sealer: Sealer; labels: [string, string] },
): ConfigurationDiff {
  const { kinds, sealer } = options;
  const before = new Map(from.map((o) => [o.id, o]));
  const after = new Map(to.map((o) => [o.id, o]));
  const result: Record<string, KindDiff> = {};
  const entry = (kind: string) => (result[kind] ??= { added: [], removed: [], changed: [] });
  const patch: StructuredPatch = { oldFileName: options.labels[0], newFileName: options.labels[1], oldHeader: undefined, newHeader: undefined, hunks: [] };
  let oldLine = 0;
  let newLine = 0;
  const addBlock = (oldText: string, newText: string) => {
    const block = structuredPatch('', '', oldText, newText, undefined, undefined, { context: 3 });
    for (const hunk of block.hunks) {
      patch.hunks.push({
        ...hunk,
        oldStart: hunk.oldLines === 0 ? oldLine + Math.max(hunk.oldStart, 0) : oldLine + hunk.oldStart,
        newStart: hunk.newLines === 0 ? newLine + Math.max(hunk.newStart, 0) : newLine + hunk.newStart,
      });
    }
    oldLine += oldText === '' ? 0 : oldText.split('\n').length - 1;
    newLine += newText === '' ? 0 : newText.split('\n').length - 1;
  };
  let added = 0;
  let removed = 0;
  let changed = 0;

  // Walk both sides in one canonical order so the text reads kind by kind.
  const all = [...to, ...from.filter((o) => !after.has(o.id))].sort(byKindThenPosition);
  for (const object of all) {
    const old = before.get(object.id);
    const current = after.get(object.id);
    if (old && current && old.kind === current.kind) {
      // the common case, an untouched object: equal text needs no field walk
      if (old.position === current.position && canonicalJson(old.data) === canonicalJson(current.data)) continue;
      const a = comparable(old, kinds, sealer);
      const b = comparable(current, kinds, sealer);
      const changes: FieldChange[] = [];
      if (old.position !== current.position) changes.push({ field: 'position', from: old.position, to: current.position });
      fieldChanges(a, b, '', changes);
      if (changes.length === 0) continue;
      entry(current.kind).changed.push({ id: current.id, changes });
      changed++;
      addBlock(renderObject(old.kind, old.id, old.position, a), renderObject(current.kind, current.id, current.position, b));
    } else {
      if (old) {
        const data = comparable(old, kinds, sealer);
        entry(old.kind).removed.push({ id: old.id, position: old.position, data: redactDeep(data) as ConfigData });
        removed++;
        addBlock(renderObject(old.kind, old.id, old.position, data), '');
      }
      if (current) {
        const data = comparable(current, kinds, sealer);
        entry(current.kind).added.push({ id: current.id, position: current.position, data: redactDeep(data) as ConfigData });
        added++;
        addBlock('', renderObject(current.kind, current.id, current.position, data));
      }
    }
  }
  const identical = added + removed + changed === 0;
  return {
    identical,
    summary: { added, removed, changed },
    kinds: result,
    unified: identical ? '' : formatPatch(patch).replace(/^=+\n/, ''),
  };
}
