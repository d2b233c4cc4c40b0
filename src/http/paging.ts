import { badRequest } from '../core/errors.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10000;

/** Query-string schema shared by every list: paging, sorting, and free-form field filters. */
export const ListQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `default ${DEFAULT_LIMIT}, maximum ${MAX_LIMIT}` },
    offset: { type: 'integer', minimum: 0, default: 0 },
    sort: { type: 'string', pattern: '^-?[A-Za-z0-9_]+$', description: 'field name; prefix with - for descending' },
  },
  additionalProperties: { type: 'string' },
} as const;

/** Fields every record carries besides its own, so every list may be sorted by them. */
const RECORD_FIELDS = ['id', 'created_at', 'updated_at'] as const;

/** What a list may be sorted by: its filterable (scalar) fields and the record's id and timestamps. */
export function sortableFields(filterable: ReadonlySet<string>): string[] {
  return [...new Set([...filterable, ...RECORD_FIELDS])];
}

/**
 * The query schema of one list: ListQuery with `sort` as an enum of that list's sortable fields, ascending
 * and then descending (`-name`), so the OpenAPI document tells a client what it may sort by.
 */
export function listQueryFor(filterable: ReadonlySet<string>) {
  const fields = sortableFields(filterable);
  const sort = { type: 'string', enum: [...fields, ...fields.map((field) => `-${field}`)], description: ListQuery.properties.sort.description };
  return { ...ListQuery, properties: { ...ListQuery.properties, sort } };
}

export interface ListParams {
  limit: number;
  offset: number;
  sort?: string;
  filters: Record<string, string>;
}

export function readListParams(query: Record<string, unknown>, filterable: ReadonlySet<string>): ListParams {
  const { limit, offset, sort, ...rest } = query as { limit: number; offset: number; sort?: string };
  const filters: Record<string, string> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (!filterable.has(key)) throw badRequest(`querystring.${key} is not a filterable field`);
    filters[key] = String(value);
  }
  // The route's schema already refuses an unknown sort; this guards callers that read a query themselves.
  if (sort && !sortableFields(filterable).includes(sort.replace(/^-/, ''))) {
    throw badRequest(`querystring.sort: ${sort.replace(/^-/, '')} is not a sortable field`);
  }
  return { limit, offset, sort, filters };
}

/** Filters (string equality on scalar fields), sorts stably, and slices one page. */
export function pageOf<T extends Record<string, unknown>>(items: readonly T[], params: ListParams): { page: T[]; total: number } {
  let selected = items as T[];
  const filters = Object.entries(params.filters);
  if (filters.length > 0) selected = selected.filter((item) => filters.every(([key, value]) => String(item[key]) === value));
  if (params.sort) {
    const descending = params.sort.startsWith('-');
    const key = params.sort.replace(/^-/, '');
    const direction = descending ? -1 : 1;
    selected = [...selected].sort((a, b) => compareValues(a[key], b[key]) * direction);
  }
  return { page: selected.slice(params.offset, params.offset + params.limit), total: selected.length };
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}
