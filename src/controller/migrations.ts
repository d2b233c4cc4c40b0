import type { Pool } from './database.js';
import { LOCKS } from './database.js';

/**
 * Versioned schema of the controller's database. Append only: a released migration is never edited; the next
 * change is a new entry. Each runs in its own transaction and is recorded in schema_migrations.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, sessions, certificate authority, enrolment, appliances',
    sql: `
      CREATE TABLE accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        username text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'operator', 'viewer')),
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
        expires_at timestamptz NOT NULL
      );
      CREATE TABLE certificate_authority (
        id integer PRIMARY KEY CHECK (id = 1),
        certificate text NOT NULL,
        sealed_key text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE appliances (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        certificate_serial text NOT NULL UNIQUE,
        variables jsonb NOT NULL DEFAULT '{}',
        enrolled_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        version text,
        health jsonb,
        last_seen timestamptz,
        connected_to text,
        desired_revision integer NOT NULL DEFAULT 0,
        applied_revision integer NOT NULL DEFAULT 0,
        last_outcome jsonb,
        drift jsonb NOT NULL DEFAULT '[]'
      );
      CREATE TABLE enrolment_tokens (
        id text PRIMARY KEY,
        secret_hash text NOT NULL,
        name text NOT NULL,
        variables jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        appliance_id uuid REFERENCES appliances ON DELETE SET NULL
      );
    `,
  },
  {
    version: 2,
    name: 'templates, revisions, rollouts',
    sql: `
      CREATE TABLE templates (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL UNIQUE,
        sections jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE rollouts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        template_id uuid NOT NULL REFERENCES templates,
        state text NOT NULL CHECK (state IN ('running', 'halted', 'completed')),
        waves integer[] NOT NULL,
        current_wave integer NOT NULL DEFAULT -1,
        wave_interval_seconds integer NOT NULL DEFAULT 0,
        next_wave_at timestamptz,
        max_failures integer NOT NULL DEFAULT 0,
        halted_reason text,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz
      );
      CREATE UNIQUE INDEX rollouts_one_running ON rollouts ((true)) WHERE state = 'running';
      CREATE TABLE revisions (
        appliance_id uuid NOT NULL REFERENCES appliances ON DELETE CASCADE,
        number integer NOT NULL,
        document jsonb NOT NULL,
        rollout_id uuid REFERENCES rollouts,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (appliance_id, number)
      );
      CREATE TABLE rollout_targets (
        rollout_id uuid NOT NULL REFERENCES rollouts ON DELETE CASCADE,
        appliance_id uuid NOT NULL REFERENCES appliances ON DELETE CASCADE,
        wave integer NOT NULL,
        revision integer NOT NULL,
        state text NOT NULL CHECK (state IN ('waiting', 'due', 'applied', 'failed')),
        reason text,
        reported_at timestamptz,
        PRIMARY KEY (rollout_id, appliance_id)
      );
      CREATE INDEX rollout_targets_by_appliance ON rollout_targets (appliance_id, revision);
    `,
  },
  {
    version: 3,
    name: 'rollback of already-changed appliances when a rollout halts',
    sql: `
      ALTER TABLE rollouts ADD COLUMN rollback_on_halt boolean NOT NULL DEFAULT false;
      ALTER TABLE rollout_targets ADD COLUMN base_revision integer NOT NULL DEFAULT 0;
      ALTER TABLE rollout_targets ADD COLUMN rollback_revision integer;
    `,
  },
  {
    version: 4,
    name: 'fleet-wide audit',
    sql: `
      CREATE TABLE audit_events (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        actor text NOT NULL,
        appliance_id uuid REFERENCES appliances ON DELETE SET NULL,
        action text NOT NULL,
        detail jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_events_by_appliance ON audit_events (appliance_id, id);
      CREATE INDEX audit_events_by_action ON audit_events (action, id);
    `,
  },
  {
    version: 5,
    name: 'drift policy of templates',
    sql: `ALTER TABLE templates ADD COLUMN drift_policy text NOT NULL DEFAULT 'overwrite' CHECK (drift_policy IN ('overwrite', 'adopt'));`,
  },
  {
    version: 6,
    name: 'secrets sealed per appliance',
    sql: `
      ALTER TABLE appliances ADD COLUMN sealing_key text;
      CREATE TABLE appliance_secrets (
        appliance_id uuid NOT NULL REFERENCES appliances ON DELETE CASCADE,
        name text NOT NULL,
        sealed text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (appliance_id, name)
      );
    `,
  },
  {
    version: 7,
    name: 'rule placement of templates',
    sql: `ALTER TABLE templates ADD COLUMN rule_placement text NOT NULL DEFAULT 'priority' CHECK (rule_placement IN ('priority', 'first', 'last'));`,
  },
  {
    version: 8,
    name: 'targets of a halted rollout cancelled before they reported',
    sql: `
      ALTER TABLE rollout_targets DROP CONSTRAINT rollout_targets_state_check;
      ALTER TABLE rollout_targets ADD CONSTRAINT rollout_targets_state_check CHECK (state IN ('waiting', 'due', 'applied', 'failed', 'cancelled'));
    `,
  },
  {
    version: 9,
    name: 'controller processes and their heartbeats',
    sql: `
      CREATE TABLE controller_processes (
        id text PRIMARY KEY,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 10,
    name: 'targets of waves a halt left unopened cancelled',
    // Rollouts halted before this version left them waiting; the halt now cancels them (rollouts.ts).
    sql: `UPDATE rollout_targets t SET state = 'cancelled', reason = 'the rollout halted before its wave opened'
            FROM rollouts r WHERE r.id = t.rollout_id AND r.state = 'halted' AND t.state = 'waiting';`,
  },
  {
    version: 11,
    name: 'the revision number an appliance last pulled',
    // Drift adoption waits while the number last pulled is neither applied nor reported (drift-adoption.ts).
    sql: 'ALTER TABLE appliances ADD COLUMN pulled_revision integer;',
  },
];

/**
 * Brings the schema to the newest version. Safe with several controller processes starting at once: a session
 * advisory lock lets one migrate while the others wait, then find nothing left to do.
 */
export async function migrate(pool: Pool): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', LOCKS.migrations);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((row) => row.version));
      for (const migration of MIGRATIONS) {
        if (done.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(error as Error).message}`);
        }
        applied.push(migration.version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', LOCKS.migrations);
    }
  } finally {
    client.release();
  }
  return applied;
}
