import type { Db } from '../../store/database.js';
import type { Clock } from '../../core/clock.js';
import { isoTime } from '../../core/clock.js';

export interface IdentityLink {
  provider_id: string;
  subject: string;
  user_id: string;
  email: string | null;
  created_at: string;
  last_login_at: string | null;
}

/**
 * SQL for oauth_identities: which local account a (provider, subject) pair signs in as. Keyed by the provider's
 * id, so renaming a provider keeps its links; a link dies with its account (foreign key). Links of a deleted
 * provider stay dormant, so restoring a configuration that brings the provider back restores its sign-ins.
 */
export class IdentityLinks {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  find(providerId: string, subject: string): IdentityLink | undefined {
    return this.db.prepare('SELECT * FROM oauth_identities WHERE provider_id = ? AND subject = ?').get(providerId, subject) as IdentityLink | undefined;
  }

  link(providerId: string, subject: string, userId: string, email: string | null): void {
    const now = isoTime(this.clock.now());
    this.db
      .prepare('INSERT INTO oauth_identities (provider_id, subject, user_id, email, created_at, last_login_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(providerId, subject, userId, email, now, now);
  }

  touch(providerId: string, subject: string, email: string | null): void {
    this.db
      .prepare('UPDATE oauth_identities SET last_login_at = ?, email = ? WHERE provider_id = ? AND subject = ?')
      .run(isoTime(this.clock.now()), email, providerId, subject);
  }

  ofUser(userId: string): IdentityLink[] {
    return this.db.prepare('SELECT * FROM oauth_identities WHERE user_id = ? ORDER BY created_at').all(userId) as IdentityLink[];
  }
}
