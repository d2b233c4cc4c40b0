import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../store/database.js';
import { ConfigStore } from '../../store/config-store.js';
import { systemClock } from '../../core/clock.js';
import { storedTrustedProxies } from './service.js';

/**
 * The trusted proxies saved in the api_server settings section (PUT /settings/api_server), read before the
 * server is built: a change there applies at the next restart. Flags and environment variables win.
 */
export function trustedProxiesFromSettings(dataDir: string): string[] {
  if (!existsSync(join(dataDir, 'bulwark.db'))) return [];
  const db = openDatabase(dataDir);
  try {
    return storedTrustedProxies({ store: new ConfigStore(db, systemClock) });
  } finally {
    db.close();
  }
}
