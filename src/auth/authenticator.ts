import type { AppContext } from '../context.js';
import type { Authenticator } from '../http/access.js';

/** Placeholder until the identity area lands: no credential is accepted yet. */
export function createAuthenticator(_context: AppContext): Authenticator {
  return { authenticate: async () => null };
}
