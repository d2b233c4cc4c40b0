/**
 * IDS alert retention per `/settings/ids-alerts`: alerts older than `max_age_secs` are deleted, then the oldest
 * until the stored alerts fit in `max_mb` (their text columns as SQLite stores them, plus a fixed row overhead).
 * Run by the settings area's maintenance scheduler.
 */
import type { Db } from '../../store/database.js';
import { isoTime } from '../../core/clock.js';

export interface AlertRetention {
  max_mb: number;
  max_age_secs: number;
}

/** Bytes SQLite spends per row beyond the column values (record header, rowid, index entries): an estimate. */
const ROW_OVERHEAD = 64;
const ROW_BYTES = `(${ROW_OVERHEAD} + length(id) + length(timestamp) + length(signature_msg) + length(src_ip) + length(dst_ip) + length(protocol)
  + length(action) + length(rule_source) + coalesce(length(flow_id), 0) + coalesce(length(payload_excerpt), 0) + coalesce(length(metadata), 0)
  + length(classification) + coalesce(length(analyst_notes), 0))`;

export function pruneAlerts(db: Db, retention: AlertRetention, nowMs: number): { expired: number; over_size: number } {
  const cutoff = isoTime(nowMs - retention.max_age_secs * 1000);
  const expired = db.prepare('DELETE FROM ids_alerts WHERE timestamp < ?').run(cutoff).changes;
  const budget = retention.max_mb * 1024 * 1024;
  const total = (db.prepare(`SELECT coalesce(sum(${ROW_BYTES}), 0) AS bytes FROM ids_alerts`).get() as { bytes: number }).bytes;
  let overSize = 0;
  if (total > budget) {
    // Newest first, a running total of their sizes; every row past the budget (the oldest) goes, in one statement.
    overSize = db.prepare(`DELETE FROM ids_alerts WHERE rowid IN (
      SELECT r FROM (SELECT rowid AS r, sum(${ROW_BYTES}) OVER (ORDER BY timestamp DESC, rowid DESC) AS running FROM ids_alerts) WHERE running > ?)`)
      .run(budget).changes;
  }
  return { expired, over_size: overSize };
}
