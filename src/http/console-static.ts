import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { unavailable } from '../core/errors.js';

/**
 * Where `npm run build` writes the console (web/ built by Vite). The same relative path works from src/http
 * (tests, tsx) and from dist/http (the compiled server): both sit two levels below the repository root.
 */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../dist/console', import.meta.url));

const ASSETS_ROUTE = '/assets/*';
const FALLBACK_ROUTE = '/*';
/**
 * The console's wildcard routes. The 405 index must never learn them: a missing asset or an unknown API path
 * answers through the not-found handler, which would otherwise read "GET is allowed here" and answer 405.
 */
export const CONSOLE_ROUTES: readonly string[] = [ASSETS_ROUTE, FALLBACK_ROUTE];

/**
 * The console's headers. The bundle has no inline script or style, so the policy can be strict; data: and
 * blob: images are the QR codes (TOTP enrolment from the API as a data: URL, WireGuard peers fetched as PNG).
 * 'self' in connect-src covers the dashboard WebSocket on the same host.
 */
const CONSOLE_HEADERS: Record<string, string> = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/');

function withConsoleHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers(CONSOLE_HEADERS);
}

/**
 * Serves the built web console: hashed files under /assets/ (cached for a year, they never change under a
 * name), and index.html for every other GET outside /api/, so a deep link or a reload lands in the app, which
 * routes on the client. Unknown /api/ paths keep their JSON 404/405. Files are served by @fastify/static
 * (confined to the console directory; pre-compressed .br/.gz siblings from the build when the client takes
 * them). Every route is public: the page holds no data, the API it calls checks each request.
 */
export async function registerConsole(app: FastifyInstance, consoleDir: string = DEFAULT_CONSOLE_DIR): Promise<void> {
  const built = existsSync(join(consoleDir, 'index.html'));
  const assetsDir = join(consoleDir, 'assets');
  if (!built) app.log.warn({ consoleDir }, 'the web console is not built (npm run build): / answers 503');

  await app.register(async (scope) => {
    await scope.register(fastifyStatic, { root: consoleDir, serve: false, preCompressed: true, index: false, dotfiles: 'deny' });
    const routeOptions = { config: { access: 'public' as const }, schema: { hide: true } };

    scope.get(ASSETS_ROUTE, routeOptions, (request, reply) => {
      const file = (request.params as { '*': string })['*'];
      // rooted at assets/ itself, so an encoded `..` cannot climb to index.html's directory either
      // the same URL answers brotli, gzip or plain by Accept-Encoding: caches must keep them apart
      return withConsoleHeaders(reply).header('vary', 'accept-encoding').sendFile(file, assetsDir, { immutable: true, maxAge: '365d' });
    });

    scope.get(FALLBACK_ROUTE, routeOptions, (request, reply) => {
      if (isApiPath(request.url.split('?')[0])) return reply.callNotFound();
      if (!built) throw unavailable('the web console is not built: run npm run build');
      // index.html names the current hashed bundle, so it is revalidated on every load.
      return withConsoleHeaders(reply).header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    });
  });
}
