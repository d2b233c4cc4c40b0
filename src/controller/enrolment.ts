import { randomUUID } from 'node:crypto';
import { randomHex, safeEqual, sha256Hex } from '../core/crypto.js';
import { badRequest, unauthorized } from '../core/errors.js';
import { isSealingPublicKey } from '../agent/sealed-secrets.js';
import { certificateFingerprint, parseEnrolmentToken, TOKEN_PREFIX } from '../agent/protocol.js';
import { signClientRequest, type CaMaterial } from './authority.js';
import type { Pool } from './database.js';
import { recordAudit } from './audit.js';

/** Single-use enrolment tokens (stored as a hash of their secret) and the enrolment that spends one. */
export class Enrolment {
  /** The SHA-256 every token pins (the CA does not change while the process runs). */
  private readonly caFingerprint: string;

  constructor(
    private readonly pool: Pool,
    private readonly ca: CaMaterial,
  ) {
    this.caFingerprint = certificateFingerprint(ca.certificate_pem);
  }

  async issue(input: { name: string; variables: Record<string, string>; ttlSeconds: number; createdBy: string }) {
    const id = randomHex(8);
    const secret = randomHex(32);
    const expires = new Date(Date.now() + input.ttlSeconds * 1000);
    await this.pool.query(
      'INSERT INTO enrolment_tokens (id, secret_hash, name, variables, created_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, sha256Hex(secret), input.name, JSON.stringify(input.variables), input.createdBy, expires],
    );
    await recordAudit(this.pool, { actor: input.createdBy, action: 'enrolment_token.issued', detail: { token_id: id, name: input.name, expires_at: expires.toISOString() } });
    return { id, token: [TOKEN_PREFIX, id, secret, this.caFingerprint].join('.'), name: input.name, expires_at: expires.toISOString(), ca_fingerprint: this.caFingerprint };
  }

  /**
   * Spends a token: the first caller with the right secret, before expiry, gets a client certificate for a new
   * appliance; every other (a replay, a second appliance, a wrong secret) is a 401 that does not say which.
   *
   * Two statements and no transaction held across the signature: the token is checked first (nothing is signed
   * for a caller without a live token), then one statement spends it, creates the appliance and audits it. Of
   * requests racing with one token only the first finds it unspent there; a loser's certificate is never issued.
   */
  async enrol(tokenText: string, csrPem: string, sealingKey: string | undefined): Promise<{ appliance_id: string; certificate: string; ca: string }> {
    const token = parseEnrolmentToken(tokenText, 'body.token');
    if (sealingKey !== undefined && !isSealingPublicKey(sealingKey)) throw badRequest('body.sealing_key: not an X25519 public key (PEM)');
    const refused = () => unauthorized('enrolment token unknown, used or expired');
    const row = (await this.pool.query<{ secret_hash: string; usable: boolean }>(
      'SELECT secret_hash, (used_at IS NULL AND expires_at > now()) AS usable FROM enrolment_tokens WHERE id = $1',
      [token.id],
    )).rows[0];
    const matches = safeEqual(sha256Hex(token.secret), row?.secret_hash ?? sha256Hex('no such token'));
    if (!row || !matches || !row.usable) throw refused();
    const applianceId = randomUUID();
    const issued = await signClientRequest(this.ca, csrPem, applianceId);
    const made = await this.pool.query(
      `WITH spent AS (
         UPDATE enrolment_tokens SET used_at = now(), appliance_id = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > now() RETURNING name, variables
       ), appliance AS (
         INSERT INTO appliances (id, name, certificate_serial, variables, sealing_key) SELECT $2, name, $3, variables, $4 FROM spent RETURNING id, name
       )
       INSERT INTO audit_events (actor, appliance_id, action, detail)
       SELECT 'appliance', id, 'appliance.enrolled', jsonb_build_object('name', name, 'token_id', $1::text, 'certificate_serial', $3::text) FROM appliance`,
      [token.id, applianceId, issued.serial, sealingKey ?? null],
    );
    if (made.rowCount !== 1) throw refused();
    return { appliance_id: applianceId, certificate: issued.certificate_pem, ca: this.ca.certificate_pem };
  }
}
