/**
 * Hand-written writes of a configuration read. A `PUT`, `PATCH` or `DELETE` whose path also has a `GET` marked
 * `conditional: 'read'` (its twin) evaluates If-Match / If-None-Match against the tag that GET answers now, and a
 * successful PUT answers the tag a GET would answer next. Declared collections and sections check their own
 * tags (collection-routes.ts, singleton-routes.ts); this covers every other write of a tagged path at once.
 * docs/conditional-requests.md explains why no other write can slip between the check and the change.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../core/errors.js';
import type { ConfigStore } from '../store/config-store.js';
import { requirePreconditions, strongTagOf } from './conditional.js';
import type { RouteSpec } from './route.js';

const TWIN_WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'PATCH', 'DELETE']);

/** A read whose handler waits (for the platform) is retried this often when the configuration changes meanwhile. */
const TAG_ATTEMPTS = 3;

/** What one write request still has to prove, and what it has written itself. */
interface WriteFence {
  /** The store generation the precondition held at; the request's first store write must still find it. */
  checkedAt?: string;
  /** The store generation after the request's latest own write. */
  ownGeneration: string;
  /** False once the handler has finished: later writes in its async context are not its own. */
  open: boolean;
}

/**
 * A read can only name the tag of one representation when nothing but the path chooses it: no query string, and
 * one JSON answer (no media types to choose from).
 */
function isTaggedRead(route: RouteSpec): boolean {
  const ok = route.schema?.response?.[200] as Record<string, unknown> | undefined;
  return route.method === 'GET' && route.conditional === 'read' && !route.schema?.querystring && !(ok && 'content' in ok);
}

/** Each write without its own precondition handling, with the tagged GET of the same path. */
export function conditionalTwinsOf(routes: readonly RouteSpec[]): Map<RouteSpec, RouteSpec> {
  const reads = new Map(routes.filter(isTaggedRead).map((route) => [route.path, route]));
  const twins = new Map<RouteSpec, RouteSpec>();
  for (const route of routes) {
    const read = reads.get(route.path);
    if (read && TWIN_WRITE_METHODS.has(route.method) && route.conditional === undefined) twins.set(route, read);
  }
  return twins;
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

const hasPreconditions = (request: FastifyRequest) =>
  request.headers['if-match'] !== undefined || request.headers['if-none-match'] !== undefined;

/**
 * A stand-in reply for running a GET handler inside a write: it keeps the headers and body the handler gives
 * instead of answering. The twins' GET handlers return a value or set an entity tag; nothing else is needed.
 */
function capturingReply(reply: FastifyReply) {
  const headers = new Map<string, unknown>();
  const captured: { body?: unknown; sent: boolean } = { sent: false };
  const stand: Record<string, unknown> = {
    request: reply.request,
    server: reply.server,
    log: reply.log,
    statusCode: 200,
    sent: false,
    code: (status: number) => ((stand.statusCode = status), stand),
    status: (status: number) => ((stand.statusCode = status), stand),
    header: (name: string, value: unknown) => (headers.set(name.toLowerCase(), value), stand),
    headers: (values: Record<string, unknown>) => {
      for (const [name, value] of Object.entries(values)) headers.set(name.toLowerCase(), value);
      return stand;
    },
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    getHeaders: () => Object.fromEntries(headers),
    hasHeader: (name: string) => headers.has(name.toLowerCase()),
    removeHeader: (name: string) => (headers.delete(name.toLowerCase()), stand),
    type: (value: string) => (headers.set('content-type', value), stand),
    send: (body?: unknown) => {
      Object.assign(captured, { body, sent: true });
      stand.sent = true;
      return stand;
    },
  };
  return { reply: stand as unknown as FastifyReply, headers, captured };
}

/** Makes the writes of tagged paths conditional; one instance per app (it watches that app's store). */
export class ConditionalTwins {
  private readonly fences = new AsyncLocalStorage<WriteFence>();

  constructor(private readonly store: ConfigStore) {
    // A handler that waits before it writes (for the platform) is held to its precondition at its first write.
    store.guardWrites(() => {
      const fence = this.fences.getStore();
      if (!fence?.open || fence.checkedAt === undefined) return;
      const unchanged = store.generation() === fence.checkedAt;
      fence.checkedAt = undefined;
      if (!unchanged) {
        throw new HttpError(412, 'precondition failed: the configuration changed between the If-Match check and this write (read it again)');
      }
    });
    store.onChange(() => {
      const fence = this.fences.getStore();
      if (fence?.open) fence.ownGeneration = store.generation();
    });
  }

  /** The routes with each write of a tagged path made conditional on its twin's tag. */
  apply(routes: readonly RouteSpec[]): RouteSpec[] {
    const twins = conditionalTwinsOf(routes);
    return routes.map((route) => {
      const read = twins.get(route);
      return read ? { ...route, conditional: 'write', handler: (request, reply) => this.write(route, read, request, reply) } : route;
    });
  }

  /**
   * The tag `read` answers for this request now: the ETag its handler sets, or the hash of the bytes its answer
   * serialises to (what installConditionalRequests would hash). Synchronous when the handler is.
   */
  private tagOfRead(read: RouteSpec, request: FastifyRequest, reply: FastifyReply): string | Promise<string> {
    const stand = capturingReply(reply);
    const finish = (value: unknown): string => {
      const own = stand.headers.get('etag');
      if (typeof own === 'string') return own;
      const body = stand.captured.sent ? stand.captured.body : value;
      if (typeof body === 'string' || Buffer.isBuffer(body)) return strongTagOf(body);
      const schema = read.schema?.response?.[200];
      return strongTagOf(schema ? reply.serializeInput(body as Record<string, unknown>, schema as Record<string, unknown>) : JSON.stringify(body));
    };
    const result = read.handler(request as never, stand.reply);
    return isThenable(result) ? Promise.resolve(result).then(finish) : finish(result);
  }

  private async write(write: RouteSpec, read: RouteSpec, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const fence: WriteFence = { ownGeneration: '', open: true };
    if (hasPreconditions(request)) {
      // The check and the start of the handler run in one synchronous step after the tag is known; a read that
      // had to wait is trusted only when no store change happened while it waited.
      for (let attempt = 1; ; attempt++) {
        const before = this.store.generation();
        const pending = this.tagOfRead(read, request, reply);
        const tag = typeof pending === 'string' ? pending : await pending;
        if (this.store.generation() === before) {
          requirePreconditions(request, tag);
          fence.checkedAt = before;
          break;
        }
        if (attempt === TAG_ATTEMPTS) {
          throw new HttpError(412, 'precondition failed: the configuration kept changing while If-Match was evaluated (read it again)');
        }
      }
    }
    fence.ownGeneration = this.store.generation();
    let result: unknown;
    try {
      result = this.fences.run(fence, () => write.handler(request as never, reply));
      if (isThenable(result)) result = await result;
    } finally {
      fence.open = false;
    }
    if (write.method !== 'DELETE' && !reply.sent && reply.statusCode < 300) {
      const tag = await this.tagAfterOwnWrites(read, request, reply, fence.ownGeneration);
      if (tag !== undefined) reply.header('etag', tag);
    }
    return result;
  }

  /**
   * The tag of what this request's write left, computed in the same synchronous step as the write when both
   * handlers are synchronous; left out when any other store change came after the request's own (the client
   * must read again rather than hold a tag of a state it has not seen) or the read fails.
   */
  private tagAfterOwnWrites(read: RouteSpec, request: FastifyRequest, reply: FastifyReply, ownGeneration: string): string | undefined | Promise<string | undefined> {
    if (this.store.generation() !== ownGeneration) return undefined;
    let pending: string | Promise<string>;
    try {
      pending = this.tagOfRead(read, request, reply);
    } catch {
      return undefined;
    }
    if (typeof pending === 'string') return pending;
    return pending.then((tag) => (this.store.generation() === ownGeneration ? tag : undefined), () => undefined);
  }
}
