/**
 * How a generated write route takes part in a change set (POST /api/v1/changes): the same model write the
 * route's handler makes, callable synchronously inside the change set's one transaction, with the operation's
 * If-Match checked against the same entity tag the route checks.
 */
import type { ConfigData } from '../store/config-store.js';

export interface ChangeResult {
  kind: string;
  /** The object's id (collections); absent for a settings section. */
  id?: string;
  /** The record (or section) as read before and after, secrets left out; null when it did not / does not exist. */
  before: object | null;
  after: object | null;
}

export interface ChangeTarget {
  op: 'create' | 'update' | 'delete';
  /** The schema the route validates the body with (none for delete). */
  body?: object;
  /** Asynchronous work the route does before its write (e.g. reading the host's interfaces), awaited before the transaction. */
  prepare?: () => Promise<unknown>;
  /**
   * Applies the operation; `params` are the route's path parameters, `ifMatch` the operation's If-Match value
   * (`field` names it in a 400 or 412).
   */
  apply(params: Record<string, string>, body: ConfigData | undefined, ifMatch: string | undefined, field: string): ChangeResult;
}
