import type { AppContext } from '../context.js';
import { badRequest, conflict, forbidden, notFound } from '../core/errors.js';
import type { StreamRegistry } from '../live/stream-registry.js';
import { recordChange, type Actor, type VersionCheck } from './actor.js';
import type { ApiKeys } from './api-keys.js';
import type { AuthAudit } from './audit.js';
import { assertPasswordPolicy, hashPassword } from './passwords.js';
import { builtinRoleId, type Roles } from './roles.js';
import { FLEET_AGENT_ACCOUNT, SERVICE_ACCOUNT } from './service-account.js';
import type { Sessions } from './sessions.js';
import type { AuthSettings } from './settings.js';
import { SYSTEM_PROVIDER, type UserRow, type Users } from './users.js';

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

export type UserPatch = { username?: string; password?: string; email?: string | null; role?: string; enabled?: boolean };

/** People's accounts: the first registration, an administrator's changes, and one's own account (GET /auth/me). */
export class Accounts {
  constructor(
    private readonly context: AppContext,
    private readonly parts: {
      users: Users;
      roles: Roles;
      sessions: Sessions;
      apiKeys: ApiKeys;
      audit: AuthAudit;
      streams: StreamRegistry;
      settings: () => AuthSettings;
    },
  ) {}

  async register(input: { username: string; password: string; email?: string }, actor: Actor): Promise<UserRecord> {
    const { users, audit } = this.parts;
    const refuse = () => {
      audit.record({ action: 'register', outcome: 'failure', actor: null, clientIp: actor.clientIp, details: 'an account already exists' });
      return forbidden('registration is closed: an account already exists');
    };
    if (users.countPeople() > 0) throw refuse();
    assertPasswordPolicy(input.password, this.parts.settings().password_min_length);
    this.assertUsername(input.username);
    const passwordHash = await hashPassword(input.password);
    // The hash takes ~100 ms, during which other registrations may have landed: the count is checked again in
    // the same transaction as the insert, so exactly one of any number of concurrent registrations wins.
    const user = this.context.db.transaction(() => {
      if (users.countPeople() > 0) throw refuse();
      return users.insert({ username: input.username, passwordHash, email: input.email, roleId: builtinRoleId('admin') });
    }).immediate();
    audit.record({ action: 'register', outcome: 'success', actor: user.username, actorId: user.id, targetId: user.id, clientIp: actor.clientIp });
    return this.toUserRecord(user);
  }

  listUsers(): UserRecord[] {
    return this.parts.users.list().map((u) => this.toUserRecord(u));
  }

  getUser(id: string): UserRecord {
    return this.userVersion(id).record;
  }

  /**
   * An account as served, with what its entity tag is made of: the record and the password hash, so a new
   * password alone changes the tag (the hash itself never leaves the service).
   */
  userVersion(id: string): { record: UserRecord; version: unknown } {
    const user = this.parts.users.byId(id);
    if (!user) throw notFound(`user ${id} not found`);
    const record = this.toUserRecord(user);
    return { record, version: [record, user.password_hash] };
  }

  async createUser(input: { username: string; password: string; email?: string; role?: string }, actor: Actor): Promise<UserRecord> {
    const { users, roles } = this.parts;
    this.assertUsername(input.username);
    const role = roles.assignable(input.role ?? 'viewer');
    assertPasswordPolicy(input.password, this.parts.settings().password_min_length);
    if (users.byUsername(input.username)) throw conflict(`user "${input.username}" already exists`);
    const user = users.insert({ username: input.username, passwordHash: await hashPassword(input.password), email: input.email, roleId: role.id });
    recordChange(this.parts.audit, 'user_created', actor, user.id, `${user.username} as ${role.name}`);
    return this.toUserRecord(user);
  }

  /**
   * `expect` is the caller's precondition (If-Match), given the account's version as `userVersion` makes it; it
   * runs in the same synchronous step as the write, after the password is hashed, so nothing slips between.
   */
  async updateUser(id: string, patch: UserPatch, actor: Actor, expect?: VersionCheck): Promise<UserRecord> {
    const { users, sessions } = this.parts;
    // judged before the ~300 ms hash (a refusal costs nothing) and again after it, with the write
    this.assertUpdatable(id, patch, actor);
    const passwordHash = patch.password !== undefined ? await hashPassword(patch.password) : undefined;
    const { user, role } = this.assertUpdatable(id, patch, actor);
    expect?.(this.userVersion(id).version);
    const updated = users.update(id, {
      username: patch.username,
      email: patch.email,
      role_id: role?.id,
      enabled: patch.enabled === undefined ? undefined : Number(patch.enabled),
      password_hash: passwordHash,
    });
    // Changes take effect at once: a disabled account or a new password ends the sessions (other than the
    // caller's own), a new role or name makes every access token of the user refresh.
    if (patch.enabled === false) sessions.revokeAllOf(id);
    if (patch.password !== undefined) this.revokeOtherSessions(id, actor);
    if (role || patch.username !== undefined) sessions.invalidateTokensOf([id]);
    this.parts.streams.recheck();
    recordChange(this.parts.audit, 'user_updated', actor, user.id, Object.keys(patch).filter((k) => k !== 'password').concat(patch.password ? ['password'] : []).join(', '));
    return this.toUserRecord(updated);
  }

  private assertUpdatable(id: string, patch: UserPatch, actor: Actor) {
    const { users, roles } = this.parts;
    const user = users.byId(id);
    if (!user) throw notFound(`user ${id} not found`);
    if (user.auth_provider === SYSTEM_PROVIDER) throw badRequest('the service account cannot be changed');
    const role = patch.role !== undefined ? roles.assignable(patch.role) : undefined;
    if (patch.username !== undefined && patch.username.toLowerCase() !== user.username.toLowerCase()) {
      this.assertUsername(patch.username);
      if (users.byUsername(patch.username)) throw conflict(`user "${patch.username}" already exists`);
    }
    if (patch.password !== undefined) assertPasswordPolicy(patch.password, this.parts.settings().password_min_length);
    if (patch.enabled === false && actor.identity?.userId === id) throw badRequest('body.enabled: you cannot disable your own account');
    return { user, role };
  }

  deleteUser(id: string, actor: Actor, expect?: VersionCheck): void {
    const { version } = this.userVersion(id);
    const user = this.parts.users.byId(id)!;
    // A signed-in person cannot delete themselves; an API key may delete its owner (and dies with it), which
    // is how the last account is removed to return the appliance to first boot.
    if (actor.identity?.credential === 'session' && actor.identity.userId === id) throw badRequest('you cannot delete your own account');
    if (user.auth_provider === SYSTEM_PROVIDER) throw badRequest('the service account cannot be deleted');
    expect?.(version);
    this.parts.sessions.revokeAllOf(id);
    this.parts.users.remove(id);
    this.parts.apiKeys.reload();
    this.parts.streams.recheck();
    recordChange(this.parts.audit, 'user_deleted', actor, id, user.username);
  }

  toUserRecord(user: UserRow): UserRecord {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      role: this.parts.roles.byId(user.role_id)?.name ?? 'none',
      role_id: user.role_id,
      enabled: user.enabled === 1,
      totp_enabled: user.totp_enabled === 1,
      auth_provider: user.auth_provider,
      created_at: user.created_at,
      updated_at: user.updated_at,
    };
  }

  me(actor: Actor) {
    const identity = actor.identity!;
    const user = this.parts.users.byId(identity.userId);
    if (!user) throw notFound('account no longer exists');
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      role: identity.role ?? this.parts.roles.byId(user.role_id)?.name ?? null,
      role_id: user.role_id,
      credential: identity.credential,
      permissions: [...identity.permissions],
      totp_enabled: user.totp_enabled === 1,
      auth_provider: user.auth_provider,
    };
  }

  private assertUsername(username: string): void {
    if (!/^[^\s\p{C}]{1,128}$/u.test(username)) throw badRequest('body.username must be 1-128 characters without spaces or control characters');
    if (username.toLowerCase() === SERVICE_ACCOUNT || username.toLowerCase() === FLEET_AGENT_ACCOUNT) throw badRequest(`body.username "${username}" is reserved`);
  }

  /** A new password ends every session of the account except the one that changed it. */
  private revokeOtherSessions(userId: string, actor: Actor): void {
    const own = actor.identity?.credential === 'session' && actor.identity.userId === userId ? actor.identity.credentialId : undefined;
    this.parts.sessions.revokeAllOf(userId, own);
  }
}
