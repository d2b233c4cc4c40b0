import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files of the data directory that hold secrets or the store: readable by the service's own user only. */
const PRIVATE_FILE = /^(bulwark\.db(-wal|-shm|-journal)?|.*\.key)$/;

/**
 * Makes the data directory 0700 and the database (with its WAL and SHM files) and every key file 0600,
 * whatever an earlier version or a umask left behind. Called at every start, before the store is opened.
 */
export function restrictDataDirectory(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const database = join(dataDir, 'bulwark.db');
  // Created here with its mode, so SQLite (which gives its WAL and SHM files the database's mode) never makes a readable one.
  if (!existsSync(database)) closeSync(openSync(database, 'a', 0o600));
  for (const name of readdirSync(dataDir)) {
    if (PRIVATE_FILE.test(name)) chmodSync(join(dataDir, name), 0o600);
  }
}
