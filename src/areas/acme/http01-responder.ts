/**
 * The built-in HTTP-01 responder: for the length of an order, a small HTTP server on the configured address
 * (port 80 by default) answers `GET /.well-known/acme-challenge/<token>` with the key authorisation and
 * everything else with 404. It is closed when the order ends.
 */
import { createServer, type Server } from 'node:http';

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
        reject(new Error(error.code === 'EADDRINUSE' ? `the HTTP-01 responder cannot listen on port ${this.listen.port}: in use (the reverse proxy?)` : `the HTTP-01 responder cannot listen: ${error.message}`)));
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
