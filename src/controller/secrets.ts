import { sealFor } from '../agent/sealed-secrets.js';
import { conflict, notFound } from '../core/errors.js';
import { recordAudit } from './audit.js';
import { inTransaction, type Pool } from './database.js';

/**
 * Secrets the templates use (`${secret:name}`), kept only sealed for each appliance with the X25519 key it sent at
 * enrolment. A value is sealed as it arrives and never stored, logged or answered; the controller holds no key that
 * opens it. Setting a secret again replaces its sealed copies.
 */
export class ApplianceSecrets {
  constructor(private readonly pool: Pool) {}

  /** Seals `value` for each appliance named (default: every unrevoked appliance that has a sealing key). */
  async put(name: string, value: string, applianceIds: string[] | undefined, by: string): Promise<{ name: string; sealed_for: string[] }> {
    return inTransaction(this.pool, async (client) => {
      const targets = (await client.query<{ id: string; sealing_key: string | null }>(
        'SELECT id, sealing_key FROM appliances WHERE revoked_at IS NULL AND ($1::text[] IS NULL OR id::text = ANY($1)) ORDER BY enrolled_at, id',
        [applianceIds ?? null],
      )).rows;
      if (applianceIds && targets.length !== new Set(applianceIds).size) throw notFound('body.appliance_ids: names an appliance that is unknown or revoked');
      const unsealable = targets.filter((t) => !t.sealing_key);
      if (applianceIds && unsealable.length > 0) throw conflict(`appliance ${unsealable[0].id} enrolled without a sealing key: enrol it again to give it secrets`);
      const sealable = targets.filter((t) => t.sealing_key);
      for (const target of sealable) {
        await client.query(
          `INSERT INTO appliance_secrets (appliance_id, name, sealed) VALUES ($1, $2, $3)
           ON CONFLICT (appliance_id, name) DO UPDATE SET sealed = excluded.sealed, updated_at = now()`,
          [target.id, name, sealFor(target.sealing_key!, target.id, name, value)],
        );
      }
      await recordAudit(client, { actor: by, action: 'secret.sealed', detail: { name, appliances: sealable.length } });
      return { name, sealed_for: sealable.map((t) => t.id) };
    });
  }

  /** The names of an appliance's secrets and when each was set (never a value, sealed or not). */
  async list(applianceId: string): Promise<{ name: string; updated_at: string }[]> {
    const rows = await this.pool.query<{ name: string; updated_at: Date }>('SELECT name, updated_at FROM appliance_secrets WHERE appliance_id::text = $1 ORDER BY name', [applianceId]);
    return rows.rows.map((row) => ({ name: row.name, updated_at: new Date(row.updated_at).toISOString() }));
  }

  async remove(applianceId: string, name: string, by: string): Promise<void> {
    const removed = await this.pool.query('DELETE FROM appliance_secrets WHERE appliance_id::text = $1 AND name = $2', [applianceId, name]);
    if (!removed.rowCount) throw notFound(`appliance ${applianceId} has no secret "${name}"`);
    await recordAudit(this.pool, { actor: by, applianceId, action: 'secret.removed', detail: { name } });
  }
}
