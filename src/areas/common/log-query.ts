import { Type } from 'typebox';

/** Query of every "logs" endpoint: how many lines, and an optional case-insensitive fixed-string filter. */
export const LogQuery = Type.Object({
  lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 200, description: 'default 200, maximum 5000' })),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'case-insensitive fixed-string filter' })),
});

export const LogLines = Type.Array(Type.String());

/**
 * The shared tail: the last 5000 lines, filtered by `search` (characters other than alphanumerics, `-`, `_`,
 * `.` and space are dropped from it), newest first, at most `lines`.
 */
export function tailLines(lines: readonly string[], query: { lines?: number; search?: string }): string[] {
  const search = (query.search ?? '').replace(/[^A-Za-z0-9\-_. ]/g, '').toLowerCase();
  const recent = lines.slice(-5000);
  const matching = search ? recent.filter((line) => line.toLowerCase().includes(search)) : recent;
  return matching.reverse().slice(0, query.lines ?? 200);
}
