import type { FastifyInstance } from 'fastify';
import { HttpError } from '../core/errors.js';

/**
 * Deeper than any body this API takes (a whole configuration import is about ten levels). A deeper body is
 * refused before validation: ajv, the canonical-JSON writer and JSON.stringify all recurse, and a body
 * nested 20,000 deep would overflow their stack.
 */
export const MAX_BODY_DEPTH = 64;

/** True when the value nests objects or arrays deeper than `limit` (walked with an explicit stack). */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Whether a route's body schema names a field that must be sent. */
const hasRequiredFields = (schema: unknown) => Boolean((schema as { required?: unknown[] } | undefined)?.required?.length);

/**
 * The body's shape, checked once for every route before validation, so no handler meets a body its schema
 * did not describe:
 * - a JSON `null` is refused (Fastify skips schema validation for it);
 * - no body at all (no Content-Type, or an empty one) on a route that takes a body: a PUT or PATCH, or a
 *   POST whose schema requires a field, is refused; a POST whose fields are all optional (an action with
 *   options: log out, save, commit-confirm) runs as if sent `{}`, so its defaults apply;
 * - a body nested deeper than MAX_BODY_DEPTH is refused.
 */
export function installRequestBodyChecks(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const { body } = request;
    if (body === null) return done(new HttpError(400, 'body must be a JSON object, not null'));
    const schema = request.routeOptions.schema?.body;
    if (body === undefined) {
      if (!schema) return done();
      if (request.method !== 'POST' || hasRequiredFields(schema)) {
        return done(new HttpError(400, 'body is required: send a JSON object with Content-Type: application/json'));
      }
      request.body = {};
      return done();
    }
    if (nestedDeeperThan(body, MAX_BODY_DEPTH)) {
      return done(new HttpError(400, `body is nested deeper than ${MAX_BODY_DEPTH} levels`));
    }
    done();
  });
}
