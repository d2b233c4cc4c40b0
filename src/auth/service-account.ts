import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiKeys } from './api-keys.js';
import { builtinRoleId } from './roles.js';
import { SYSTEM_PROVIDER, type Users } from './users.js';

export const SERVICE_ACCOUNT = 'bulwark-daemon';
export const DAEMON_KEY_NAME = 'daemon-loopback';

/** The locked daemon service account and its loopback key (ha:manage only), created on first start. */
export function ensureServiceAccount(users: Users, apiKeys: ApiKeys, dataDir: string): void {
  let account = users.byUsername(SERVICE_ACCOUNT);
  account ??= users.insert({ username: SERVICE_ACCOUNT, passwordHash: null, roleId: builtinRoleId('system'), authProvider: SYSTEM_PROVIDER });
  if (apiKeys.list().some((k) => k.name === DAEMON_KEY_NAME)) return;
  const { key } = apiKeys.create({ name: DAEMON_KEY_NAME, permissions: ['ha:manage'], ownerId: account.id, createdBy: SERVICE_ACCOUNT, expiresAt: null });
  writeFileSync(join(dataDir, 'daemon-api.key'), key + '\n', { mode: 0o600 });
}
