import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiKeys } from './api-keys.js';
import { builtinRoleId } from './roles.js';
import { SYSTEM_PROVIDER, type Users } from './users.js';

export const SERVICE_ACCOUNT = 'bulwark-daemon';
export const DAEMON_KEY_NAME = 'daemon-loopback';
/** The locked account that owns the fleet agent's key when the appliance enrolled at start, with no person signed in. */
export const FLEET_AGENT_ACCOUNT = 'bulwark-fleet-agent';

/** The locked daemon service account and its loopback key (ha:manage only), created on first start. */
export function ensureServiceAccount(users: Users, apiKeys: ApiKeys, dataDir: string): void {
  let account = users.byUsername(SERVICE_ACCOUNT);
  account ??= users.insert({ username: SERVICE_ACCOUNT, passwordHash: null, roleId: builtinRoleId('system'), authProvider: SYSTEM_PROVIDER });
  if (apiKeys.list().some((k) => k.name === DAEMON_KEY_NAME)) return;
  const { key } = apiKeys.create({ name: DAEMON_KEY_NAME, permissions: ['ha:manage'], ownerId: account.id, createdBy: SERVICE_ACCOUNT, expiresAt: null });
  writeFileSync(join(dataDir, 'daemon-api.key'), key + '\n', { mode: 0o600 });
}

/**
 * The locked account (no password, no sign-in; the operator role) that owns the fleet agent's key after an
 * enrolment at start, when no person enrolled the appliance. Created on first use; its id.
 */
export function fleetAgentOwner(users: Users): string {
  const account = users.byUsername(FLEET_AGENT_ACCOUNT)
    ?? users.insert({ username: FLEET_AGENT_ACCOUNT, passwordHash: null, roleId: builtinRoleId('operator'), authProvider: SYSTEM_PROVIDER });
  return account.id;
}
