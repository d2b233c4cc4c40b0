import type { FastifyInstance } from 'fastify';
import type { RouteSpec } from '../http/route.js';

/**
 * One API area of one app: its route table and, optionally, background work. An area module exports a
 * `create…Area(context, needs)` function that builds it (and the services other areas may use, as fields of what
 * it returns); src/areas/index.ts wires them, passing each the services it needs. Nothing of an area lives in
 * module-level state, so several apps in one process (tests) never share one.
 */
export interface Area {
  name: string;
  routes: readonly RouteSpec[];
  /**
   * Runs while the app is built, before any other hook or route is added: hooks that must see every request
   * first (the plain listener's redirect to HTTPS) and servers of the area's own (the HTTPS listener).
   */
  http?(app: FastifyInstance): void;
  /** `app` gives access to the HTTP server (e.g. to handle WebSocket upgrades). */
  start?(app: FastifyInstance): Promise<void> | void;
  /** Runs before the server stops accepting: end long-lived streams and sockets so shutdown does not wait on them. */
  beforeClose?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}
