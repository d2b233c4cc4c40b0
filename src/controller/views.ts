import { notFound } from '../core/errors.js';
import type { Pool } from './database.js';
import { selectPage, type Page } from './paging.js';
import { liveProcessSql } from './process-registry.js';

/**
 * An appliance counts as connected while a controller process holds its socket, that process is alive (its
 * heartbeat is fresh: a killed process stops counting within seconds) and the agent spoke within this many seconds
 * (a socket whose peer vanished without closing it).
 */
export const CONNECTED_WITHIN_SECONDS = 90;

/** SQL over `appliances a`: whether the appliance is connected (above). */
const CONNECTED_SQL = `(a.connected_to IS NOT NULL AND a.last_seen > now() - make_interval(secs => ${CONNECTED_WITHIN_SECONDS}) AND ${liveProcessSql('a.connected_to')})`;

export const APPLIANCE_COLUMNS = `a.id, a.name, a.version, a.health, a.last_seen, a.enrolled_at, a.revoked_at, a.variables,
  a.desired_revision, a.applied_revision, a.last_outcome, a.drift, ${CONNECTED_SQL} AS connected`;

const iso = (value: unknown) => (value ? new Date(value as string).toISOString() : null);

export function applianceOf(row: Record<string, unknown>) {
  return {
    id: row.id, name: row.name, version: row.version, health: row.health, connected: row.connected,
    last_seen: iso(row.last_seen), enrolled_at: iso(row.enrolled_at), revoked_at: iso(row.revoked_at),
    variables: row.variables, desired_revision: row.desired_revision, applied_revision: row.applied_revision,
    in_sync: row.desired_revision === row.applied_revision, last_outcome: row.last_outcome,
    drift: row.drift, drifted: (row.drift as unknown[]).length > 0,
  };
}

/** The fleet as the API shows it, read from PostgreSQL. */
export class FleetViews {
  constructor(private readonly pool: Pool) {}

  /** A page of the appliances in enrolment order (then id: stable), with the total. */
  async appliances(filter: { drifted?: boolean; version?: string }, page: Page) {
    const { total, rows } = await selectPage(this.pool,
      `SELECT ${APPLIANCE_COLUMNS} FROM appliances a
        WHERE ($1::boolean IS NULL OR (jsonb_array_length(a.drift) > 0) = $1) AND ($2::text IS NULL OR a.version = $2)`,
      [filter.drifted ?? null, filter.version ?? null], 'enrolled_at, id', page,
    );
    return { total, items: rows.map(applianceOf) };
  }

  async appliance(id: string) {
    const row = (await this.pool.query(`SELECT ${APPLIANCE_COLUMNS} FROM appliances a WHERE a.id::text = $1`, [id])).rows[0];
    if (!row) throw notFound(`appliance ${id} not found`);
    return applianceOf(row);
  }

  /** Fleet-wide totals: how many appliances, connected, in sync, drifted, per version. */
  async summary() {
    const row = (await this.pool.query(
      `SELECT count(*) FILTER (WHERE a.revoked_at IS NULL) AS appliances,
              count(*) FILTER (WHERE a.revoked_at IS NULL AND ${CONNECTED_SQL}) AS connected,
              count(*) FILTER (WHERE a.revoked_at IS NULL AND a.desired_revision = a.applied_revision) AS in_sync,
              count(*) FILTER (WHERE a.revoked_at IS NULL AND jsonb_array_length(a.drift) > 0) AS drifted,
              count(*) FILTER (WHERE a.revoked_at IS NOT NULL) AS revoked
         FROM appliances a`,
    )).rows[0];
    const versions = (await this.pool.query<{ version: string | null; n: string }>('SELECT version, count(*) AS n FROM appliances WHERE revoked_at IS NULL GROUP BY version ORDER BY version')).rows;
    return {
      appliances: Number(row.appliances), connected: Number(row.connected), in_sync: Number(row.in_sync), drifted: Number(row.drifted), revoked: Number(row.revoked),
      versions: Object.fromEntries(versions.map((v) => [v.version ?? 'unknown', Number(v.n)])),
    };
  }

  /** A page of the rollouts, newest first (then id: stable), with the total. */
  async rollouts(page: Page) {
    const { total, rows } = await selectPage<{ id: string }>(this.pool, 'SELECT id, created_at FROM rollouts', [], 'created_at DESC, id', page);
    return { total, items: await Promise.all(rows.map((row) => this.rollout(row.id, false))) };
  }

  /** A rollout's progress: its state, and per wave how many targets wait, are due, applied or failed. */
  async rollout(id: string, withTargets = true) {
    const rollout = (await this.pool.query('SELECT * FROM rollouts WHERE id::text = $1', [id])).rows[0];
    if (!rollout) throw notFound(`rollout ${id} not found`);
    const targets = (await this.pool.query(
      `SELECT t.appliance_id, a.name, t.wave, t.revision, t.state, t.reason, t.reported_at, t.rollback_revision, a.applied_revision >= t.rollback_revision AS rolled_back
         FROM rollout_targets t
         JOIN appliances a ON a.id = t.appliance_id WHERE t.rollout_id = $1 ORDER BY t.wave, a.enrolled_at, a.id`,
      [rollout.id],
    )).rows;
    const waves = (rollout.waves as number[]).map((size, wave) => {
      const of = targets.filter((t) => t.wave === wave);
      const count = (state: string) => of.filter((t) => t.state === state).length;
      return { wave, size: of.length, cumulative: size, waiting: count('waiting'), due: count('due'), applied: count('applied'), failed: count('failed'), cancelled: count('cancelled') };
    });
    return {
      id: rollout.id, template_id: rollout.template_id, state: rollout.state, current_wave: rollout.current_wave,
      wave_interval_seconds: rollout.wave_interval_seconds, next_wave_at: iso(rollout.next_wave_at), max_failures: rollout.max_failures, rollback_on_halt: rollout.rollback_on_halt,
      halted_reason: rollout.halted_reason, created_by: rollout.created_by, created_at: iso(rollout.created_at), finished_at: iso(rollout.finished_at),
      targets: targets.length, applied: targets.filter((t) => t.state === 'applied').length, failed: targets.filter((t) => t.state === 'failed').length,
      cancelled: targets.filter((t) => t.state === 'cancelled').length,
      waves,
      ...(withTargets ? { target_list: targets.map((t) => ({ ...t, reported_at: iso(t.reported_at) })) } : {}),
    };
  }
}
