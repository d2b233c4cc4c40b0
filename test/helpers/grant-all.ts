import type { Authenticator, Identity } from '../../src/http/access.js';
import { PERMISSIONS } from '../../src/core/permissions.js';

/**
 * An authenticator that treats every request as an administrator. Area suites use it to exercise their own
 * behaviour through app.inject; authentication and the 401/403 of every route are the identity suites' job.
 */
export function grantAll(): Authenticator {
  const identity: Identity = {
    credential: 'session', userId: '00000000-0000-4000-8000-000000000001', username: 'test-admin', role: 'admin',
    permissions: new Set(PERMISSIONS), credentialId: 'test',
  };
  return { authenticate: async () => identity };
}
