/**
 * The built-in HTTP-01 responder: for the length of an order, a small HTTP server on the configured address
 * (port 80 by default) answers `GET /.well-known/acme-challenge/<token>` with the key authorisation and
 * everything else with 404. It is closed when the order ends. When the reverse proxy holds that port, the
 * responder listens on loopback instead and the proxy passes the challenge path to it (`proxiedResponder`).
 */
import { createServer, type Server } from 'node:http';

/** Where the responder listens behind the proxy unless the account names a loopback address itself. */
export const PROXIED_RESPONDER = '127.0.0.1:8402';
const LOOPBACK_LISTEN = /^(127\.0\.0\.1|\[::1\]):[0-9]{1,5}$/;

/**
 * The loopback address the proxy's plain-HTTP servers pass `/.well-known/acme-challenge/*` to: the account's
 * `http01_listen` when it is on loopback, PROXIED_RESPONDER otherwise; none without an ACME account.
 */
export function proxiedResponder(account: { contact_email?: unknown; http01_listen?: unknown } | undefined): string | null {
  if (!account?.contact_email) return null;
  const listen = String(account.http01_listen ?? '');
  return LOOPBACK_LISTEN.test(listen) ? listen : PROXIED_RESPONDER;
}

/** The responder's address is taken (by the reverse proxy, or another program). */
export class PortInUse extends Error {}

export class Http01Responder {
  private readonly answers = new Map<string, string>();
  private server: Server | null = null;

  constructor(private readonly listen: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = createServer((request, response) => {
      const token = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]{1,256})$/.exec(request.url ?? '')?.[1];
      const answer = token && request.method === 'GET' ? this.answers.get(token) : undefined;
      response.writeHead(answer ? 200 : 404, { 'content-type': 'text/plain' }).end(answer ?? 'not found');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'EADDRINUSE'
          ? new PortInUse(`the HTTP-01 responder cannot listen on ${this.listen.host || '*'}:${this.listen.port}: the address is in use by another program`)
          : new Error(`the HTTP-01 responder cannot listen: ${error.message}`)));
      server.listen(this.listen.port, this.listen.host || undefined, () => resolve());
    });
    this.server = server;
  }

  set(token: string, keyAuthorization: string): void {
    this.answers.set(token, keyAuthorization);
  }

  remove(token: string): void {
    this.answers.delete(token);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** `host:port`, `:port` or `[v6]:port` of the responder. */
export function parseListen(value: string): { host: string; port: number } | null {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[0-9.]*):([0-9]{1,5})$/.exec(value);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) return null;
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}
