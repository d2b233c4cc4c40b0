import type { Db } from '../store/database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { newId } from '../core/ids.js';
import { randomHex, sha256Hex } from '../core/crypto.js';
import type { Permission } from '../core/permissions.js';
import { conflict, notFound } from '../core/errors.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  permissions: Permission[];
  owner_id: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

interface ApiKeyRow extends ApiKeyRecord {
  key_hash: string;
}

const KEY_PREFIX = 'bwk_';
/** last_used_at is written at most this often per key, so authenticating is not a database write. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * API keys carry their own permission set. The secret (256 random bits) is shown once and stored as a
 * SHA-256 hash; live keys are mirrored in memory by hash so authenticating a request is a map lookup.
 */
export class ApiKeys {
  private readonly byHash = new Map<string, ApiKeyRecord & { lastUsedWritten: number }>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.reload();
  }

  list(): ApiKeyRecord[] {
    return (this.db.prepare('SELECT * FROM api_keys ORDER BY created_at, name').all() as ApiKeyRow[]).map(toRecord);
  }

  create(input: { name: string; permissions: Permission[]; ownerId: string; createdBy: string | null; expiresAt: string | null }): { record: ApiKeyRecord; key: string } {
    const exists = this.db.prepare('SELECT 1 FROM api_keys WHERE name = ?').get(input.name);
    if (exists) throw conflict(`API key "${input.name}" already exists`);
    const key = KEY_PREFIX + randomHex(32);
    const id = newId();
    this.db
      .prepare(
        'INSERT INTO api_keys (id, name, prefix, key_hash, permissions, owner_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(id, input.name, key.slice(0, 12), sha256Hex(key), JSON.stringify(input.permissions), input.ownerId, input.createdBy, isoTime(this.clock.now()), input.expiresAt);
    this.reload();
    return { record: this.list().find((k) => k.id === id)!, key };
  }

  remove(id: string): ApiKeyRecord {
    const record = this.list().find((k) => k.id === id);
    if (!record) throw notFound(`API key ${id} not found`);
    this.db.prepare('DELETE FROM api_keys WHERE id = ?').run(id);
    this.reload();
    return record;
  }

  /** The key for a presented secret, if it exists and has not expired. */
  resolve(secret: string): ApiKeyRecord | undefined {
    if (!secret.startsWith(KEY_PREFIX)) return undefined;
    const entry = this.byHash.get(sha256Hex(secret));
    if (!entry) return undefined;
    const now = this.clock.now();
    if (entry.expires_at && Date.parse(entry.expires_at) <= now) return undefined;
    if (now - entry.lastUsedWritten >= LAST_USED_RESOLUTION_MS) {
      entry.lastUsedWritten = now;
      entry.last_used_at = isoTime(now);
      this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(entry.last_used_at, entry.id);
    }
    return entry;
  }

  /** A key that still exists and has not expired, by id (open streams are checked against it). */
  liveById(id: string): ApiKeyRecord | undefined {
    const now = this.clock.now();
    for (const entry of this.byHash.values()) {
      if (entry.id === id) return entry.expires_at && Date.parse(entry.expires_at) <= now ? undefined : entry;
    }
    return undefined;
  }

  /** Call after users are deleted (their keys go with them through the foreign key). */
  reload(): void {
    this.byHash.clear();
    for (const row of this.db.prepare('SELECT * FROM api_keys').all() as ApiKeyRow[]) {
      this.byHash.set(row.key_hash, { ...toRecord(row), lastUsedWritten: 0 });
    }
  }
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    permissions: typeof row.permissions === 'string' ? (JSON.parse(row.permissions) as Permission[]) : row.permissions,
    owner_id: row.owner_id,
    created_by: row.created_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
  };
}
