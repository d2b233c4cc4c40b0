/**
 * The one Server-Sent Events writer of Bulwark (GET /pending/stream, GET /dns/stream): `text/event-stream`,
 * `retry:` first, an `id:` on every event (counting up from 1 per connection), a keep-alive comment every 15 s,
 * and cleanup callbacks run once when the client goes away or the server closes the stream. A request whose
 * Accept header does not allow `text/event-stream` (including one without Accept) is answered 406 instead of
 * being held open: EventSource always sends `Accept: text/event-stream`. Ticket authentication (`?ticket=`) is
 * route-level: stream routes declare `acceptsTicket: true`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, unauthorized } from '../core/errors.js';
import type { Permission } from '../core/permissions.js';
import type { StreamRegistry } from './stream-registry.js';

export const KEEP_ALIVE_MS = 15_000;
export const RETRY_MS = 5_000;

/** Does the client accept an event stream? `text/event-stream`, `text/*` and `*\/*` qualify (unless q=0). */
export function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const refused = params.some((p) => /^q=0(\.0*)?$/.test(p));
    return !refused && (type === 'text/event-stream' || type === 'text/*' || type === '*/*');
  });
}

/** The `event:` and `data:` lines of one event; multi-line text becomes several `data:` lines, as the format requires. */
function eventBody(data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = event ? [`event: ${event.replace(/[\r\n]/g, ' ')}`] : [];
  for (const line of text.split(/\r\n|\r|\n/)) lines.push(`data: ${line}`);
  return `${lines.join('\n')}\n\n`;
}

/** One event in wire form. */
export function formatEvent(id: number, data: unknown, event?: string): string {
  return `id: ${id}\n${eventBody(data, event)}`;
}

export interface EventStreamOptions {
  keepAliveMs?: number;
  /** Reconnection delay suggested to EventSource. */
  retryMs?: number;
  /**
   * The registry that caps the caller's open streams (429 beyond it) and ends this one, with an `end` event,
   * when the caller's credential loses `permission`.
   */
  registry?: { streams: StreamRegistry; permission: Permission };
}

/** One open Server-Sent Events response. Throws a 406 HttpError (before taking the reply over) when not accepted. */
export class EventStream {
  private nextId = 1;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly cleanups: (() => void)[] = [];
  private ended = false;

  constructor(
    request: FastifyRequest,
    private readonly reply: FastifyReply,
    options: EventStreamOptions = {},
  ) {
    if (!acceptsEventStream(request)) {
      throw new HttpError(406, 'this endpoint is a Server-Sent Events stream: send Accept: text/event-stream');
    }
    if (options.registry && !request.identity) throw unauthorized();
    // Taken before the reply is hijacked, so a caller at the cap gets a plain 429.
    const lease = options.registry && request.identity ? options.registry.streams.open(request.identity, options.registry.permission) : undefined;
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    reply.raw.write(`retry: ${options.retryMs ?? RETRY_MS}\n\n`);
    this.keepAlive = setInterval(() => this.comment('keep-alive'), options.keepAliveMs ?? KEEP_ALIVE_MS);
    this.keepAlive.unref();
    const gone = () => this.close();
    // The response's close, not the request's: a POST's request emits 'close' as soon as its body is read.
    reply.raw.once('close', gone);
    reply.raw.once('error', gone);
    if (lease) {
      this.onClose(lease.release);
      lease.onEnd((reason) => {
        this.send({ error: reason }, 'end');
        this.close();
      });
    }
  }

  get closed(): boolean {
    return this.ended;
  }

  send(data: unknown, event?: string): void {
    this.sendBody(eventBody(data, event));
  }

  /** Writes an already serialised event body under this stream's next id (broadcasts serialise once). */
  sendBody(body: string): void {
    if (!this.ended) this.reply.raw.write(`id: ${this.nextId++}\n${body}`);
  }

  comment(text: string): void {
    if (!this.ended) this.reply.raw.write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
  }

  onClose(cleanup: () => void): void {
    if (this.ended) cleanup();
    else this.cleanups.push(cleanup);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepAlive);
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }
}

/** Every open stream of one kind: broadcast to all, and end them all at shutdown. */
export class EventStreamSet {
  private readonly streams = new Set<EventStream>();
  add(stream: EventStream): void {
    this.streams.add(stream);
    stream.onClose(() => this.streams.delete(stream));
  }
  get size(): number {
    return this.streams.size;
  }
  forEach(fn: (stream: EventStream) => void): void {
    for (const stream of this.streams) fn(stream);
  }
  /** Sends one event to every open stream, serialised once. */
  broadcast(data: unknown, event?: string): void {
    if (this.streams.size === 0) return;
    const body = eventBody(data, event);
    for (const stream of this.streams) stream.sendBody(body);
  }
  closeAll(): void {
    for (const stream of [...this.streams]) stream.close();
  }
}
