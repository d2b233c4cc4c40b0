import Database from 'better-sqlite3';
import { join } from 'node:path';
import { MIGRATIONS, type Migration } from './migrations.js';
import { restrictDataDirectory } from './private-files.js';

export type Db = Database.Database;

/** Opens (creating on first start) the embedded store with WAL and foreign keys, then migrates it. */
export function openDatabase(dataDir: string, migrations: Migration[] = MIGRATIONS): Db {
  restrictDataDirectory(dataDir);
  const db = new Database(join(dataDir, 'bulwark.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, migrations);
  return db;
}

/** Applies every pending migration in one transaction: either all land or none does. */
export function migrate(db: Db, migrations: Migration[]): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const pending = [...migrations].sort((a, b) => a.version - b.version).filter((m) => !applied.has(m.version));
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const migration of pending) {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
    }
  })();
  return pending.map((m) => m.version);
}
