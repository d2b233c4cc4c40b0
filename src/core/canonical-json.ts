import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so equal values always serialise to equal text: the basis of
 * content hashes, integrity checks and diffs. Undefined object members are dropped, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    // A list of plain values (an alias's 10,000 entries) has no keys to sort: JSON.stringify writes the same text.
    if (value.every((item) => item === null || typeof item !== 'object')) return JSON.stringify(value);
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const entries = Object.keys(value as Record<string, unknown>)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

export const canonicalSha256 = (value: unknown): string => createHash('sha256').update(canonicalJson(value)).digest('hex');
