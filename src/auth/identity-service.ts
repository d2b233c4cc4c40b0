import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { loadOrCreateKeyFile } from '../core/crypto.js';
import { badRequest, forbidden, unauthorized } from '../core/errors.js';
import type { Permission } from '../core/permissions.js';
import type { Authenticator, Identity } from '../http/access.js';
import type { SingletonModel } from '../model/singleton-model.js';
import type { ConfigData } from '../store/config-store.js';
import { StreamRegistry } from '../live/stream-registry.js';
import { Accounts } from './accounts.js';
import { recordChange, type Actor } from './actor.js';
import { ApiKeyIssuer } from './api-key-issuer.js';
import { ApiKeys } from './api-keys.js';
import { AuthAudit } from './audit.js';
import { ACCESS_COOKIE, assertCsrfHeader, readCookie } from './cookies.js';
import { LoginGuard } from './login-limits.js';
import { OneShotStore } from './one-shot-store.js';
import { RoleAdmin } from './role-admin.js';
import { Roles } from './roles.js';
import { SecondFactor } from './second-factor.js';
import { ensureServiceAccount, fleetAgentOwner } from './service-account.js';
import { Sessions } from './sessions.js';
import { SignIn } from './sign-in.js';
import { SSO_SETTINGS_KIND } from './sso/sso-settings.js';
import { AUTH_SETTINGS_KIND, AuthSettingsSchema, type AuthSettings } from './settings.js';
import { AccessTokens } from './tokens.js';
import { Users, type UserRow } from './users.js';

// Callers name these from here: the identity service is the auth module's front door.
export { actorOf, type Actor, type VersionCheck } from './actor.js';
export type { UserPatch, UserRecord } from './accounts.js';
export { DAEMON_KEY_NAME, FLEET_AGENT_ACCOUNT, SERVICE_ACCOUNT } from './service-account.js';
export type { LoginResult, TokenPair } from './sign-in.js';

/**
 * Who a caller is and what they may do. This class authenticates every request (a session's access token, an
 * API key, a stream ticket or the browser's cookie) and owns the stores; each concern lives in its own part:
 * accounts, roles, API keys, sign-in (sessions and access tokens), the second factor and the lockout guard.
 * The routes only translate HTTP.
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
  readonly accounts: Accounts;
  readonly roleAdmin: RoleAdmin;
  readonly keyIssuer: ApiKeyIssuer;
  readonly signIn: SignIn;
  readonly secondFactor: SecondFactor;
  private readonly tokens: AccessTokens;

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
    const settings = () => this.settings();
    const guard = new LoginGuard(context, this.users, this.audit, settings);
    this.tokens = new AccessTokens(loadOrCreateKeyFile(join(config.dataDir, 'jwt.key')), clock);
    this.secondFactor = new SecondFactor(context, this.users, this.audit, guard);
    const { users, roles, sessions, apiKeys, audit, streams } = this;
    this.accounts = new Accounts(context, { users, roles, sessions, apiKeys, audit, streams, settings });
    this.roleAdmin = new RoleAdmin({ roles, users, sessions, audit, streams });
    this.keyIssuer = new ApiKeyIssuer(clock, apiKeys, audit, streams);
    this.signIn = new SignIn({
      users, roles, sessions, audit, streams, guard, settings,
      secondFactor: this.secondFactor,
      tokens: this.tokens,
      totpChallenges: new OneShotStore(clock, 5 * 60_000),
    });
    ensureServiceAccount(users, apiKeys, config.dataDir);
  }

  /** The single sign-on public URL (see the SSO settings), which also decides whether cookies are Secure. */
  /** The locked account that owns the fleet agent's key after an enrolment at start (service-account.ts). */
  fleetAgentOwner(): string {
    return fleetAgentOwner(this.users);
  }

  publicUrl(): string {
    const value = this.context.store.getSingleton(SSO_SETTINGS_KIND)?.public_url;
    return typeof value === 'string' ? value : '';
  }

  /** True until the first account is registered: whoever calls POST /auth/register first owns the appliance. */
  awaitingFirstAccount(): boolean {
    return this.users.countPeople() === 0;
  }

  /** First boot: no person has an account yet, so POST /auth/register is open (the sign-in page offers it). */
  registrationOpen(): boolean {
    return this.users.countPeople() === 0;
  }

  settings(): AuthSettings {
    return this.settingsSection.read();
  }

  updateSettings(patch: Record<string, unknown>, actor: Actor): AuthSettings {
    if (patch.require_totp === true && !this.settings().require_totp) {
      const caller = actor.identity ? this.users.byId(actor.identity.userId) : undefined;
      if (!caller?.totp_enabled) throw badRequest('body.require_totp: enrol TOTP on your own account before requiring it for everyone');
    }
    const settings = this.settingsSection.write(patch);
    recordChange(this.audit, 'auth_settings_updated', actor, null, Object.keys(patch).join(', '));
    return settings;
  }

  issueTicket(actor: Actor): { ticket: string; expires_in_seconds: number } {
    const identity = actor.identity!;
    if (identity.credential !== 'session') throw forbidden('tickets are issued to Bearer JWT sessions only');
    return { ticket: this.tickets.issue(identity), expires_in_seconds: 30 };
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
}
