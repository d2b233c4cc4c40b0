/**
 * Server-Sent Events: framing (`id:`, `event:`, `data:`), a keep-alive comment every 15 s, and cleanup when the
 * client goes away. A hub computes each event once and writes the same bytes to every connection.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';

export const KEEP_ALIVE_MS = 15_000;

/** One event in wire form. Multi-line data becomes several `data:` lines, as the format requires. */
export function formatEvent(id: number, data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const lines = [`id: ${id}`];
  if (event) lines.push(`event: ${event}`);
  for (const line of text.split(/\r\n|\r|\n/)) lines.push(`data: ${line}`);
  return `${lines.join('\n')}\n\n`;
}

export interface SseConnection {
  send(data: unknown, event?: string): void;
  close(): void;
  readonly closed: boolean;
}

export class SseHub {
  private readonly connections = new Set<{ response: ServerResponse; close(): void }>();
  private lastId = 0;
  private keepAlive: NodeJS.Timeout | undefined;

  constructor(private readonly options: { keepAliveMs?: number; retryMs?: number } = {}) {}

  get size(): number {
    return this.connections.size;
  }

  /** Takes the reply over from Fastify and keeps the response open as an event stream. */
  open(request: FastifyRequest, reply: FastifyReply, onClose?: () => void): SseConnection {
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    response.write(`retry: ${this.options.retryMs ?? 5000}\n\n`);
    let closed = false;
    const entry = {
      response,
      close: () => {
        if (closed) return;
        closed = true;
        this.connections.delete(entry);
        if (this.connections.size === 0) this.stopKeepAlive();
        onClose?.();
        response.end();
      },
    };
    this.connections.add(entry);
    request.raw.on('close', entry.close);
    response.on('error', entry.close);
    this.startKeepAlive();
    return {
      send: (data, event) => {
        if (!closed) response.write(formatEvent(++this.lastId, data, event));
      },
      close: entry.close,
      get closed() {
        return closed;
      },
    };
  }

  /** Sends one event to every open connection (serialised once). */
  broadcast(data: unknown, event?: string): void {
    if (this.connections.size === 0) return;
    const frame = formatEvent(++this.lastId, data, event);
    for (const { response } of this.connections) response.write(frame);
  }

  closeAll(): void {
    for (const connection of [...this.connections]) connection.close();
  }

  private startKeepAlive(): void {
    if (this.keepAlive) return;
    this.keepAlive = setInterval(() => {
      for (const { response } of this.connections) response.write(': keep-alive\n\n');
    }, this.options.keepAliveMs ?? KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  private stopKeepAlive(): void {
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }
}
