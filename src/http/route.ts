import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteAccess } from '../core/permissions.js';
import type { ConditionalRole } from './conditional.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

export interface RouteSchema {
  body?: object;
  querystring?: object;
  params?: object;
  headers?: object;
  response?: Record<number | string, object>;
}

/**
 * One entry of an area's route table. Paths are written as in endpoints.tsv (`{id}`), so a table reads like
 * the specification; `access` is mandatory, so no route can exist without a declared permission.
 */
export interface RouteSpec {
  method: HttpMethod;
  path: string;
  access: RouteAccess;
  summary: string;
  tags?: string[];
  schema?: RouteSchema;
  bodyLimit?: number;
  /** Streams a browser opens without headers (EventSource, WebSocket) may authenticate with `?ticket=`. */
  acceptsTicket?: boolean;
  /** Conditional requests (http/conditional.ts): `read` answers an ETag and 304; `write` honours If-Match. */
  conditional?: ConditionalRole;
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown;
}

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
