import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { RouteSpec } from '../http/route.js';

/** One API area: its route table, and optional start/stop for background work. */
export interface Area {
  name: string;
  routes(context: AppContext): RouteSpec[];
  /** `app` gives access to the HTTP server (e.g. to handle WebSocket upgrades). */
  start?(context: AppContext, app?: FastifyInstance): Promise<void> | void;
  /** Runs before the server stops accepting: end long-lived streams and sockets so shutdown does not wait on them. */
  beforeClose?(context: AppContext): Promise<void> | void;
  /** Receives the context it was started with, so an area object shared by several apps stops the right one. */
  stop?(context: AppContext): Promise<void> | void;
}
