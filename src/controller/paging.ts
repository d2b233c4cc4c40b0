import { Type } from 'typebox';
import type { Pool } from './database.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 10000;

/** The paging of every controller list, as the appliance's lists: `limit` and `offset`, the total in X-Total-Count. */
export const PageFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `default ${DEFAULT_LIMIT}, maximum ${MAX_LIMIT}` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'default 0' })),
};

export interface Page {
  limit: number;
  offset: number;
}

export const pageOf = (query: { limit?: number; offset?: number }): Page => ({ limit: query.limit ?? DEFAULT_LIMIT, offset: query.offset ?? 0 });

/**
 * One page of a query's rows in a stable order (`orderBy` is the code's, never a client's: it must end with a
 * unique column), and how many rows there are in all.
 */
export async function selectPage<R extends Record<string, unknown>>(pool: Pool, sql: string, params: unknown[], orderBy: string, page: Page): Promise<{ total: number; rows: R[] }> {
  const n = params.length;
  const result = await pool.query<R & { total_rows: string }>(
    `SELECT *, count(*) OVER () AS total_rows FROM (${sql}) listed ORDER BY ${orderBy} LIMIT $${n + 1} OFFSET $${n + 2}`,
    [...params, page.limit, page.offset],
  );
  if (result.rows.length > 0 || page.offset === 0) return { total: Number(result.rows[0]?.total_rows ?? 0), rows: result.rows };
  // Past the end: the page is empty, but the total is still told.
  const counted = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) listed`, params);
  return { total: Number(counted.rows[0].n), rows: [] };
}
