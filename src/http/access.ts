import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden, unauthorized } from '../core/errors.js';
import type { Permission, RouteAccess } from '../core/permissions.js';

/** Who is calling, resolved from exactly one credential. */
export interface Identity {
  credential: 'session' | 'api_key' | 'ticket';
  userId: string;
  username: string;
  role: string | null;
  permissions: ReadonlySet<Permission>;
  /** The session (JWT `sid`) or API key id this request was authenticated with. */
  credentialId: string;
}

export interface Authenticator {
  /** Resolves the request's credential; null when none was presented; throws 401 for a bad one. */
  authenticate(request: FastifyRequest): Promise<Identity | null>;
}

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity | null;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
    acceptsTicket?: boolean;
  }
}

/**
 * Enforces each route's declared access in onRequest, before the body is read or validated, so a caller
 * without access learns nothing about schemas or ids. A route without a declared access is refused.
 */
export function installAccessControl(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('identity', null);
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access;
    if (request.is404) return;
    if (access === undefined) throw forbidden('route has no declared permission');
    if (access === 'public') {
      request.identity = await authenticator.authenticate(request).catch(() => null);
      return;
    }
    const identity = await authenticator.authenticate(request);
    if (!identity) throw unauthorized();
    request.identity = identity;
    if (access !== 'authenticated' && !identity.permissions.has(access)) {
      throw forbidden(`permission ${access} required`);
    }
  });
}

/** The identity of an authenticated route; routes declared `public` may have none. */
export function requireIdentity(request: FastifyRequest): Identity {
  if (!request.identity) throw unauthorized();
  return request.identity;
}
