import { isoTime } from '../core/clock.js';
import { badRequest, forbidden, unauthorized } from '../core/errors.js';
import { toMask } from '../core/permissions.js';
import type { StreamRegistry } from '../live/stream-registry.js';
import type { Actor } from './actor.js';
import type { AuthAudit } from './audit.js';
import { loginLimitKeys, type LoginGuard } from './login-limits.js';
import type { OneShotStore } from './one-shot-store.js';
import { verifyPassword } from './passwords.js';
import type { Roles } from './roles.js';
import type { SecondFactor } from './second-factor.js';
import { refreshTokenPrefix, type Sessions } from './sessions.js';
import type { AuthSettings } from './settings.js';
import type { AccessTokens } from './tokens.js';
import { SYSTEM_PROVIDER, type UserRow, type Users } from './users.js';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  access_expires_at: string;
  refresh_expires_at: string;
}

export type LoginResult =
  | ({ totp_required: false; tokens: TokenPair } & TokenPair)
  | { totp_required: true; challenge: string; tokens: null };

/** Sessions: login (with its TOTP step), refresh, logout, and the signed access tokens a session hands out. */
export class SignIn {
  constructor(
    private readonly parts: {
      users: Users;
      roles: Roles;
      sessions: Sessions;
      audit: AuthAudit;
      streams: StreamRegistry;
      guard: LoginGuard;
      secondFactor: SecondFactor;
      /** Signs access tokens with the appliance's key (jwt.key in the data directory). */
      tokens: AccessTokens;
      /** Login challenges between the password and the TOTP step (5 minutes, single use). */
      totpChallenges: OneShotStore<string>;
      settings: () => AuthSettings;
    },
  ) {}

  async login(username: string, password: string, clientIp: string): Promise<LoginResult> {
    const { users, audit, guard } = this.parts;
    const keys = loginLimitKeys(clientIp, username);
    guard.assertNotLimited(keys, username, clientIp, 'login');
    await guard.slowIfTargeted(keys);
    const user = users.byUsername(username);
    const valid = await verifyPassword(user?.auth_provider === SYSTEM_PROVIDER ? null : user?.password_hash, password);
    if (!user || !valid) {
      // A name that is no account is never written down: it is often a password typed in the wrong field.
      guard.recordFailure(keys, { action: 'login_failed', actor: user ? username : null, clientIp, details: user ? 'wrong password' : 'unknown user' });
      throw unauthorized('invalid username or password');
    }
    if (!user.enabled) {
      guard.recordFailure(keys, { action: 'login_denied_disabled', actor: username, actorId: user.id, clientIp });
      throw unauthorized('invalid username or password');
    }
    // A success forgives this account's failures, never the address's: logging in to one's own account between
    // guesses must not reset the ceiling that guards every other account behind the same address.
    guard.succeed(keys.filter((key) => !key.startsWith('ip:')));
    if (user.totp_enabled) {
      audit.record({ action: 'login_totp_challenge', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
      return { totp_required: true, challenge: this.parts.totpChallenges.issue(user.id), tokens: null };
    }
    if (this.parts.settings().require_totp) {
      audit.record({ action: 'login_failed', outcome: 'failure', actor: user.username, actorId: user.id, clientIp, details: 'TOTP required but not enrolled' });
      throw forbidden('this appliance requires TOTP: an administrator must enrol it for this account');
    }
    audit.record({ action: 'login_success', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
    const tokens = await this.openSession(user, clientIp);
    return { ...tokens, tokens, totp_required: false };
  }

  async completeTotpLogin(challenge: string, code: string, clientIp: string): Promise<TokenPair> {
    const { users, audit, guard } = this.parts;
    const keys = [`ip:${clientIp}`];
    guard.assertNotLimited(keys, null, clientIp, 'totp_login');
    const userId = this.parts.totpChallenges.take(challenge);
    const user = userId ? users.byId(userId) : undefined;
    if (!user || !user.enabled || !user.totp_enabled) {
      guard.recordFailure(keys, { action: 'totp_login_failed', actor: null, clientIp, details: 'unknown, used or expired challenge' });
      throw unauthorized('challenge is unknown, used or expired: log in again');
    }
    if (!this.parts.secondFactor.acceptSecondFactor(user, code)) {
      guard.recordFailure(loginLimitKeys(clientIp, user.username), { action: 'totp_login_failed', actor: user.username, actorId: user.id, clientIp, details: 'wrong code' });
      throw unauthorized('invalid TOTP or recovery code: log in again');
    }
    audit.record({ action: 'login_success', outcome: 'success', actor: user.username, actorId: user.id, clientIp, details: 'with TOTP' });
    return this.openSession(user, clientIp);
  }

  async refresh(refreshToken: string, clientIp: string): Promise<TokenPair> {
    const { users, sessions, streams, audit, guard } = this.parts;
    const keys = [`ip:${clientIp}`, `rfx:${refreshTokenPrefix(refreshToken)}`];
    guard.assertNotLimited(keys, null, clientIp, 'refresh');
    const outcome = sessions.rotate(refreshToken);
    if (!outcome.ok) {
      if (outcome.reason === 'reused') streams.recheck();
      guard.recordFailure(keys, { action: outcome.reason === 'reused' ? 'refresh_reuse_revoked_session' : 'refresh_failed', actor: null, clientIp, details: outcome.reason });
      throw unauthorized('refresh token is invalid, expired or already used');
    }
    const user = users.byId(outcome.userId);
    if (!user || !user.enabled) {
      sessions.revoke(outcome.sessionId);
      streams.recheck();
      throw unauthorized('account is disabled or deleted');
    }
    guard.succeed(keys);
    audit.record({ action: 'refresh', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
    return this.tokenPair(user, outcome.sessionId, outcome.token, outcome.expiresAt);
  }

  /**
   * Revokes the caller's session and the session of a refresh token, when one is sent in the body (unknown:
   * 400) or found in the refresh cookie (best effort: an unknown cookie is ignored).
   */
  logout(actor: Actor, refreshToken?: string, source: 'body' | 'cookie' = 'body'): void {
    const { sessions } = this.parts;
    const identity = actor.identity!;
    if (refreshToken) {
      const sessionId = sessions.sessionOfRefresh(refreshToken);
      if (!sessionId && source === 'body') throw badRequest('body.refresh_token is not a known refresh token');
      if (sessionId) sessions.revoke(sessionId);
    }
    if (identity.credential === 'session') sessions.revoke(identity.credentialId);
    this.parts.streams.recheck();
    this.parts.audit.record({ action: 'logout', outcome: 'success', actor: identity.username, actorId: identity.userId, clientIp: actor.clientIp });
  }

  /** Opens a session for an account resolved elsewhere (password login, TOTP, single sign-on). */
  async openSession(user: UserRow, clientIp: string | null): Promise<TokenPair> {
    const lifetimeMs = this.parts.settings().refresh_token_expiry_days * 86_400_000;
    const { sessionId, token, expiresAt } = this.parts.sessions.open(user.id, lifetimeMs, clientIp);
    return this.tokenPair(user, sessionId, token, expiresAt);
  }

  private async tokenPair(user: UserRow, sessionId: string, refreshToken: string, refreshExpiresAt: number): Promise<TokenPair> {
    const role = this.parts.roles.byId(user.role_id);
    const lifetimeSeconds = this.parts.settings().access_token_expiry_mins * 60;
    const access = await this.parts.tokens.sign(
      {
        sub: user.id,
        username: user.username,
        role: role?.name ?? 'none',
        perm: Number(toMask(role?.permissions ?? [])),
        sid: sessionId,
        gen: this.parts.sessions.generationOf(sessionId),
      },
      lifetimeSeconds,
    );
    return {
      access_token: access.token,
      refresh_token: refreshToken,
      token_type: 'Bearer',
      expires_in: lifetimeSeconds,
      access_expires_at: isoTime(access.expiresAt),
      refresh_expires_at: isoTime(refreshExpiresAt),
    };
  }
}
