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
  const account = lockedAccount(users, SERVICE_ACCOUNT, 'system');
  if (apiKeys.list().some((k) => k.name === DAEMON_KEY_NAME)) return;
  const { key } = apiKeys.create({ name: DAEMON_KEY_NAME, permissions: ['ha:manage'], ownerId: account.id, createdBy: SERVICE_ACCOUNT, expiresAt: null });
  writeFileSync(join(dataDir, 'daemon-api.key'), key + '\n', { mode: 0o600 });
}

/**
 * The locked account (no password, no sign-in; the fleet-agent role, exactly the agent key's permissions) that owns
 * the fleet agent's key after an enrolment at start, when no person enrolled the appliance. Created on first use; an
 * account an older release made with the operator role (which lacks settings:write) is moved to it. Its id.
 */
export function fleetAgentOwner(users: Users): string {
  const account = lockedAccount(users, FLEET_AGENT_ACCOUNT, 'fleet-agent');
  const roleId = builtinRoleId('fleet-agent');
  return account.role_id === roleId ? account.id : users.update(account.id, { role_id: roleId }).id;
}

/** A system account no one signs in to (no password), found by name or created with its built-in role. */
function lockedAccount(users: Users, username: string, role: Parameters<typeof builtinRoleId>[0]) {
  return users.byUsername(username) ?? users.insert({ username, passwordHash: null, roleId: builtinRoleId(role), authProvider: SYSTEM_PROVIDER });
}
