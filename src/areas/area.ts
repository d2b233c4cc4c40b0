import type { AppContext } from '../context.js';
import type { RouteSpec } from '../http/route.js';

/** One API area: its route table, and optional start/stop for background work. */
export interface Area {
  name: string;
  routes(context: AppContext): RouteSpec[];
  start?(context: AppContext): Promise<void> | void;
  /** Called when closing begins, before in-flight requests finish: end long-lived streams here. */
  beforeClose?(context: AppContext): Promise<void> | void;
  /** Receives the context it was started with, so an area object shared by several apps stops the right one. */
  stop?(context: AppContext): Promise<void> | void;
}
