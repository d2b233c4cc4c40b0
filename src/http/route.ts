import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { RouteAccess } from '../core/permissions.js';
import type { ConditionalRole } from './conditional.js';
import type { ChangeTarget } from './change-target.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface RouteSchema {
  body?: object;
  querystring?: object;
  params?: object;
  headers?: object;
  response?: Record<number | string, object>;
}

/** The type of a request part, read from its schema: a TypeBox schema gives its static type, plain JSON Schema `unknown`. */
type PartOf<S> = S extends TSchema ? Static<S> : unknown;

/** A request whose body, query string and path parameters have the types their schemas validate. */
export type TypedRequest<S extends RouteSchema> = FastifyRequest<{
  Body: PartOf<S['body']>;
  Querystring: PartOf<S['querystring']>;
  Params: PartOf<S['params']>;
}>;

/**
 * One entry of an area's route table. Paths are written as in endpoints.tsv (`{id}`), so a table reads like
 * the specification; `access` is mandatory, so no route can exist without a declared permission.
 */
export interface RouteSpec<S extends RouteSchema = RouteSchema> {
  method: HttpMethod;
  path: string;
  access: RouteAccess;
  summary: string;
  tags?: string[];
  schema?: S;
  bodyLimit?: number;
  /** Streams a browser opens without headers (EventSource, WebSocket) may authenticate with `?ticket=`. */
  acceptsTicket?: boolean;
  /** Conditional requests (http/conditional.ts): `read` answers an ETag and 304; `write` honours If-Match. */
  conditional?: ConditionalRole;
  /** A configuration write that a change set (POST /api/v1/changes) may also make (http/change-target.ts). */
  change?: ChangeTarget;
  // Method syntax: a route typed by its own schema still fits a table of RouteSpec.
  handler(request: TypedRequest<S>, reply: FastifyReply): unknown;
}

/**
 * Declares a route whose handler sees its request typed from the schemas it validates with (one source for
 * each shape): `route({ method: 'PUT', ..., schema: { body: Body, params: IdParams() }, handler })`.
 */
export const route = <const S extends RouteSchema>(spec: RouteSpec<S>): RouteSpec<S> => spec;

/** `/api/v1/rules/{id}` → `/api/v1/rules/:id` */
export const toRouterPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/** `/api/v1/rules/:id` → `/api/v1/rules/{id}` */
export const toSpecPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Common response schema for `{"error": "..."}` bodies. */
export const ErrorBody = {
  type: 'object',
  properties: { error: { type: 'string' } },
  required: ['error'],
} as const;
