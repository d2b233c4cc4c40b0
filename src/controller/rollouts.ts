import { badRequest, conflict, notFound } from '../core/errors.js';
import { CHANNELS } from './channels.js';
import { inTransaction, type Client, type Pool } from './database.js';
import { renderSections, type Sections } from './templates.js';
import { recordAudit } from './audit.js';
import type { RulePlacement } from '../agent/rule-order.js';

export interface RolloutInput {
  template_id: string;
  appliance_ids?: string[];
  canary: number;
  percentages: number[];
  wave_interval_seconds: number;
  max_failures: number;
  rollback_on_halt: boolean;
}

/** Why a target of a halted rollout never ran its revision (the progress view shows it). */
export const CANCELLED_REASON = 'the rollout halted before this appliance reported; its desired revision is back to what it runs';
/** Why a target of a wave that never opened did not run (its desired revision was never set to it). */
export const NEVER_OPENED_REASON = 'the rollout halted before its wave opened';

export interface RevisionDocument {
  sections: Sections;
  /** Where the owned rules go (src/agent/rule-order.ts): the placement of the template that last gave the rules. */
  rule_placement?: RulePlacement;
}

/**
 * Cumulative target counts of each wave: the canary count, then each percentage of the targets (rounded up), with
 * waves that would add nobody left out. The last wave is always every target.
 */
export function waveSizes(total: number, canary: number, percentages: readonly number[]): number[] {
  const sizes: number[] = [];
  for (const size of [Math.min(canary, total), ...percentages.map((p) => Math.ceil((p * total) / 100)), total]) {
    if (size > (sizes.at(-1) ?? 0)) sizes.push(size);
  }
  return sizes;
}

/**
 * Rollouts in waves, every step a transaction on PostgreSQL. A rollout's row lock decides which controller
 * process advances it; a report, a tick or a notification only asks for an advance, so any process may crash at
 * any point and another (or the same, restarted) continues from the tables. An appliance is told only its desired
 * revision number; it applies a number at most once (the agent keeps what it attempted).
 */
export class Rollouts {
  constructor(private readonly pool: Pool) {}

  async create(input: RolloutInput, createdBy: string): Promise<{ id: string }> {
    const sorted = [...input.percentages];
    if (sorted.some((p, i) => i > 0 && p <= sorted[i - 1])) throw badRequest('body.percentages must increase');
    const id = await inTransaction(this.pool, async (client) => {
      const template = (await client.query<{ sections: Sections; rule_placement: RulePlacement }>('SELECT sections, rule_placement FROM templates WHERE id::text = $1', [input.template_id])).rows[0];
      if (!template) throw notFound(`template ${input.template_id} not found`);
      const appliances = (await client.query<{ id: string; name: string; variables: Record<string, string>; desired_revision: number; document: RevisionDocument | null; last_number: number | null }>(
        `SELECT a.id, a.name, a.variables, a.desired_revision, r.document,
                (SELECT max(number) FROM revisions WHERE appliance_id = a.id) AS last_number
           FROM appliances a LEFT JOIN revisions r ON r.appliance_id = a.id AND r.number = a.desired_revision
          WHERE a.revoked_at IS NULL AND ($1::text[] IS NULL OR a.id::text = ANY($1))
          ORDER BY a.enrolled_at, a.id FOR UPDATE OF a`,
        [input.appliance_ids ?? null],
      )).rows;
      if (appliances.length === 0) throw badRequest('body.appliance_ids: no enrolled, unrevoked appliance to roll out to');
      if (input.appliance_ids && appliances.length !== new Set(input.appliance_ids).size) throw badRequest('body.appliance_ids: names an appliance that is unknown or revoked');
      const waves = waveSizes(appliances.length, input.canary, input.percentages);
      // Each appliance's secrets, sealed for it: the revision carries them sealed; nothing here can open them.
      const secrets = new Map<string, Record<string, string>>();
      for (const row of (await client.query<{ appliance_id: string; name: string; sealed: string }>('SELECT appliance_id, name, sealed FROM appliance_secrets WHERE appliance_id = ANY($1::uuid[])', [appliances.map((a) => a.id)])).rows) {
        secrets.set(row.appliance_id, { ...secrets.get(row.appliance_id), [row.name]: row.sealed });
      }
      let rollout;
      try {
        rollout = await client.query<{ id: string }>(
          `INSERT INTO rollouts (template_id, state, waves, wave_interval_seconds, max_failures, rollback_on_halt, created_by)
           VALUES ($1, 'running', $2, $3, $4, $5, $6) RETURNING id`,
          [input.template_id, waves, input.wave_interval_seconds, input.max_failures, input.rollback_on_halt, createdBy],
        );
      } catch (error) {
        if ((error as { code?: string }).code === '23505') throw conflict('a rollout is running: wait for it to finish or halt it first');
        throw error;
      }
      const rolloutId = rollout.rows[0].id;
      await recordAudit(client, { actor: createdBy, action: 'rollout.created', detail: { rollout_id: rolloutId, template_id: input.template_id, targets: appliances.length, waves, rollback_on_halt: input.rollback_on_halt } });
      const targets = appliances.map((appliance, index) => {
        const rendered = renderSections(template.sections, appliance.variables, appliance.name, secrets.get(appliance.id) ?? {});
        const document: RevisionDocument = { sections: { ...(appliance.document?.sections ?? {}), ...rendered } };
        // The rules' placement travels with the rules: the template that gives them says where they go.
        const placement = template.sections.rules ? template.rule_placement : appliance.document?.rule_placement;
        if (placement && placement !== 'priority') document.rule_placement = placement;
        return { id: appliance.id, number: (appliance.last_number ?? 0) + 1, document: JSON.stringify(document), wave: waves.findIndex((size) => index < size), base: appliance.desired_revision };
      });
      // Two statements for all the targets, not two per target (a thousand appliances: two round trips, not 2,000).
      const column = <K extends keyof (typeof targets)[number]>(key: K) => targets.map((target) => target[key]);
      await client.query(
        'INSERT INTO revisions (appliance_id, number, document, rollout_id) SELECT t.*, $4::uuid FROM unnest($1::uuid[], $2::int[], $3::jsonb[]) AS t',
        [column('id'), column('number'), column('document'), rolloutId],
      );
      await client.query(
        `INSERT INTO rollout_targets (rollout_id, appliance_id, wave, revision, base_revision, state)
         SELECT $1, t.*, 'waiting' FROM unnest($2::uuid[], $3::int[], $4::int[], $5::int[]) AS t`,
        [rolloutId, column('id'), column('wave'), column('number'), column('base')],
      );
      return rolloutId;
    });
    await this.advance(id);
    return { id };
  }

  /** Halts a running rollout by hand: no further wave opens. */
  async halt(id: string, reason: string, by: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const updated = await client.query("UPDATE rollouts SET state = 'halted', halted_reason = $2, finished_at = now() WHERE id::text = $1 AND state = 'running'", [id, reason]);
      if (!updated.rowCount) throw conflict(`rollout ${id} is not running`);
      await recordAudit(client, { actor: by, action: 'rollout.halted', detail: { rollout_id: id, reason } });
      await this.cancelUnreported(client, id);
    });
  }

  /** Every running rollout, advanced (the tick: wave intervals and anything a lost notification left behind). */
  async advanceAll(): Promise<void> {
    const running = await this.pool.query<{ id: string }>(
      `SELECT id FROM rollouts r WHERE state = 'running' OR (state = 'halted' AND rollback_on_halt AND EXISTS (
         SELECT 1 FROM rollout_targets t WHERE t.rollout_id = r.id AND t.state = 'applied' AND t.rollback_revision IS NULL))`,
    );
    for (const row of running.rows) await this.advance(row.id);
  }

  /**
   * One step of a rollout, under its row lock (a process that finds it locked leaves it: the holder is advancing
   * it). Halts on too many failures; completes after the last wave; otherwise opens the next wave once the current
   * one has all applied and its interval has passed.
   */
  async advance(id: string): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const rollout = (await client.query<{ state: string; waves: number[]; current_wave: number; wave_interval_seconds: number; next_wave_due: boolean | null; max_failures: number; rollback_on_halt: boolean }>(
        `SELECT state, waves, current_wave, wave_interval_seconds, max_failures, rollback_on_halt,
                CASE WHEN next_wave_at IS NULL THEN NULL ELSE next_wave_at <= now() END AS next_wave_due
           FROM rollouts WHERE id = $1 FOR UPDATE SKIP LOCKED`,
        [id],
      )).rows[0];
      // Under the rollback policy, appliances of a halted rollout that land after the halt are rolled back too.
      if (rollout?.state === 'halted' && rollout.rollback_on_halt) return this.rollBackApplied(client, id);
      if (!rollout || rollout.state !== 'running') return;
      const counts = await this.countsOf(client, id, rollout.current_wave);
      if (counts.failed > rollout.max_failures) return this.haltOnFailure(client, id);
      if (rollout.current_wave >= 0 && counts.dueInWave > 0) return;
      if (rollout.current_wave === rollout.waves.length - 1) {
        await client.query("UPDATE rollouts SET state = 'completed', finished_at = now() WHERE id = $1", [id]);
        await recordAudit(client, { actor: 'controller', action: 'rollout.completed', detail: { rollout_id: id } });
        return;
      }
      if (rollout.current_wave >= 0 && rollout.wave_interval_seconds > 0) {
        if (rollout.next_wave_due === null) {
          await client.query("UPDATE rollouts SET next_wave_at = now() + make_interval(secs => wave_interval_seconds) WHERE id = $1", [id]);
          return;
        }
        if (!rollout.next_wave_due) return;
      }
      const wave = rollout.current_wave + 1;
      await client.query("UPDATE rollout_targets SET state = 'due' WHERE rollout_id = $1 AND wave = $2", [id, wave]);
      await client.query(
        `UPDATE appliances a SET desired_revision = t.revision FROM rollout_targets t
          WHERE t.rollout_id = $1 AND t.wave = $2 AND a.id = t.appliance_id`,
        [id, wave],
      );
      await client.query('UPDATE rollouts SET current_wave = $2, next_wave_at = NULL WHERE id = $1', [id, wave]);
      await recordAudit(client, { actor: 'controller', action: 'rollout.wave_opened', detail: { rollout_id: id, wave, cumulative: rollout.waves[wave] } });
      // Delivered at commit, to every controller process: the holders of these appliances' connections nudge them.
      await client.query('SELECT pg_notify($1, $2)', [CHANNELS.nudge, JSON.stringify({ rollout: id, wave })]);
    });
  }

  /**
   * An appliance's outcome for a revision. Idempotent: only a target still due changes, so a report repeated after
   * a reconnect changes nothing.
   */
  async report(applianceId: string, revision: number, outcome: 'applied' | 'failed', reason: string | null): Promise<void> {
    const rolloutId = await inTransaction(this.pool, async (client) => {
      // The appliance's report is audited when it says something new (a report repeated after a reconnect is not).
      const before = (await client.query<{ last_outcome: { revision?: number; outcome?: string } | null }>('SELECT last_outcome FROM appliances WHERE id = $1 FOR UPDATE', [applianceId])).rows[0];
      if (before && (before.last_outcome?.revision !== revision || before.last_outcome?.outcome !== outcome)) {
        await recordAudit(client, { actor: 'appliance', applianceId, action: `appliance.revision_${outcome}`, detail: { revision, reason } });
      }
      await client.query(
        `UPDATE appliances SET applied_revision = CASE WHEN $3 = 'applied' THEN GREATEST(applied_revision, $2) ELSE applied_revision END,
                last_outcome = jsonb_build_object('revision', $2::int, 'outcome', $3::text, 'reason', $4::text, 'at', now())
          WHERE id = $1`,
        [applianceId, revision, outcome, reason],
      );
      // A target cancelled by a halt still takes its report: the agent had pulled the revision before the halt.
      const target = await client.query<{ rollout_id: string }>(
        `UPDATE rollout_targets SET state = $3, reason = $4, reported_at = now()
          WHERE appliance_id = $1 AND revision = $2 AND state IN ('due', 'cancelled') RETURNING rollout_id`,
        [applianceId, revision, outcome, reason],
      );
      const id = target.rows[0]?.rollout_id ?? null;
      // Applied after its desired revision was set back by the halt: what it runs is again what it should run
      // (a later rollout's revision, a higher number, is left alone).
      if (id && outcome === 'applied') await client.query('UPDATE appliances SET desired_revision = $2 WHERE id = $1 AND desired_revision < $2', [applianceId, revision]);
      if (id) await client.query('SELECT pg_notify($1, $2)', [CHANNELS.rollout, id]);
      return id;
    });
    if (rolloutId) await this.advance(rolloutId);
  }

  /**
   * The revision an appliance should run (0: none yet) and its document; the appliance asked, so it was seen now.
   * The number handed out is kept (`pulled_revision`): until the agent reports it, it may be applying it (drift
   * adoption waits). The agent pulls only when it is not applying, so its last pull is all it can have in flight.
   */
  async desiredOf(applianceId: string): Promise<{ number: number; document: RevisionDocument | null }> {
    const row = (await this.pool.query<{ number: number; document: RevisionDocument | null }>(
      `UPDATE appliances a SET last_seen = now(), pulled_revision = a.desired_revision WHERE a.id = $1 RETURNING a.desired_revision AS number,
         (SELECT r.document FROM revisions r WHERE r.appliance_id = a.id AND r.number = a.desired_revision) AS document`,
      [applianceId],
    )).rows[0];
    return row ?? { number: 0, document: null };
  }

  /** Whom a nudge notification names: the appliances of a wave that opened, or those a halted rollout rolls back. */
  async applianceIdsToNudge(nudge: { rollout?: string; wave?: number; rolled_back?: boolean; appliance?: string }): Promise<string[]> {
    if (nudge.appliance) return [nudge.appliance];
    const rows = nudge.rolled_back
      ? await this.pool.query<{ appliance_id: string }>('SELECT appliance_id FROM rollout_targets WHERE rollout_id = $1 AND rollback_revision IS NOT NULL', [nudge.rollout])
      : await this.pool.query<{ appliance_id: string }>('SELECT appliance_id FROM rollout_targets WHERE rollout_id = $1 AND wave = $2', [nudge.rollout, nudge.wave ?? -1]);
    return rows.rows.map((row) => row.appliance_id);
  }

  private async countsOf(client: Client, id: string, wave: number): Promise<{ failed: number; dueInWave: number }> {
    const row = (await client.query<{ failed: string; due: string }>(
      "SELECT count(*) FILTER (WHERE state = 'failed') AS failed, count(*) FILTER (WHERE state = 'due' AND wave = $2) AS due FROM rollout_targets WHERE rollout_id = $1",
      [id, wave],
    )).rows[0];
    return { failed: Number(row.failed), dueInWave: Number(row.due) };
  }

  /**
   * Too many failures: the rollout halts naming the first, no further wave opens, and a failed appliance's desired
   * revision returns to what it runs (it rolled itself back; it is not asked again). Runs under the rollout's row
   * lock, as does every rollback of the policy (so no appliance gets two rollback revisions).
   */
  private async haltOnFailure(client: Client, id: string): Promise<void> {
    const first = (await client.query<{ name: string; reason: string | null }>(
      `SELECT a.name, t.reason FROM rollout_targets t JOIN appliances a ON a.id = t.appliance_id
        WHERE t.rollout_id = $1 AND t.state = 'failed' ORDER BY t.reported_at LIMIT 1`,
      [id],
    )).rows[0];
    const reason = `appliance "${first.name}" failed: ${first.reason ?? 'no reason given'}`;
    await client.query("UPDATE rollouts SET state = 'halted', halted_reason = $2, finished_at = now() WHERE id = $1", [id, reason]);
    await recordAudit(client, { actor: 'controller', action: 'rollout.halted', detail: { rollout_id: id, reason } });
    await client.query(
      `UPDATE appliances a SET desired_revision = a.applied_revision FROM rollout_targets t
        WHERE t.rollout_id = $1 AND t.state = 'failed' AND a.id = t.appliance_id AND a.desired_revision = t.revision`,
      [id],
    );
    await this.cancelUnreported(client, id);
    const policy = (await client.query<{ rollback_on_halt: boolean }>('SELECT rollback_on_halt FROM rollouts WHERE id = $1', [id])).rows[0];
    if (policy.rollback_on_halt) await this.rollBackApplied(client, id);
  }

  /**
   * A halt stops what has not started: every target of the open wave that has not reported is cancelled, and its
   * appliance's desired revision set back to what it runs, so an agent that pulls after the halt gets nothing new
   * (it runs that number already). An agent that pulled before the halt is applying: its report still lands and
   * counts (report()), and the rollback policy takes it like any other. The appliances are updated before the
   * targets, the order report() locks them in; a report that commits first leaves its target out (no longer due).
   * The targets of waves that never opened are cancelled too (their appliances never had the revision to pull), so
   * a halted rollout leaves no target waiting.
   */
  private async cancelUnreported(client: Client, id: string): Promise<void> {
    await client.query(
      `UPDATE appliances a SET desired_revision = a.applied_revision FROM rollout_targets t
        WHERE t.rollout_id = $1 AND t.state = 'due' AND a.id = t.appliance_id AND a.desired_revision = t.revision`,
      [id],
    );
    await client.query(
      `UPDATE rollout_targets SET state = 'cancelled', reason = CASE state WHEN 'due' THEN $2 ELSE $3 END
        WHERE rollout_id = $1 AND state IN ('due', 'waiting')`,
      [id, CANCELLED_REASON, NEVER_OPENED_REASON],
    );
  }

  /**
   * The rollback policy: every appliance this rollout changed gets a new revision whose document is the one it ran
   * before (a new number, so the agent applies it like any other, once), and is nudged.
   */
  private async rollBackApplied(client: Client, id: string): Promise<void> {
    const changed = await client.query<{ appliance_id: string }>(
      `WITH next AS (
         SELECT t.appliance_id, (SELECT max(number) FROM revisions WHERE appliance_id = t.appliance_id) + 1 AS number,
                coalesce((SELECT document FROM revisions WHERE appliance_id = t.appliance_id AND number = t.base_revision), '{"sections": {}}'::jsonb) AS document
           FROM rollout_targets t WHERE t.rollout_id = $1 AND t.state = 'applied' AND t.rollback_revision IS NULL
       ), made AS (
         INSERT INTO revisions (appliance_id, number, document, rollout_id) SELECT appliance_id, number, document, $1 FROM next RETURNING appliance_id, number
       ), marked AS (
         UPDATE rollout_targets t SET rollback_revision = made.number FROM made WHERE t.rollout_id = $1 AND t.appliance_id = made.appliance_id
       )
       UPDATE appliances a SET desired_revision = made.number FROM made WHERE a.id = made.appliance_id RETURNING a.id AS appliance_id`,
      [id],
    );
    if (!changed.rowCount) return;
    await recordAudit(client, { actor: 'controller', action: 'rollout.rolled_back', detail: { rollout_id: id, appliance_ids: changed.rows.map((row) => row.appliance_id) } });
    await client.query('SELECT pg_notify($1, $2)', [CHANNELS.nudge, JSON.stringify({ rollout: id, rolled_back: true })]);
  }
}
