/**
 * Conditional requests (RFC 9110 §8.8.3, §13): configuration reads answer an `ETag`; `If-None-Match` with the
 * current tag answers 304 without a body; a write whose `If-Match` (or `If-None-Match`) does not hold answers
 * 412 and changes nothing. Requests without these headers behave as if the feature did not exist.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, HttpError } from '../core/errors.js';
import { canonicalJson } from '../core/canonical-json.js';

/** How a route takes part: `read` answers an ETag and honours If-None-Match; `write` checks If-Match first. */
export type ConditionalRole = 'read' | 'write';

declare module 'fastify' {
  interface FastifyContextConfig {
    conditional?: ConditionalRole;
  }
}

interface EntityTag {
  weak: boolean;
  opaque: string;
}

/** `*`, or the entity tags the header lists. */
type Condition = '*' | EntityTag[];

/** A strong entity tag for a representation: 128 bits of its SHA-256, quoted. */
export function strongTagOf(content: string | Buffer): string {
  return `"${createHash('sha256').update(content).digest('base64url').slice(0, 22)}"`;
}

/** A strong entity tag for a value that is not yet text (key order does not matter). */
export const strongTagOfValue = (value: unknown): string => strongTagOf(canonicalJson(value));

// One list element: optional weakness prefix, then a quoted opaque tag of the characters RFC 9110 allows.
const ELEMENT = /[ \t]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|$)/y;
const EMPTY_ELEMENT = /[ \t]*,/y;

/** Parses If-Match / If-None-Match; a malformed value is a 400 naming the header (never silently ignored). */
function parseCondition(value: string, header: string, field = `headers.${header}`): Condition {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < value.length) {
    EMPTY_ELEMENT.lastIndex = at;
    if (EMPTY_ELEMENT.test(value)) {
      at = EMPTY_ELEMENT.lastIndex;
      continue;
    }
    ELEMENT.lastIndex = at;
    const match = ELEMENT.exec(value);
    if (!match) break;
    tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    at = ELEMENT.lastIndex;
  }
  if (at < value.length || tags.length === 0) {
    throw badRequest(`${field} must be "*" or a comma-separated list of entity tags ("tag" or W/"tag")`);
  }
  return tags;
}

function readCondition(request: FastifyRequest, header: 'if-match' | 'if-none-match'): Condition | undefined {
  const value = request.headers[header];
  return typeof value === 'string' ? parseCondition(value, header) : undefined;
}

function parseTag(tag: string): EntityTag {
  const weak = tag.startsWith('W/');
  return { weak, opaque: tag.slice(weak ? 3 : 1, -1) };
}

/** If-Match uses the strong comparison: both tags strong and equal. */
const strongMatch = (a: EntityTag, b: EntityTag) => !a.weak && !b.weak && a.opaque === b.opaque;
/** If-None-Match uses the weak comparison: equal opaque tags, weak or not. */
const weakMatch = (a: EntityTag, b: EntityTag) => a.opaque === b.opaque;

/**
 * Evaluates the preconditions in RFC 9110 §13.2.2 order against the current tag of a representation that
 * exists: If-Match first (strong comparison; false → 412), then If-None-Match (weak comparison; false → 304 for
 * GET, 412 for writes; HEAD answers its 200 headers, ETag included). If-Modified-Since and If-Unmodified-Since
 * are not used: no Last-Modified is sent.
 */
function evaluatePreconditions(request: FastifyRequest, currentTag: string): 'proceed' | 'not-modified' {
  const current = parseTag(currentTag);
  const ifMatch = readCondition(request, 'if-match');
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.some((tag) => strongMatch(tag, current))) {
    throw new HttpError(412, 'precondition failed: If-Match does not name the current entity tag (the resource changed; read it again)', { etag: currentTag });
  }
  const ifNoneMatch = readCondition(request, 'if-none-match');
  if (ifNoneMatch !== undefined && (ifNoneMatch === '*' || ifNoneMatch.some((tag) => weakMatch(tag, current)))) {
    // HEAD answers 200 with the headers: Fastify's HEAD handling would give a 304 a Content-Length of 0.
    if (request.method === 'HEAD') return 'proceed';
    if (request.method === 'GET') return 'not-modified';
    throw new HttpError(412, 'precondition failed: If-None-Match names the current entity tag', { etag: currentTag });
  }
  return 'proceed';
}

/**
 * For a write: throws 412 unless the request's preconditions hold for the target's current tag. Call it in the
 * same synchronous step as the write, so no other write can come between the check and the change.
 */
export function requirePreconditions(request: FastifyRequest, currentTag: string): void {
  evaluatePreconditions(request, currentTag);
}

/**
 * If-Match outside a request (an operation of a change set, `field` naming where the client wrote it): 412
 * unless the value is `*` or names the current tag (strong comparison); no value, no condition.
 */
export function requireIfMatch(value: string | undefined, currentTag: string, field: string): void {
  if (value === undefined) return;
  const condition = parseCondition(value, 'if-match', field);
  if (condition !== '*' && !condition.some((tag) => strongMatch(tag, parseTag(currentTag)))) {
    throw new HttpError(412, `precondition failed: ${field} does not name the current entity tag (the object changed; read it again)`, { etag: currentTag });
  }
}

/** Sets the tag a read or write answers with (the hook below fills it in from the body when a route did not). */
export function setEntityTag(reply: FastifyReply, tag: string): void {
  reply.header('etag', tag);
}

/**
 * Reads marked `conditional: 'read'` answer an ETag (the one the handler set, or a hash of the body sent) and
 * 304 without a body when If-None-Match names it. Writes marked `conditional: 'write'` keep the ETag their
 * handler set for the new state.
 */
export function installConditionalRequests(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.config?.conditional !== 'read' || reply.statusCode !== 200) return done(null, payload);
    let tag = reply.getHeader('etag') as string | undefined;
    if (tag === undefined) {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
      tag = strongTagOf(payload);
      reply.header('etag', tag);
    }
    let outcome: 'proceed' | 'not-modified';
    try {
      outcome = evaluatePreconditions(request, tag);
    } catch (error) {
      return done(error as Error);
    }
    if (outcome === 'proceed') return done(null, payload);
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    // null (undefined would keep the body): Fastify then writes the 304 without a body or Content-Length.
    return done(null, null);
  });
}

/**
 * A write route that keeps no entity tags cannot evaluate If-Match, and ignoring it would let a client believe
 * its update was guarded: such requests are refused with a 400 naming the header (RFC 9110 §13.1.1 requires the
 * condition to be evaluated before the method is performed).
 */
export function refuseUnsupportedPreconditions(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const { method, headers } = request;
    if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || request.is404) return done();
    if (request.routeOptions.config?.conditional === 'write') return done();
    const header = headers['if-match'] !== undefined ? 'if-match' : headers['if-none-match'] !== undefined ? 'if-none-match' : undefined;
    if (header === undefined) return done();
    done(badRequest(`headers.${header} is not supported on ${method} ${request.routeOptions.url}: this operation keeps no entity tag`));
  });
}

const TAG_DESCRIPTION = 'Entity tag of the current representation (RFC 9110); send it back in If-None-Match or If-Match';
const IF_NONE_MATCH = { type: 'string', description: 'Entity tags (or *): answer 304 without a body when one names the current representation' };
const IF_MATCH = { type: 'string', description: 'Entity tags (or *): change nothing and answer 412 unless one is the current entity tag (strong comparison)' };
const PRECONDITION_FAILED = {
  type: 'object', description: 'Precondition Failed: the resource changed since the entity tag was read; read it again',
  properties: { error: { type: 'string' } }, required: ['error'],
};

type DocumentedSchema = Record<string, unknown> & { headers?: Record<string, unknown> & { properties?: Record<string, unknown> }; response?: Record<string, Record<string, unknown>> };

/**
 * Adds the conditional-request headers and responses of a route to its OpenAPI description (a copy: the schemas
 * that validate and serialise stay as they are).
 */
export function documentConditional(schema: DocumentedSchema | undefined, role: ConditionalRole | undefined): DocumentedSchema | undefined {
  if (!schema || !role) return schema;
  const requestHeaders = role === 'read' ? { 'if-none-match': IF_NONE_MATCH } : { 'if-match': IF_MATCH, 'if-none-match': IF_NONE_MATCH };
  const response = { ...(schema.response ?? {}) };
  const ok = response[200];
  if (ok) response[200] = { ...ok, headers: { ...((ok.headers as object | undefined) ?? {}), ETag: { type: 'string', description: TAG_DESCRIPTION } } };
  if (role === 'read') response[304] = { type: 'null', description: 'Not Modified: If-None-Match named the current entity tag; no body' };
  response[412] = PRECONDITION_FAILED;
  return {
    ...schema,
    headers: { ...(schema.headers ?? {}), type: 'object', properties: { ...(schema.headers?.properties ?? {}), ...requestHeaders } },
    response,
  };
}
