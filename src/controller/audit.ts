import type { Client, Pool } from './database.js';

/**
 * The fleet-wide audit: every controller action (who, on what) and every change an appliance reported (its
 * outcome for a revision, a new version, health or drift), one row each in `audit_events`, newest first.
 */
export interface AuditEvent {
  /** An account's username, `appliance` (what an appliance reported) or `controller` (the rollout engine). */
  actor: string;
  action: string;
  applianceId?: string | null;
  detail?: Record<string, unknown>;
}

export async function recordAudit(db: Pool | Client, event: AuditEvent): Promise<void> {
  await db.query('INSERT INTO audit_events (actor, appliance_id, action, detail) VALUES ($1, $2, $3, $4)', [
    event.actor, event.applianceId ?? null, event.action, JSON.stringify(event.detail ?? {}),
  ]);
}

export interface AuditQuery {
  limit: number;
  offset: number;
  /** Only events older than this id (a cursor that new events do not shift). */
  before?: number;
  appliance_id?: string;
  action?: string;
  actor?: string;
}

/** A page of the audit, newest first by id: a stable order, so pages do not overlap. */
export async function listAudit(pool: Pool, query: AuditQuery) {
  const rows = await pool.query(
    `SELECT id, at, actor, appliance_id, action, detail, count(*) OVER () AS total FROM audit_events
      WHERE ($1::bigint IS NULL OR id < $1) AND ($2::text IS NULL OR appliance_id::text = $2)
        AND ($3::text IS NULL OR action = $3) AND ($4::text IS NULL OR actor = $4)
      ORDER BY id DESC LIMIT $5 OFFSET $6`,
    [query.before ?? null, query.appliance_id ?? null, query.action ?? null, query.actor ?? null, query.limit, query.offset],
  );
  return {
    total: Number(rows.rows[0]?.total ?? 0),
    events: rows.rows.map((row) => ({ id: Number(row.id), at: new Date(row.at as string).toISOString(), actor: row.actor, appliance_id: row.appliance_id, action: row.action, detail: row.detail })),
  };
}
