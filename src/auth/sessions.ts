import type { Db } from '../store/database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { newId } from '../core/ids.js';
import { randomHex, sha256Hex } from '../core/crypto.js';

interface LiveSession {
  userId: string;
  generation: number;
  expiresAt: number;
}

export type RefreshOutcome =
  | { ok: true; sessionId: string; userId: string; token: string; expiresAt: number }
  | { ok: false; reason: 'unknown' | 'expired' | 'reused' };

const REFRESH_PREFIX = 'rfx_';

/** The non-secret part of a refresh token, used as its rate-limit key. */
export const refreshTokenPrefix = (token: string) => token.slice(0, REFRESH_PREFIX.length + 8);

/**
 * Sessions and their refresh tokens. Refresh tokens are 256-bit random values stored as SHA-256 hashes
 * (they are not guessable, so a slow hash would buy nothing), rotated on every use; presenting a rotated
 * token again revokes the whole session. Live sessions are mirrored in memory, so checking an access
 * token's session on every request is a map lookup.
 */
export class Sessions {
  private readonly live = new Map<string, LiveSession>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    const rows = db
      .prepare('SELECT id, user_id, generation, expires_at FROM sessions WHERE revoked_at IS NULL AND expires_at > ?')
      .all(clock.now()) as { id: string; user_id: string; generation: number; expires_at: number }[];
    for (const row of rows) this.live.set(row.id, { userId: row.user_id, generation: row.generation, expiresAt: row.expires_at });
  }

  /** Opens a session and returns its first refresh token. */
  open(userId: string, lifetimeMs: number, clientIp: string | null): { sessionId: string; token: string; expiresAt: number } {
    const sessionId = newId();
    const expiresAt = this.clock.now() + lifetimeMs;
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO sessions (id, user_id, generation, created_at, expires_at, client_ip) VALUES (?, ?, 0, ?, ?, ?)')
        .run(sessionId, userId, isoTime(this.clock.now()), expiresAt, clientIp);
    })();
    this.live.set(sessionId, { userId, generation: 0, expiresAt });
    const { token } = this.issueRefresh(sessionId, expiresAt);
    return { sessionId, token, expiresAt };
  }

  /** The live session an access token names, if it still exists and its generation matches. */
  check(sessionId: string, generation: number): LiveSession | undefined {
    const session = this.live.get(sessionId);
    if (!session || session.generation !== generation) return undefined;
    if (session.expiresAt <= this.clock.now()) {
      this.live.delete(sessionId);
      return undefined;
    }
    return session;
  }

  /** Whether a session is neither revoked nor expired (whatever its token generation). */
  isLive(sessionId: string): boolean {
    const session = this.live.get(sessionId);
    return session !== undefined && session.expiresAt > this.clock.now();
  }

  generationOf(sessionId: string): number {
    return this.live.get(sessionId)?.generation ?? 0;
  }

  /** Exchanges a refresh token for a new one in the same session. */
  rotate(token: string): RefreshOutcome {
    const hash = sha256Hex(token);
    return this.db.transaction((): RefreshOutcome => {
      const row = this.db
        .prepare(
          `SELECT r.session_id, r.used_at, r.expires_at, s.user_id, s.revoked_at, s.expires_at AS session_expires
           FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ?`,
        )
        .get(hash) as
        | { session_id: string; used_at: string | null; expires_at: number; user_id: string; revoked_at: string | null; session_expires: number }
        | undefined;
      if (!row || row.revoked_at) return { ok: false, reason: 'unknown' };
      if (row.used_at) {
        this.revoke(row.session_id);
        return { ok: false, reason: 'reused' };
      }
      if (row.expires_at <= this.clock.now()) return { ok: false, reason: 'expired' };
      this.db.prepare('UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ?').run(isoTime(this.clock.now()), hash);
      const next = this.issueRefresh(row.session_id, row.session_expires);
      return { ok: true, sessionId: row.session_id, userId: row.user_id, token: next.token, expiresAt: row.session_expires };
    })();
  }

  /** The session a refresh token belongs to, without using it (logout by refresh token). */
  sessionOfRefresh(token: string): string | undefined {
    const row = this.db.prepare('SELECT session_id FROM refresh_tokens WHERE token_hash = ?').get(sha256Hex(token)) as { session_id: string } | undefined;
    return row?.session_id;
  }

  revoke(sessionId: string): void {
    this.db.prepare('UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(isoTime(this.clock.now()), sessionId);
    this.live.delete(sessionId);
  }

  revokeAllOf(userId: string, exceptSessionId = ''): void {
    this.db
      .prepare('UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND id != ? AND revoked_at IS NULL')
      .run(isoTime(this.clock.now()), userId, exceptSessionId);
    for (const [id, session] of this.live) if (session.userId === userId && id !== exceptSessionId) this.live.delete(id);
  }

  /** The user's permissions changed: every access token of theirs stops working until refreshed. */
  invalidateTokensOf(userIds: readonly string[]): void {
    const ids = new Set(userIds);
    const bump = this.db.prepare('UPDATE sessions SET generation = generation + 1 WHERE id = ?');
    for (const [id, session] of this.live) {
      if (!ids.has(session.userId)) continue;
      bump.run(id);
      session.generation++;
    }
  }

  private issueRefresh(sessionId: string, expiresAt: number): { token: string } {
    const token = REFRESH_PREFIX + randomHex(32);
    this.db
      .prepare('INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .run(sha256Hex(token), sessionId, isoTime(this.clock.now()), expiresAt);
    return { token };
  }
}
