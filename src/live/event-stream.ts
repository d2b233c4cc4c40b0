import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../core/errors.js';

/**
 * Does the client accept an event stream? EventSource always sends `Accept: text/event-stream`; `*\/*` and
 * `text/*` also qualify. A request without an Accept header is answered 406 rather than held open forever.
 */
export function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0].trim().toLowerCase();
    return type === 'text/event-stream' || type === 'text/*' || type === '*/*';
  });
}

export interface EventStreamOptions {
  keepAliveMs?: number;
  /** Reconnection delay suggested to EventSource. */
  retryMs?: number;
}

/**
 * A Server-Sent Events response: `text/event-stream`, an `id:` on every event, keep-alive comment lines, and
 * cleanup callbacks run once when the client goes away or the server closes the stream.
 */
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
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    reply.raw.write(`retry: ${options.retryMs ?? 3000}\n\n`);
    this.keepAlive = setInterval(() => this.comment('keep-alive'), options.keepAliveMs ?? 15_000);
    this.keepAlive.unref();
    const gone = () => this.close();
    request.raw.once('close', gone);
    reply.raw.once('close', gone);
    reply.raw.once('error', gone);
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Writes one event: `id:`, optional `event:`, and the JSON payload on `data:` (one line: JSON has no raw newlines). */
  send(data: unknown, event?: string): void {
    if (this.ended) return;
    const lines = [`id: ${this.nextId++}`];
    if (event) lines.push(`event: ${event}`);
    lines.push(`data: ${JSON.stringify(data)}`);
    this.reply.raw.write(`${lines.join('\n')}\n\n`);
  }

  comment(text: string): void {
    if (!this.ended) this.reply.raw.write(`: ${text.replace(/\n/g, ' ')}\n\n`);
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

/** Every open stream of one kind, so shutdown can end them all. */
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
  closeAll(): void {
    for (const stream of [...this.streams]) stream.close();
  }
}
