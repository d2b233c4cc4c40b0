import { writeFileSync } from 'node:fs';
import { EVENT_TOPICS } from '../core/events.js';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { isoTime, pause } from '../core/clock.js';
import { loadOrCreateKeyFile } from '../core/crypto.js';
import { badRequest, conflict, forbidden, notFound, tooManyRequests, unauthorized } from '../core/errors.js';
import { toMask, type Permission } from '../core/permissions.js';
import type { Authenticator, Identity } from '../http/access.js';
import type { SingletonModel } from '../model/singleton-model.js';
import type { ConfigData } from '../store/config-store.js';
import { AuthAudit } from './audit.js';
import { ACCESS_COOKIE, assertCsrfHeader, readCookie } from './cookies.js';
import { ApiKeys, type ApiKeyRecord } from './api-keys.js';
import { OneShotStore } from './one-shot-store.js';
import { assertPasswordPolicy, hashPassword, verifyPassword } from './passwords.js';
import { FailureLimiter } from './rate-limit.js';
import { builtinRoleId, normalisePermissions, Roles, type RoleRecord } from './roles.js';
import { refreshTokenPrefix, Sessions } from './sessions.js';
import { SSO_SETTINGS_KIND } from './sso/sso-settings.js';
import { AUTH_SETTINGS_KIND, AuthSettingsSchema, type AuthSettings } from './settings.js';
import { AccessTokens } from './tokens.js';
import { StreamRegistry } from '../live/stream-registry.js';
import { matchTotp, newRecoveryCodes, newTotpSecret, provisioningUri, qrCodeDataUrl, recoveryCodeHash } from './totp.js';
import { SYSTEM_PROVIDER, Users, type UserRow } from './users.js';

export const SERVICE_ACCOUNT = 'bulwark-daemon';
export const DAEMON_KEY_NAME = 'daemon-loopback';
/** The locked account that owns the fleet agent's key when the appliance enrolled at start, with no person signed in. */
export const FLEET_AGENT_ACCOUNT = 'bulwark-fleet-agent';
const RESERVED_KEY_NAMES = [DAEMON_KEY_NAME, 'cluster-peer', 'plugin:'];

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

export interface UserRecord {
  id: string;
  username: string;
  email: string | null;
  role: string;
  role_id: string;
  enabled: boolean;
  totp_enabled: boolean;
  auth_provider: string;
  created_at: string;
  updated_at: string;
}

/** Who did something, for the audit. */
export type UserPatch = { username?: string; password?: string; email?: string | null; role?: string; enabled?: boolean };

/** A write's precondition (If-Match), given the target's version as it is now; throws to refuse the write. */
export type VersionCheck = (currentVersion: unknown) => void;

export interface Actor {
  identity: Identity | null;
  clientIp: string | null;
}

export const actorOf = (request: FastifyRequest): Actor => ({ identity: request.identity, clientIp: request.ip });

/**
 * Accounts, roles, sessions, API keys, TOTP, rate limits and the auth audit. Everything that decides who a
 * caller is and what they may do lives here; the routes only translate HTTP.
 */
export class IdentityService implements Authenticator {
  readonly roles: Roles;
  readonly users: Users;
  readonly sessions: Sessions;
  readonly apiKeys: ApiKeys;
  readonly audit: AuthAudit;
  readonly settingsSection: SingletonModel<AuthSettings & ConfigData>;
  /** WebSocket and SSE tickets: 30 s, single use, bound to the issuing identity. */
  readonly tickets: OneShotStore<Identity>;
  /** Open streams, checked again after every change to accounts, roles, sessions and keys. */
  readonly streams: StreamRegistry;
  private readonly totpChallenges: OneShotStore<string>;
  private readonly limiter: FailureLimiter;
  private readonly tokens: AccessTokens;
  private readonly recoveryKey: Buffer;

  constructor(private readonly context: AppContext) {
    const { db, clock, config } = context;
    this.roles = new Roles(db, clock);
    this.users = new Users(db, clock);
    this.sessions = new Sessions(db, clock);
    this.apiKeys = new ApiKeys(db, clock);
    this.audit = new AuthAudit(db, clock, 'auth', context.events);
    this.settingsSection = context.models.singleton({ kind: AUTH_SETTINGS_KIND, noun: 'auth settings', writeAccess: 'settings:write', schema: AuthSettingsSchema });
    this.tickets = new OneShotStore(clock, 30_000);
    this.streams = new StreamRegistry((identity, permission) => this.stillHolds(identity, permission));
    this.totpChallenges = new OneShotStore(clock, 5 * 60_000);
    this.limiter = new FailureLimiter(clock, (key) => {
      const settings = this.settings();
      return { maxAttempts: settings.max_login_attempts * ceilingFactor(key), windowSeconds: settings.lockout_duration_secs, onLimit: onLimitOf(key) };
    });
    this.tokens = new AccessTokens(loadOrCreateKeyFile(join(config.dataDir, 'jwt.key')), clock);
    this.recoveryKey = loadOrCreateKeyFile(join(config.dataDir, 'recovery.key'));
    this.ensureServiceAccount();
  }

  /** The single sign-on public URL (see the SSO settings), which also decides whether cookies are Secure. */
  publicUrl(): string {
    const value = this.context.store.getSingleton(SSO_SETTINGS_KIND)?.public_url;
    return typeof value === 'string' ? value : '';
  }

  /** True until the first account is registered: whoever calls POST /auth/register first owns the appliance. */
  awaitingFirstAccount(): boolean {
    return this.users.countPeople() === 0;
  }

  settings(): AuthSettings {
    return this.settingsSection.read();
  }

  // ---------------------------------------------------------------- credentials on every request

  private readonly witnesses = new Set<(identity: Identity, ip: string | undefined) => Promise<void> | void>();

  /** Hears every request that authenticated (with its client address): commit-confirm's auto-confirm waits for its client. */
  onAuthenticated(listener: (identity: Identity, ip: string | undefined) => Promise<void> | void): () => void {
    this.witnesses.add(listener);
    return () => this.witnesses.delete(listener);
  }

  async authenticate(request: FastifyRequest): Promise<Identity | null> {
    const identity = await this.identify(request);
    for (const witness of identity ? this.witnesses : []) {
      try {
        await witness(identity!, request.ip);
      } catch {
        // a listener's failure never fails the request
      }
    }
    return identity;
  }

  private async identify(request: FastifyRequest): Promise<Identity | null> {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const [scheme, value, extra] = header.trim().split(/\s+/);
      if (!value || extra !== undefined) throw unauthorized('malformed Authorization header');
      if (/^bearer$/i.test(scheme)) return this.fromAccessToken(value);
      if (/^apikey$/i.test(scheme)) return this.fromApiKey(value);
      throw unauthorized('unsupported authorization scheme: use Bearer or ApiKey');
    }
    const ticket = (request.query as Record<string, unknown> | undefined)?.ticket;
    if (typeof ticket === 'string' && request.routeOptions.config?.acceptsTicket) {
      const identity = this.tickets.take(ticket);
      if (!identity) throw unauthorized('ticket is unknown, used or expired');
      return identity;
    }
    // Browser sessions (single sign-on) carry the same JWT in an HttpOnly cookie. It counts only when no
    // header credential was sent, and a state-changing request made with it needs the CSRF header.
    const cookie = readCookie(request, ACCESS_COOKIE);
    if (cookie !== undefined) {
      assertCsrfHeader(request);
      return this.fromAccessToken(cookie);
    }
    return null;
  }

  private async fromAccessToken(token: string): Promise<Identity> {
    const claims = await this.tokens.verify(token);
    if (!claims) throw unauthorized('access token is invalid or expired');
    const session = this.sessions.check(claims.sid, claims.gen);
    if (!session) throw unauthorized('session was revoked or its permissions changed: refresh the token');
    // The token's claims only name the session. Who it belongs to and what it may do are read from the
    // server's own state, so a token minted with a leaked signing key gains nothing beyond its session.
    if (session.userId !== claims.sub) throw unauthorized('access token is invalid or expired');
    const current = this.currentGrant(session.userId);
    if (!current) throw unauthorized('account is disabled or no longer exists');
    return {
      credential: 'session',
      userId: current.user.id,
      username: current.user.username,
      role: current.roleName,
      permissions: current.permissions,
      credentialId: claims.sid,
    };
  }

  private fromApiKey(secret: string): Identity {
    const key = this.apiKeys.resolve(secret);
    const current = key && this.currentGrant(key.owner_id);
    if (!key || !current) throw unauthorized('API key is invalid, revoked or expired');
    // A key never holds more than its owner does now: demoting the owner narrows every key at once.
    const permissions = new Set(key.permissions.filter((p) => current.permissions.has(p)));
    return {
      credential: 'api_key',
      userId: current.user.id,
      username: `${current.user.username} (key ${key.name})`,
      role: null,
      permissions,
      credentialId: key.id,
    };
  }

  /** Whether the credential behind an identity (a session, or a key) still holds a permission now. */
  private stillHolds(identity: Identity, permission: Permission): boolean {
    const current = this.currentGrant(identity.userId);
    if (!current || !current.permissions.has(permission)) return false;
    if (identity.credential === 'api_key') return this.apiKeys.liveById(identity.credentialId)?.permissions.includes(permission) === true;
    return this.sessions.isLive(identity.credentialId);
  }

  /** An enabled account's current role and permissions; undefined when it is disabled or gone. */
  private currentGrant(userId: string): { user: UserRow; roleName: string; permissions: ReadonlySet<Permission> } | undefined {
    const user = this.users.byId(userId);
    if (!user || !user.enabled) return undefined;
    const role = this.roles.byId(user.role_id);
    return { user, roleName: role?.name ?? 'none', permissions: this.roles.permissionSetOf(user.role_id) };
  }

  // ---------------------------------------------------------------- first boot, login, refresh, logout

  /** First boot: no person has an account yet, so POST /auth/register is open (the sign-in page offers it). */
  registrationOpen(): boolean {
    return this.users.countPeople() === 0;
  }

  async register(input: { username: string; password: string; email?: string }, actor: Actor): Promise<UserRecord> {
    const refuse = () => {
      this.audit.record({ action: 'register', outcome: 'failure', actor: null, clientIp: actor.clientIp, details: 'an account already exists' });
      return forbidden('registration is closed: an account already exists');
    };
    if (this.users.countPeople() > 0) throw refuse();
    assertPasswordPolicy(input.password, this.settings().password_min_length);
    this.assertUsername(input.username);
    const passwordHash = await hashPassword(input.password);
    // The hash takes ~100 ms, during which other registrations may have landed: the count is checked again in
    // the same transaction as the insert, so exactly one of any number of concurrent registrations wins.
    const user = this.context.db.transaction(() => {
      if (this.users.countPeople() > 0) throw refuse();
      return this.users.insert({ username: input.username, passwordHash, email: input.email, roleId: builtinRoleId('admin') });
    }).immediate();
    this.audit.record({ action: 'register', outcome: 'success', actor: user.username, actorId: user.id, targetId: user.id, clientIp: actor.clientIp });
    return this.toUserRecord(user);
  }

  async login(username: string, password: string, clientIp: string): Promise<LoginResult> {
    const keys = loginLimitKeys(clientIp, username);
    this.assertNotLimited(keys, username, clientIp, 'login');
    await this.slowIfTargeted(keys);
    const user = this.users.byUsername(username);
    const valid = await verifyPassword(user?.auth_provider === SYSTEM_PROVIDER ? null : user?.password_hash, password);
    if (!user || !valid) {
      // A name that is no account is never written down: it is often a password typed in the wrong field.
      this.recordFailure(keys, { action: 'login_failed', actor: user ? username : null, clientIp, details: user ? 'wrong password' : 'unknown user' });
      throw unauthorized('invalid username or password');
    }
    if (!user.enabled) {
      this.recordFailure(keys, { action: 'login_denied_disabled', actor: username, actorId: user.id, clientIp });
      throw unauthorized('invalid username or password');
    }
    // A success forgives this account's failures, never the address's: logging in to one's own account between
    // guesses must not reset the ceiling that guards every other account behind the same address.
    this.limiter.succeed(keys.filter((key) => !key.startsWith('ip:')));
    if (user.totp_enabled) {
      this.audit.record({ action: 'login_totp_challenge', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
      return { totp_required: true, challenge: this.totpChallenges.issue(user.id), tokens: null };
    }
    if (this.settings().require_totp) {
      this.audit.record({ action: 'login_failed', outcome: 'failure', actor: user.username, actorId: user.id, clientIp, details: 'TOTP required but not enrolled' });
      throw forbidden('this appliance requires TOTP: an administrator must enrol it for this account');
    }
    this.audit.record({ action: 'login_success', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
    const tokens = await this.openSession(user, clientIp);
    return { ...tokens, tokens, totp_required: false };
  }

  async completeTotpLogin(challenge: string, code: string, clientIp: string): Promise<TokenPair> {
    const keys = [`ip:${clientIp}`];
    this.assertNotLimited(keys, null, clientIp, 'totp_login');
    const userId = this.totpChallenges.take(challenge);
    const user = userId ? this.users.byId(userId) : undefined;
    if (!user || !user.enabled || !user.totp_enabled) {
      this.recordFailure(keys, { action: 'totp_login_failed', actor: null, clientIp, details: 'unknown, used or expired challenge' });
      throw unauthorized('challenge is unknown, used or expired: log in again');
    }
    if (!this.acceptSecondFactor(user, code)) {
      this.recordFailure(loginLimitKeys(clientIp, user.username), { action: 'totp_login_failed', actor: user.username, actorId: user.id, clientIp, details: 'wrong code' });
      throw unauthorized('invalid TOTP or recovery code: log in again');
    }
    this.audit.record({ action: 'login_success', outcome: 'success', actor: user.username, actorId: user.id, clientIp, details: 'with TOTP' });
    return this.openSession(user, clientIp);
  }

  async refresh(refreshToken: string, clientIp: string): Promise<TokenPair> {
    const keys = [`ip:${clientIp}`, `rfx:${refreshTokenPrefix(refreshToken)}`];
    this.assertNotLimited(keys, null, clientIp, 'refresh');
    const outcome = this.sessions.rotate(refreshToken);
    if (!outcome.ok) {
      if (outcome.reason === 'reused') this.streams.recheck();
      this.recordFailure(keys, { action: outcome.reason === 'reused' ? 'refresh_reuse_revoked_session' : 'refresh_failed', actor: null, clientIp, details: outcome.reason });
      throw unauthorized('refresh token is invalid, expired or already used');
    }
    const user = this.users.byId(outcome.userId);
    if (!user || !user.enabled) {
      this.sessions.revoke(outcome.sessionId);
      this.streams.recheck();
      throw unauthorized('account is disabled or deleted');
    }
    this.limiter.succeed(keys);
    this.audit.record({ action: 'refresh', outcome: 'success', actor: user.username, actorId: user.id, clientIp });
    return this.tokenPair(user, outcome.sessionId, outcome.token, outcome.expiresAt);
  }

  /**
   * Revokes the caller's session and the session of a refresh token, when one is sent in the body (unknown:
   * 400) or found in the refresh cookie (best effort: an unknown cookie is ignored).
   */
  logout(actor: Actor, refreshToken?: string, source: 'body' | 'cookie' = 'body'): void {
    const identity = actor.identity!;
    if (refreshToken) {
      const sessionId = this.sessions.sessionOfRefresh(refreshToken);
      if (!sessionId && source === 'body') throw badRequest('body.refresh_token is not a known refresh token');
      if (sessionId) this.sessions.revoke(sessionId);
    }
    if (identity.credential === 'session') this.sessions.revoke(identity.credentialId);
    this.streams.recheck();
    this.audit.record({ action: 'logout', outcome: 'success', actor: identity.username, actorId: identity.userId, clientIp: actor.clientIp });
  }

  /** Opens a session for an account resolved elsewhere (password login, TOTP, single sign-on). */
  async openSession(user: UserRow, clientIp: string | null): Promise<TokenPair> {
    const lifetimeMs = this.settings().refresh_token_expiry_days * 86_400_000;
    const { sessionId, token, expiresAt } = this.sessions.open(user.id, lifetimeMs, clientIp);
    return this.tokenPair(user, sessionId, token, expiresAt);
  }

  private async tokenPair(user: UserRow, sessionId: string, refreshToken: string, refreshExpiresAt: number): Promise<TokenPair> {
    const role = this.roles.byId(user.role_id);
    const lifetimeSeconds = this.settings().access_token_expiry_mins * 60;
    const access = await this.tokens.sign(
      {
        sub: user.id,
        username: user.username,
        role: role?.name ?? 'none',
        perm: Number(toMask(role?.permissions ?? [])),
        sid: sessionId,
        gen: this.sessions.generationOf(sessionId),
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

  private assertNotLimited(keys: string[], username: string | null, clientIp: string, what: string): void {
    const wait = this.limiter.blockedFor(keys);
    if (wait > 0) {
      const known = username !== null && this.users.byUsername(username) !== undefined;
      this.audit.record({ action: `${what}_rate_limited`, outcome: 'failure', actor: known ? username : null, clientIp });
      throw tooManyRequests(wait, 'too many failed attempts: try again later');
    }
  }

  /**
   * A username guessed from many addresses is slowed, never refused: every attempt on it waits before the
   * password is checked, the right one from a clean address included, so an outsider cannot lock the owner out.
   */
  private async slowIfTargeted(keys: string[]): Promise<void> {
    if (this.limiter.slowed(keys).length > 0) await pause(this.context.clock, TARGETED_LOGIN_DELAY_MS);
  }

  private recordFailure(keys: string[], event: { action: string; actor: string | null; actorId?: string; clientIp: string; details?: string }): void {
    this.audit.record({ ...event, outcome: 'failure' });
    for (const key of this.limiter.fail(keys)) {
      const action = onLimitOf(key) === 'slow' ? 'login_slowed' : 'lockout';
      this.audit.record({ action, outcome: 'failure', actor: event.actor, clientIp: event.clientIp, details: event.actor === null ? withoutName(key) : key });
      if (action === 'lockout') this.context.events.emit(EVENT_TOPICS.accountLockedOut, { key: event.actor === null ? withoutName(key) : key, actor: event.actor, client_ip: event.clientIp });
    }
  }

  // ---------------------------------------------------------------- TOTP

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
    this.assertNotLimited([`totp:${user.id}`], user.username, actor.clientIp ?? '', 'totp_verify');
    if (step === null) {
      this.recordFailure([`totp:${user.id}`], { action: 'totp_verify_failed', actor: user.username, actorId: user.id, clientIp: actor.clientIp ?? '' });
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
    this.assertNotLimited([`totp:${user.id}`], user.username, actor.clientIp ?? '', 'totp_disable');
    if (!(await verifyPassword(user.password_hash, password))) {
      this.recordFailure([`totp:${user.id}`], { action: 'totp_disable_failed', actor: user.username, actorId: user.id, clientIp: actor.clientIp ?? '' });
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

  // ---------------------------------------------------------------- users

  listUsers(): UserRecord[] {
    return this.users.list().map((u) => this.toUserRecord(u));
  }

  getUser(id: string): UserRecord {
    return this.userVersion(id).record;
  }

  /**
   * An account as served, with what its entity tag is made of: the record and the password hash, so a new
   * password alone changes the tag (the hash itself never leaves the service).
   */
  userVersion(id: string): { record: UserRecord; version: unknown } {
    const user = this.users.byId(id);
    if (!user) throw notFound(`user ${id} not found`);
    const record = this.toUserRecord(user);
    return { record, version: [record, user.password_hash] };
  }

  async createUser(input: { username: string; password: string; email?: string; role?: string }, actor: Actor): Promise<UserRecord> {
    this.assertUsername(input.username);
    const role = this.roles.assignable(input.role ?? 'viewer');
    assertPasswordPolicy(input.password, this.settings().password_min_length);
    if (this.users.byUsername(input.username)) throw conflict(`user "${input.username}" already exists`);
    const user = this.users.insert({ username: input.username, passwordHash: await hashPassword(input.password), email: input.email, roleId: role.id });
    this.recordChange('user_created', actor, user.id, `${user.username} as ${role.name}`);
    return this.toUserRecord(user);
  }

  /**
   * `expect` is the caller's precondition (If-Match), given the account's version as `userVersion` makes it; it
   * runs in the same synchronous step as the write, after the password is hashed, so nothing slips between.
   */
  async updateUser(id: string, patch: UserPatch, actor: Actor, expect?: VersionCheck): Promise<UserRecord> {
    // judged before the ~300 ms hash (a refusal costs nothing) and again after it, with the write
    this.assertUpdatable(id, patch, actor);
    const passwordHash = patch.password !== undefined ? await hashPassword(patch.password) : undefined;
    const { user, role } = this.assertUpdatable(id, patch, actor);
    expect?.(this.userVersion(id).version);
    const updated = this.users.update(id, {
      username: patch.username,
      email: patch.email,
      role_id: role?.id,
      enabled: patch.enabled === undefined ? undefined : Number(patch.enabled),
      password_hash: passwordHash,
    });
    // Changes take effect at once: a disabled account or a new password ends the sessions (other than the
    // caller's own), a new role or name makes every access token of the user refresh.
    if (patch.enabled === false) this.sessions.revokeAllOf(id);
    if (patch.password !== undefined) this.revokeOtherSessions(id, actor);
    if (role || patch.username !== undefined) this.sessions.invalidateTokensOf([id]);
    this.streams.recheck();
    this.recordChange('user_updated', actor, user.id, Object.keys(patch).filter((k) => k !== 'password').concat(patch.password ? ['password'] : []).join(', '));
    return this.toUserRecord(updated);
  }

  private assertUpdatable(id: string, patch: UserPatch, actor: Actor) {
    const user = this.users.byId(id);
    if (!user) throw notFound(`user ${id} not found`);
    if (user.auth_provider === SYSTEM_PROVIDER) throw badRequest('the service account cannot be changed');
    const role = patch.role !== undefined ? this.roles.assignable(patch.role) : undefined;
    if (patch.username !== undefined && patch.username.toLowerCase() !== user.username.toLowerCase()) {
      this.assertUsername(patch.username);
      if (this.users.byUsername(patch.username)) throw conflict(`user "${patch.username}" already exists`);
    }
    if (patch.password !== undefined) assertPasswordPolicy(patch.password, this.settings().password_min_length);
    if (patch.enabled === false && actor.identity?.userId === id) throw badRequest('body.enabled: you cannot disable your own account');
    return { user, role };
  }

  deleteUser(id: string, actor: Actor, expect?: VersionCheck): void {
    const { version } = this.userVersion(id);
    const user = this.users.byId(id)!;
    // A signed-in person cannot delete themselves; an API key may delete its owner (and dies with it), which
    // is how the last account is removed to return the appliance to first boot.
    if (actor.identity?.credential === 'session' && actor.identity.userId === id) throw badRequest('you cannot delete your own account');
    if (user.auth_provider === SYSTEM_PROVIDER) throw badRequest('the service account cannot be deleted');
    expect?.(version);
    this.sessions.revokeAllOf(id);
    this.users.remove(id);
    this.apiKeys.reload();
    this.streams.recheck();
    this.recordChange('user_deleted', actor, id, user.username);
  }

  toUserRecord(user: UserRow): UserRecord {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      role: this.roles.byId(user.role_id)?.name ?? 'none',
      role_id: user.role_id,
      enabled: user.enabled === 1,
      totp_enabled: user.totp_enabled === 1,
      auth_provider: user.auth_provider,
      created_at: user.created_at,
      updated_at: user.updated_at,
    };
  }

  private assertUsername(username: string): void {
    if (!/^[^\s\p{C}]{1,128}$/u.test(username)) throw badRequest('body.username must be 1-128 characters without spaces or control characters');
    if (username.toLowerCase() === SERVICE_ACCOUNT || username.toLowerCase() === FLEET_AGENT_ACCOUNT) throw badRequest(`body.username "${username}" is reserved`);
  }

  /** A new password ends every session of the account except the one that changed it. */
  private revokeOtherSessions(userId: string, actor: Actor): void {
    const own = actor.identity?.credential === 'session' && actor.identity.userId === userId ? actor.identity.credentialId : undefined;
    this.sessions.revokeAllOf(userId, own);
  }

  // ---------------------------------------------------------------- roles

  createRole(input: { name: string; permissions: string[]; description?: string | null }, actor: Actor) {
    const role = this.roles.create(input);
    this.recordChange('role_created', actor, role.id, `${role.name}: ${role.permissions.join(' ')}`);
    return role;
  }

  /** A custom role, and the version its entity tag is made of. */
  roleVersion(id: string): { record: RoleRecord; version: unknown } {
    const record = this.roles.byId(id);
    if (!record) throw notFound(`role ${id} not found`);
    return { record, version: record };
  }

  updateRole(id: string, patch: { name?: string; permissions?: string[]; description?: string | null }, actor: Actor, expect?: VersionCheck) {
    expect?.(this.roleVersion(id).version);
    const role = this.roles.update(id, patch);
    this.sessions.invalidateTokensOf(this.users.withRole(id).map((u) => u.id));
    this.streams.recheck();
    this.recordChange('role_updated', actor, id, `${role.name}: ${role.permissions.join(' ')}`);
    return role;
  }

  deleteRole(id: string, actor: Actor, expect?: VersionCheck): void {
    expect?.(this.roleVersion(id).version);
    const role = this.roles.remove(id);
    this.recordChange('role_deleted', actor, id, role.name);
  }

  // ---------------------------------------------------------------- API keys

  createApiKey(input: { name: string; permissions: string[]; expires_at?: string }, actor: Actor): ApiKeyRecord & { key: string } {
    const identity = actor.identity!;
    const name = input.name.trim();
    if (!name) throw badRequest('body.name must not be blank');
    if (RESERVED_KEY_NAMES.some((reserved) => name.toLowerCase().startsWith(reserved))) throw badRequest(`body.name "${name}" is reserved`);
    const permissions = normalisePermissions(input.permissions);
    const beyond = permissions.filter((p) => !identity.permissions.has(p));
    if (beyond.length > 0) throw forbidden(`a key cannot hold permissions its creator lacks: ${beyond.join(', ')}`);
    let expiresAt: string | null = null;
    if (input.expires_at !== undefined) {
      const time = Date.parse(input.expires_at);
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]00:?00)$/.test(input.expires_at) || Number.isNaN(time)) {
        throw badRequest('body.expires_at must be an ISO 8601 UTC timestamp, e.g. 2027-01-01T00:00:00Z');
      }
      if (time <= this.context.clock.now()) throw badRequest('body.expires_at must be in the future');
      expiresAt = isoTime(time);
    }
    const { record, key } = this.apiKeys.create({ name, permissions, ownerId: identity.userId, createdBy: identity.username, expiresAt });
    this.recordChange('api_key_created', actor, record.id, `${name}: ${permissions.join(' ')}`);
    return { ...record, key };
  }

  revokeApiKey(id: string, actor: Actor): void {
    const record = this.apiKeys.remove(id);
    this.streams.recheck();
    this.recordChange('api_key_revoked', actor, id, record.name);
  }

  // ---------------------------------------------------------------- tickets and settings

  issueTicket(actor: Actor): { ticket: string; expires_in_seconds: number } {
    const identity = actor.identity!;
    if (identity.credential !== 'session') throw forbidden('tickets are issued to Bearer JWT sessions only');
    return { ticket: this.tickets.issue(identity), expires_in_seconds: 30 };
  }

  updateSettings(patch: Record<string, unknown>, actor: Actor): AuthSettings {
    if (patch.require_totp === true && !this.settings().require_totp) {
      const caller = actor.identity ? this.users.byId(actor.identity.userId) : undefined;
      if (!caller?.totp_enabled) throw badRequest('body.require_totp: enrol TOTP on your own account before requiring it for everyone');
    }
    const settings = this.settingsSection.write(patch);
    this.recordChange('auth_settings_updated', actor, null, Object.keys(patch).join(', '));
    return settings;
  }

  me(actor: Actor) {
    const identity = actor.identity!;
    const user = this.users.byId(identity.userId);
    if (!user) throw notFound('account no longer exists');
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      role: identity.role ?? this.roles.byId(user.role_id)?.name ?? null,
      role_id: user.role_id,
      credential: identity.credential,
      permissions: [...identity.permissions],
      totp_enabled: user.totp_enabled === 1,
      auth_provider: user.auth_provider,
    };
  }

  // ---------------------------------------------------------------- service account

  /** The locked daemon service account and its loopback key (ha:manage only), created on first start. */
  private ensureServiceAccount(): void {
    let account = this.users.byUsername(SERVICE_ACCOUNT);
    account ??= this.users.insert({ username: SERVICE_ACCOUNT, passwordHash: null, roleId: builtinRoleId('system'), authProvider: SYSTEM_PROVIDER });
    if (this.apiKeys.list().some((k) => k.name === DAEMON_KEY_NAME)) return;
    const { key } = this.apiKeys.create({ name: DAEMON_KEY_NAME, permissions: ['ha:manage'], ownerId: account.id, createdBy: SERVICE_ACCOUNT, expiresAt: null });
    writeFileSync(join(this.context.config.dataDir, 'daemon-api.key'), key + '\n', { mode: 0o600 });
  }

  /**
   * The locked account (no password, no sign-in; the operator role) that owns the fleet agent's key after an
   * enrolment at start, when no person enrolled the appliance. Created on first use; its id.
   */
  fleetAgentOwner(): string {
    const account = this.users.byUsername(FLEET_AGENT_ACCOUNT)
      ?? this.users.insert({ username: FLEET_AGENT_ACCOUNT, passwordHash: null, roleId: builtinRoleId('operator'), authProvider: SYSTEM_PROVIDER });
    return account.id;
  }

  private personOf(actor: Actor): UserRow {
    const identity = actor.identity!;
    if (identity.credential !== 'session') throw badRequest('TOTP is managed from a signed-in session, not with an API key');
    const user = this.users.byId(identity.userId);
    if (!user) throw notFound('account no longer exists');
    return user;
  }

  private recordChange(action: string, actor: Actor, targetId: string | null, details: string): void {
    this.audit.record({ action, outcome: 'success', actor: actor.identity?.username ?? null, actorId: actor.identity?.userId ?? null, targetId, clientIp: actor.clientIp, details });
  }
}

/**
 * Login failures are counted per (client address, username) with the configured maximum, so one person's typos
 * lock only themselves out; the address as a whole may fail ten times as often (many people behind one NAT).
 * One username, from anywhere, may fail four times as often before every attempt on it is slowed: that counter
 * never blocks, because anyone can drive it up and would otherwise lock the owner out from everywhere.
 */
const LIMIT_CEILINGS: Record<string, number> = { 'ip:': 10, 'user:': 4 };
const SLOWING_PREFIXES = new Set(['user:']);
/** The wait of every login attempt on a username past its ceiling (see slowIfTargeted). */
export const TARGETED_LOGIN_DELAY_MS = 2000;

const prefixOf = (key: string): string => key.slice(0, key.indexOf(':') + 1);

function ceilingFactor(key: string): number {
  return LIMIT_CEILINGS[prefixOf(key)] ?? 1;
}

/** A limiter key without the attempted username it carries (for names that are no account). */
function withoutName(key: string): string {
  if (key.startsWith('ipuser:')) return key.slice(0, key.lastIndexOf('|'));
  if (key.startsWith('user:')) return 'user:';
  return key;
}

function onLimitOf(key: string): 'block' | 'slow' {
  return SLOWING_PREFIXES.has(prefixOf(key)) ? 'slow' : 'block';
}

function loginLimitKeys(clientIp: string, username: string): string[] {
  const name = username.toLowerCase();
  return [`ip:${clientIp}`, `ipuser:${clientIp}|${name}`, `user:${name}`];
}
