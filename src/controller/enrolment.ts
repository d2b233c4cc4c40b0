import { randomHex, safeEqual, sha256Hex } from '../core/crypto.js';
import { badRequest, unauthorized } from '../core/errors.js';
import { isSealingPublicKey } from '../agent/sealed-secrets.js';
import { certificateFingerprint, parseEnrolmentToken, TOKEN_PREFIX } from '../agent/protocol.js';
import { signClientRequest, type CaMaterial } from './authority.js';
import { inTransaction, type Pool } from './database.js';
import { recordAudit } from './audit.js';

/** Single-use enrolment tokens (stored as a hash of their secret) and the enrolment that spends one. */
export class Enrolment {
  constructor(
    private readonly pool: Pool,
    private readonly ca: CaMaterial,
  ) {}

  async issue(input: { name: string; variables: Record<string, string>; ttlSeconds: number; createdBy: string }) {
    const id = randomHex(8);
    const secret = randomHex(32);
    const expires = new Date(Date.now() + input.ttlSeconds * 1000);
    await this.pool.query(
      'INSERT INTO enrolment_tokens (id, secret_hash, name, variables, created_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, sha256Hex(secret), input.name, JSON.stringify(input.variables), input.createdBy, expires],
    );
    await recordAudit(this.pool, { actor: input.createdBy, action: 'enrolment_token.issued', detail: { token_id: id, name: input.name, expires_at: expires.toISOString() } });
    const caFingerprint = certificateFingerprint(this.ca.certificate_pem);
    return { id, token: [TOKEN_PREFIX, id, secret, caFingerprint].join('.'), name: input.name, expires_at: expires.toISOString(), ca_fingerprint: caFingerprint };
  }

  /**
   * Spends a token: the first caller with the right secret, before expiry, gets a client certificate for a new
   * appliance; every other (a replay, a second appliance, a wrong secret) is a 401 that does not say which.
   */
  async enrol(tokenText: string, csrPem: string, sealingKey: string | undefined): Promise<{ appliance_id: string; certificate: string; ca: string }> {
    const token = parseEnrolmentToken(tokenText, 'body.token');
    if (sealingKey !== undefined && !isSealingPublicKey(sealingKey)) throw badRequest('body.sealing_key: not an X25519 public key (PEM)');
    return inTransaction(this.pool, async (client) => {
      const found = await client.query<{ secret_hash: string; name: string; variables: Record<string, string>; usable: boolean }>(
        'SELECT secret_hash, name, variables, (used_at IS NULL AND expires_at > now()) AS usable FROM enrolment_tokens WHERE id = $1 FOR UPDATE',
        [token.id],
      );
      const row = found.rows[0];
      const matches = safeEqual(sha256Hex(token.secret), row?.secret_hash ?? sha256Hex('no such token'));
      if (!row || !matches || !row.usable) throw unauthorized('enrolment token unknown, used or expired');
      const placeholder = `pending-${randomHex(16)}`;
      const appliance = await client.query<{ id: string }>(
        'INSERT INTO appliances (name, certificate_serial, variables, sealing_key) VALUES ($1, $2, $3, $4) RETURNING id',
        [row.name, placeholder, JSON.stringify(row.variables), sealingKey ?? null],
      );
      const applianceId = appliance.rows[0].id;
      const issued = await signClientRequest(this.ca, csrPem, applianceId);
      await client.query('UPDATE appliances SET certificate_serial = $1 WHERE id = $2', [issued.serial, applianceId]);
      await client.query('UPDATE enrolment_tokens SET used_at = now(), appliance_id = $1 WHERE id = $2', [applianceId, token.id]);
      await recordAudit(client, { actor: 'appliance', applianceId, action: 'appliance.enrolled', detail: { name: row.name, token_id: token.id, certificate_serial: issued.serial } });
      return { appliance_id: applianceId, certificate: issued.certificate_pem, ca: this.ca.certificate_pem };
    });
  }
}
