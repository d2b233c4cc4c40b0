import type { Db } from '../store/database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { newId } from '../core/ids.js';

export interface UserRow {
  id: string;
  username: string;
  password_hash: string | null;
  email: string | null;
  role_id: string;
  auth_provider: string;
  enabled: number;
  totp_secret: string | null;
  totp_pending: string | null;
  totp_enabled: number;
  totp_last_step: number;
  created_at: string;
  updated_at: string;
}

export const SYSTEM_PROVIDER = 'system';

const UPDATABLE = new Set([
  'username', 'password_hash', 'email', 'role_id', 'auth_provider', 'enabled',
  'totp_secret', 'totp_pending', 'totp_enabled', 'totp_last_step',
]);

/**
 * SQL for the users table and nothing else. Every authenticated request reads its account by id, so rows read
 * outside a transaction are kept in memory (frozen) until this class writes them; this process is the only
 * writer. Rows read inside a transaction are not kept: it may still roll back.
 */
export class Users {
  private readonly selectById;
  private readonly rows = new Map<string, Readonly<UserRow>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.selectById = db.prepare('SELECT * FROM users WHERE id = ?');
  }

  byId(id: string): Readonly<UserRow> | undefined {
    const inTransaction = this.db.inTransaction;
    const kept = inTransaction ? undefined : this.rows.get(id);
    if (kept) return kept;
    const row = this.selectById.get(id) as UserRow | undefined;
    if (row && !inTransaction) this.rows.set(id, Object.freeze(row));
    return row;
  }

  byUsername(username: string): UserRow | undefined {
    return this.db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
  }

  list(): UserRow[] {
    return this.db.prepare('SELECT * FROM users ORDER BY created_at, username').all() as UserRow[];
  }

  /** Accounts of people: the locked daemon service account does not count. */
  countPeople(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM users WHERE auth_provider != ?').get(SYSTEM_PROVIDER) as { n: number }).n;
  }

  withRole(roleId: string): UserRow[] {
    return this.db.prepare('SELECT * FROM users WHERE role_id = ?').all(roleId) as UserRow[];
  }

  insert(input: { username: string; passwordHash: string | null; email?: string | null; roleId: string; authProvider?: string }): UserRow {
    const now = isoTime(this.clock.now());
    const id = newId();
    this.db
      .prepare(
        'INSERT INTO users (id, username, password_hash, email, role_id, auth_provider, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, input.username, input.passwordHash, input.email ?? null, input.roleId, input.authProvider ?? 'local', now, now);
    return this.byId(id)!;
  }

  /** Updates the given columns; column names come from a fixed list, values are parameters. */
  update(id: string, columns: Partial<Omit<UserRow, 'id' | 'created_at' | 'updated_at'>>): UserRow {
    const entries = Object.entries(columns).filter(([, value]) => value !== undefined);
    for (const [column] of entries) if (!UPDATABLE.has(column)) throw new Error(`users.${column} is not updatable`);
    const assignments = [...entries.map(([column]) => `${column} = ?`), 'updated_at = ?'].join(', ');
    this.rows.delete(id);
    this.db.prepare(`UPDATE users SET ${assignments} WHERE id = ?`).run(...entries.map(([, v]) => v), isoTime(this.clock.now()), id);
    return this.byId(id)!;
  }

  remove(id: string): void {
    this.rows.delete(id);
    this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
  }
}
