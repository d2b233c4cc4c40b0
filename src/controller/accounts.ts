import { BUILTIN_ROLES, type Permission } from '../core/permissions.js';
import { assertPasswordPolicy, hashPassword, verifyPassword } from '../auth/passwords.js';
import { randomHex, sha256Hex } from '../core/crypto.js';
import { badRequest, conflict, forbidden, unauthorized } from '../core/errors.js';
import { inTransaction, LOCKS, type Pool } from './database.js';

/** The roles a controller account may hold: the appliance's built-in roles for people (src/core/permissions.ts). */
export const ACCOUNT_ROLES = ['admin', 'operator', 'viewer'] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

export interface ControllerIdentity {
  accountId: string;
  username: string;
  role: AccountRole;
}

const SESSION_HOURS = 12;
const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;

/** What a role grants, by the appliance's own table of built-in roles. */
export const roleAllows = (role: AccountRole, permission: Permission): boolean => BUILTIN_ROLES[role].includes(permission);

/** Controller accounts and bearer sessions, all in PostgreSQL (several controller processes share them). */
export class Accounts {
  constructor(private readonly pool: Pool) {}

  async count(): Promise<number> {
    return Number((await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM accounts')).rows[0].n);
  }

  /** The first account, an admin; refused once any account exists (one wins when several race). */
  async registerFirst(username: string, password: string): Promise<{ id: string; username: string; role: AccountRole }> {
    this.checkInput(username, password);
    const hash = await hashPassword(password);
    return inTransaction(this.pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', LOCKS.firstAccount);
      const existing = await client.query('SELECT 1 FROM accounts LIMIT 1');
      if (existing.rowCount) throw forbidden('registration is closed: an account exists; sign in and create accounts with POST /api/v1/accounts');
      const row = await client.query<{ id: string }>("INSERT INTO accounts (username, password_hash, role) VALUES ($1, $2, 'admin') RETURNING id", [username, hash]);
      return { id: row.rows[0].id, username, role: 'admin' as const };
    });
  }

  async create(username: string, password: string, role: string): Promise<{ id: string; username: string; role: AccountRole }> {
    this.checkInput(username, password);
    if (!(ACCOUNT_ROLES as readonly string[]).includes(role)) throw badRequest(`body.role must be one of ${ACCOUNT_ROLES.join(', ')}`);
    const hash = await hashPassword(password);
    const row = await this.pool
      .query<{ id: string }>('INSERT INTO accounts (username, password_hash, role) VALUES ($1, $2, $3) ON CONFLICT (username) DO NOTHING RETURNING id', [username, hash, role]);
    if (!row.rowCount) throw conflict(`account "${username}" already exists`);
    return { id: row.rows[0].id, username, role: role as AccountRole };
  }

  async list(): Promise<{ id: string; username: string; role: AccountRole; created_at: string }[]> {
    const rows = await this.pool.query('SELECT id, username, role, created_at FROM accounts ORDER BY username');
    return rows.rows.map((row) => ({ ...row, created_at: new Date(row.created_at).toISOString() }));
  }

  /** A session token for a correct password (stored as its hash only). */
  async login(username: string, password: string): Promise<{ token: string; expires_at: string; role: AccountRole }> {
    const found = await this.pool.query<{ id: string; password_hash: string; role: AccountRole }>('SELECT id, password_hash, role FROM accounts WHERE username = $1', [username]);
    const account = found.rows[0];
    if (!(await verifyPassword(account?.password_hash, password)) || !account) throw unauthorized('wrong username or password');
    const token = `bwc_${randomHex(32)}`;
    const expires = new Date(Date.now() + SESSION_HOURS * 3_600_000);
    await this.pool.query('INSERT INTO sessions (token_hash, account_id, expires_at) VALUES ($1, $2, $3)', [sha256Hex(token), account.id, expires]);
    return { token, expires_at: expires.toISOString(), role: account.role };
  }

  async logout(token: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE token_hash = $1', [sha256Hex(token)]);
  }

  /** The account behind a bearer token, read from PostgreSQL on every request (no session lives in memory). */
  async identify(token: string): Promise<ControllerIdentity | null> {
    const found = await this.pool.query<{ account_id: string; username: string; role: AccountRole }>(
      `SELECT s.account_id, a.username, a.role FROM sessions s JOIN accounts a ON a.id = s.account_id
        WHERE s.token_hash = $1 AND s.expires_at > now()`,
      [sha256Hex(token)],
    );
    const row = found.rows[0];
    return row ? { accountId: row.account_id, username: row.username, role: row.role } : null;
  }

  private checkInput(username: string, password: string): void {
    if (!USERNAME.test(username)) throw badRequest('body.username must be 1-64 letters, digits or ._@-');
    assertPasswordPolicy(password, 12);
  }
}
