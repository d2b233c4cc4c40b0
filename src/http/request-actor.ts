import { AsyncLocalStorage } from 'node:async_hooks';

/** Who is making the request being handled: the account (or key) name and the client address. */
export interface RequestActor {
  actor: string | null;
  clientIp: string | null;
}

/**
 * The actor of the write request whose handler is running (set by the route registration in app.ts), so that what
 * a write changes can be audited with who did it without passing the request through every service.
 */
export const requestActor = new AsyncLocalStorage<RequestActor>();
