import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Authenticator, Identity } from '../http/access.js';
import type { Permission } from '../core/permissions.js';
import { HttpError } from '../core/errors.js';
import type { DashboardBroadcaster, FrameSocket } from './dashboard-broadcaster.js';
import type { StreamLease, StreamRegistry } from './stream-registry.js';

export interface UpgradeOptions {
  paths: readonly string[];
  permission: Permission;
  authenticator: Authenticator;
  broadcaster: DashboardBroadcaster;
  /** Caps each account's open streams and ends a socket whose credential loses the permission. */
  streams: StreamRegistry;
  log: FastifyBaseLogger;
  /** Extra origins allowed besides the appliance's own (the origin the request was addressed to). */
  extraOrigins?: () => string[];
}

/** Answers an upgrade request with a plain HTTP error and closes the connection. */
function refuse(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * Browsers send Origin on every WebSocket handshake and do not apply CORS to it: only the appliance's own
 * origin (the host the request was addressed to) and configured extra origins may open the dashboard socket.
 * Clients that send no Origin (scripts, CLIs) are not browsers and are allowed.
 */
export function originAllowed(origin: string | undefined, host: string | undefined, extra: readonly string[] = []): boolean {
  if (origin === undefined) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (host && parsed.host.toLowerCase() === host.toLowerCase()) return true;
  return extra.some((allowed) => {
    try {
      return new URL(allowed).origin === parsed.origin;
    } catch {
      return false;
    }
  });
}

/**
 * Handles the HTTP upgrade of the dashboard socket on Fastify's server, so refusals are plain HTTP answers
 * given before any upgrade: 403 for a foreign Origin, 401 for a missing/unknown/expired/used ticket, 403
 * without `dashboard:view`, 429 when the account holds its maximum of open streams, 503 when 64 sockets are
 * open. Only then is the connection upgraded; the socket is closed (1008) when the credential loses access.
 */
export function attachDashboardUpgrade(server: Server, options: UpgradeOptions): () => void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096, clientTracking: false });
  const paths = new Set(options.paths);

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://appliance.invalid');
    if (!paths.has(url.pathname)) {
      // another listener may own this path; if none does, answer rather than leave the socket hanging
      if (server.listenerCount('upgrade') === 1) refuse(socket, 404, 'no WebSocket endpoint at this path');
      return;
    }
    socket.on('error', () => socket.destroy());
    void handle(request, socket, head, url).catch((error: unknown) => {
      options.log.warn({ err: error }, 'dashboard upgrade failed');
      if (!socket.destroyed) refuse(socket, 500, 'internal error');
    });
  };

  const handle = async (request: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => {
    if (request.method !== 'GET') return refuse(socket, 405, 'WebSocket handshakes use GET', { Allow: 'GET' });
    if (!originAllowed(request.headers.origin, request.headers.host, options.extraOrigins?.() ?? [])) {
      return refuse(socket, 403, 'origin not allowed');
    }
    let identity: Identity | null;
    try {
      // the same authenticator as every route: a Bearer/ApiKey header, or the single-use `?ticket=`
      const ticket = url.searchParams.get('ticket');
      identity = await options.authenticator.authenticate({
        headers: request.headers,
        ip: request.socket.remoteAddress,
        query: ticket === null ? {} : { ticket },
        routeOptions: { config: { acceptsTicket: true } },
      } as unknown as FastifyRequest);
    } catch (error) {
      if (error instanceof HttpError) return refuse(socket, error.statusCode, error.message);
      throw error;
    }
    if (!identity) return refuse(socket, 401, 'authentication required: pass ?ticket= from POST /api/v1/auth/ws-ticket');
    if (!identity.permissions.has(options.permission)) return refuse(socket, 403, `permission ${options.permission} required`);
    let lease: StreamLease;
    try {
      lease = options.streams.open(identity, options.permission);
    } catch (error) {
      if (error instanceof HttpError) return refuse(socket, error.statusCode, error.message, error.headers);
      throw error;
    }
    if (!options.broadcaster.tryReserve()) {
      lease.release();
      return refuse(socket, 503, `dashboard socket limit reached (${options.broadcaster.maxSockets})`, { 'Retry-After': '5' });
    }
    let attached = false;
    try {
      wss.handleUpgrade(request, socket, head, (ws: WebSocket) => {
        attached = true;
        // The frames are JSON: send them as text frames (a browser receives a string, not a Blob). ws sends a
        // Buffer as it is, so the bytes serialised once per tick are still shared by every socket.
        const frames: FrameSocket = {
          send: (data, done) => ws.send(data, { binary: false }, done),
          terminate: () => ws.terminate(),
          holds: (permission) => identity.permissions.has(permission),
        };
        ws.on('error', () => ws.terminate());
        ws.on('close', () => {
          lease.release();
          options.broadcaster.detach(frames);
        });
        // 1008: policy violation; the reason is short (a close frame carries at most 123 bytes).
        lease.onEnd(() => ws.close(1008, 'access revoked'));
        // server → client only: client messages are ignored
        void options.broadcaster.attach(frames);
      });
    } finally {
      // a malformed handshake is answered 400 by ws without calling back: give the slot back
      if (!attached) {
        setImmediate(() => {
          if (attached) return;
          lease.release();
          options.broadcaster.release();
        });
      }
    }
  };

  server.on('upgrade', onUpgrade);
  return () => {
    server.off('upgrade', onUpgrade);
    wss.close();
  };
}
