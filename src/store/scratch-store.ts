import Database from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { ConfigStore, type ConfigObject } from './config-store.js';
import { migrate } from './database.js';
import { MIGRATIONS } from './migrations.js';

/**
 * A configuration store of its own in memory, holding a candidate configuration (an import, a restore) so the
 * model checks it with the same validators as the live one, before anything is written.
 */
export function scratchStore(objects: readonly ConfigObject[], clock: Clock): { store: ConfigStore; close(): void } {
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS.filter((m) => m.version === 1));
  const store = new ConfigStore(db, clock);
  store.replaceAll(objects);
  return { store, close: () => db.close() };
}
