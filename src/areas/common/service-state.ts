import type { Db } from '../../store/database.js';
import type { Clock } from '../../core/clock.js';
import { isoTime } from '../../core/clock.js';

/**
 * Small operational state of the services (last apply, pending flags, last check): not configuration, so it
 * is not versioned with it, but it survives a restart.
 */
export class ServiceState {
  private readonly read;
  private readonly write;

  constructor(db: Db, private readonly clock: Clock) {
    this.read = db.prepare('SELECT data FROM service_state WHERE name = ?');
    this.write = db.prepare(
      'INSERT INTO service_state (name, data, updated_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
    );
  }

  get<T extends object>(name: string, fallback: T): T {
    const row = this.read.get(name) as { data: string } | undefined;
    return row ? { ...fallback, ...(JSON.parse(row.data) as T) } : { ...fallback };
  }

  set<T extends object>(name: string, data: T): T {
    this.write.run(name, JSON.stringify(data), isoTime(this.clock.now()));
    return data;
  }

  patch<T extends object>(name: string, fallback: T, patch: Partial<T>): T {
    return this.set(name, { ...this.get(name, fallback), ...patch });
  }
}
