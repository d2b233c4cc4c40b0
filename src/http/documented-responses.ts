import { ErrorBody, type RouteSpec } from './route.js';

/**
 * What an operation answers, for the OpenAPI document and for Fastify's serialiser (the same schemas do both).
 * A route declares its success answers and its own unusual errors (502, 503, …); the errors every route of a
 * given shape can answer are added here from that shape, so no route table repeats them and none forgets one.
 */

/** Methods whose requests Fastify reads a body for (so malformed JSON, `null` or an oversized body can occur). */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** An answer without a body: 204 No Content, or the 101 of a WebSocket handshake. */
export const NoContent = (description = 'Done; no body') => ({ type: 'null', description });

/** A 303 See Other: no body, the browser goes to `Location`. */
export const SeeOther = (description: string) => ({
  type: 'null',
  description,
  headers: { location: { type: 'string', description: 'Where the browser goes next' } },
});

export const TEXT = { type: 'string' } as const;
export const BINARY = { type: 'string', format: 'binary' } as const;

/** An answer whose media type depends on the request (`?format=`): each media type with its schema. */
export const MediaBodies = (description: string, schemas: Record<string, object>) => ({
  description,
  content: Object.fromEntries(Object.entries(schemas).map(([mediaType, schema]) => [mediaType, { schema }])),
});

/** A body that is not JSON (PEM, YAML, Prometheus text, images): its media type and meaning. */
export const MediaBody = (mediaType: string, description: string, schema: object = TEXT) => MediaBodies(description, { [mediaType]: schema });

/** An `{error}` answer with a description of when it happens. */
export const ErrorAnswer = (description: string) => ({ ...ErrorBody, description });

/** A Server-Sent Events stream (src/live/event-stream.ts): 200 with events, or 406 when `Accept` excludes them. */
export const EventStreamAnswers = (description: string) => ({
  200: MediaBody('text/event-stream', description),
  406: ErrorAnswer('The request\'s Accept does not allow text/event-stream'),
});

const isSuccess = (status: string) => /^[123]/.test(status);

/** The generic error answers a route can give, from what it accepts and who may call it. */
function genericErrors(route: RouteSpec): Record<string, object> {
  const errors: Record<string, object> = {};
  const readsBody = BODY_METHODS.has(route.method);
  const hasPathParams = route.path.includes('{');
  if (readsBody || hasPathParams || route.schema?.querystring || route.schema?.body) {
    errors[400] = ErrorAnswer('The request is malformed: the message names the field (body, query or path) at fault');
  }
  if (route.access !== 'public') {
    errors[401] = ErrorAnswer('No credential, or one that is invalid, expired or revoked');
    // Also answered to an authenticated route: a cookie-authenticated write without the CSRF header.
    errors[403] = ErrorAnswer('The credential lacks the permission this operation requires');
  }
  if (hasPathParams) errors[404] = ErrorAnswer('Nothing is found under the identifier in the path');
  if (readsBody && route.access !== 'public') {
    errors[409] = ErrorAnswer('The change conflicts with the current state: a duplicate, an object still in use, a refused apply');
  }
  if (readsBody) errors[413] = ErrorAnswer('The body is larger than the route accepts');
  return errors;
}

/**
 * The response map of an operation: the route's own declarations win over the generic errors. A DELETE that
 * declares no success answers 204 without a body, as every delete in this API does.
 */
export function documentedResponses(route: RouteSpec): Record<string, object> {
  const declared = Object.fromEntries(Object.entries(route.schema?.response ?? {}).map(([status, schema]) => [String(status), schema]));
  const successDefault: Record<string, object> = route.method === 'DELETE' && !Object.keys(declared).some(isSuccess) ? { 204: NoContent('Deleted') } : {};
  return { ...successDefault, ...genericErrors(route), ...declared };
}
