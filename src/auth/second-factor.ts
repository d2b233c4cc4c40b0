import { join } from 'node:path';
import type { AppContext } from '../context.js';
import { isoTime } from '../core/clock.js';
import { loadOrCreateKeyFile } from '../core/crypto.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import type { Actor } from './actor.js';
import type { AuthAudit } from './audit.js';
import type { LoginGuard } from './login-limits.js';
import { verifyPassword } from './passwords.js';
import { matchTotp, newRecoveryCodes, newTotpSecret, provisioningUri, qrCodeDataUrl, recoveryCodeHash } from './totp.js';
import type { UserRow, Users } from './users.js';

/** TOTP enrolment and removal on one's own account, and the check of a TOTP or recovery code at sign-in. */
export class SecondFactor {
  private readonly recoveryKey: Buffer;

  constructor(
    private readonly context: AppContext,
    private readonly users: Users,
    private readonly audit: AuthAudit,
    private readonly guard: LoginGuard,
  ) {
    this.recoveryKey = loadOrCreateKeyFile(join(context.config.dataDir, 'recovery.key'));
  }

  async totpSetup(actor: Actor): Promise<{ secret: string; provisioning_uri: string; otpauth_uri: string; qr_code: string }> {
    const user = this.personOf(actor);
    if (user.totp_enabled) throw conflict('TOTP is already enabled: disable it first');
    const secret = newTotpSecret();
    this.users.update(user.id, { totp_pending: this.context.sealer.seal(secret) });
    const uri = provisioningUri(secret, user.username);
    this.audit.record({ action: 'totp_setup', outcome: 'success', actor: user.username, actorId: user.id, clientIp: actor.clientIp });
    return { secret, provisioning_uri: uri, otpauth_uri: uri, qr_code: await qrCodeDataUrl(uri) };
  }

  totpVerify(actor: Actor, code: string): { totp_enabled: true; recovery_codes: string[] } {
    const user = this.personOf(actor);
    if (user.totp_enabled) throw conflict('TOTP is already enabled');
    if (!user.totp_pending) throw badRequest('call /auth/totp/setup first');
    const secret = this.context.sealer.open(user.totp_pending);
    const step = matchTotp(secret, user.username, code, this.context.clock.now());
    this.guard.assertNotLimited([`totp:${user.id}`], user.username, actor.clientIp ?? '', 'totp_verify');
    if (step === null) {
      this.guard.recordFailure([`totp:${user.id}`], { action: 'totp_verify_failed', actor: user.username, actorId: user.id, clientIp: actor.clientIp ?? '' });
      throw badRequest('body.code is not a valid code for the pending secret');
    }
    const codes = newRecoveryCodes();
    this.context.db.transaction(() => {
      this.users.update(user.id, { totp_secret: user.totp_pending, totp_pending: null, totp_enabled: 1, totp_last_step: step });
      this.context.db.prepare('DELETE FROM recovery_codes WHERE user_id = ?').run(user.id);
      const insert = this.context.db.prepare('INSERT INTO recovery_codes (code_hash, user_id) VALUES (?, ?)');
      for (const recovery of codes) insert.run(recoveryCodeHash(this.recoveryKey, recovery), user.id);
    })();
    this.audit.record({ action: 'totp_enabled', outcome: 'success', actor: user.username, actorId: user.id, clientIp: actor.clientIp });
    return { totp_enabled: true, recovery_codes: codes };
  }

  async totpDisable(actor: Actor, password: string): Promise<{ totp_enabled: false }> {
    const user = this.personOf(actor);
    if (!user.totp_enabled) throw badRequest('TOTP is not enabled');
    this.guard.assertNotLimited([`totp:${user.id}`], user.username, actor.clientIp ?? '', 'totp_disable');
    if (!(await verifyPassword(user.password_hash, password))) {
      this.guard.recordFailure([`totp:${user.id}`], { action: 'totp_disable_failed', actor: user.username, actorId: user.id, clientIp: actor.clientIp ?? '' });
      throw badRequest('body.password is incorrect');
    }
    this.context.db.transaction(() => {
      this.users.update(user.id, { totp_secret: null, totp_pending: null, totp_enabled: 0, totp_last_step: 0 });
      this.context.db.prepare('DELETE FROM recovery_codes WHERE user_id = ?').run(user.id);
    })();
    this.audit.record({ action: 'totp_disabled', outcome: 'success', actor: user.username, actorId: user.id, clientIp: actor.clientIp });
    return { totp_enabled: false };
  }

  /** A current TOTP code (newer than the last accepted one) or an unused recovery code. */
  acceptSecondFactor(user: UserRow, code: string): boolean {
    const trimmed = code.trim();
    if (user.totp_secret && /^\d{6}$/.test(trimmed)) {
      const step = matchTotp(this.context.sealer.open(user.totp_secret), user.username, trimmed, this.context.clock.now());
      if (step === null || step <= user.totp_last_step) return false;
      this.users.update(user.id, { totp_last_step: step });
      return true;
    }
    const used = this.context.db
      .prepare('UPDATE recovery_codes SET used_at = ? WHERE code_hash = ? AND user_id = ? AND used_at IS NULL')
      .run(isoTime(this.context.clock.now()), recoveryCodeHash(this.recoveryKey, trimmed), user.id);
    return used.changes === 1;
  }

  private personOf(actor: Actor): UserRow {
    const identity = actor.identity!;
    if (identity.credential !== 'session') throw badRequest('TOTP is managed from a signed-in session, not with an API key');
    const user = this.users.byId(identity.userId);
    if (!user) throw notFound('account no longer exists');
    return user;
  }
}
