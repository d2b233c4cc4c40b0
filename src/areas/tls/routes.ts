import { createServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { RouteSpec } from '../../http/route.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import type { CaService } from '../ca/service.js';
import { ApiTlsService } from './service.js';
import { TlsStatus } from './schema.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The HTTPS listener (`--tls-listen`) serving the same routes as `server`, or null when it is off. */
    secureServer: HttpsServer | null;
  }
}

const TAGS = ['settings'];
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})(:\d{1,5})?$/;

const encrypted = (request: FastifyRequest) => (request.raw.socket as TLSSocket).encrypted === true;

/**
 * HTTPS for the API, the console and both streams: the listener of `--tls-listen` (an https.Server whose
 * requests go to the same Fastify router and whose upgrades reach the same WebSocket handler), /settings/tls
 * and its status, the plain listener's redirect and HSTS on HTTPS answers.
 */
export function createTlsArea(context: AppContext, needs: { ca: CaService }): Area & { service: ApiTlsService } {
  const service = new ApiTlsService(context, needs.ca);
  let server: HttpsServer | null = null;

  const listening = () => (server?.listening ? (server.address() as AddressInfo) : null);
  /** Where the same request goes over HTTPS: the host the client asked for, the HTTPS port, the same path. */
  const httpsUrl = (request: FastifyRequest): string => {
    const port = listening()?.port ?? context.config.tlsListen!.port;
    const header = request.headers.host ?? '';
    let host = HOST_HEADER.test(header) ? header.replace(/:\d{1,5}$/, '') : request.raw.socket.localAddress ?? 'localhost';
    if (isIP(host) === 6) host = `[${host}]`;
    return `https://${host}${port === 443 ? '' : `:${port}`}${request.url}`;
  };

  const routes: RouteSpec[] = [
    ...singletonRoutes(service.settings, { path: '/api/v1/settings/tls', access: { read: 'settings:read', write: 'settings:write' }, tags: TAGS }),
    {
      method: 'GET', path: '/api/v1/settings/tls/status', access: 'settings:read', tags: TAGS,
      summary: 'The HTTPS listener and the certificate new connections get now',
      schema: { response: { 200: TlsStatus } },
      handler: () => service.status(listening()),
    },
  ];

  return {
    name: 'tls',
    routes,
    service,
    http(app: FastifyInstance) {
      if (context.config.tlsListen) {
        // Same router as the plain listener: every route, hook and the console. The certificate comes with start().
        server = createServer({ minVersion: 'TLSv1.2' }, app.routing);
        server.keepAliveTimeout = app.server.keepAliveTimeout;
        server.headersTimeout = app.server.headersTimeout;
        service.attach(server);
      }
      app.decorate('secureServer', server);
      app.addHook('onRequest', (request, reply, done) => {
        if (!service.redirect || encrypted(request)) return done();
        reply.code(301).header('location', httpsUrl(request)).send();
      });
      app.addHook('onSend', (request, reply, payload, done) => {
        if (encrypted(request)) reply.header('strict-transport-security', service.hsts);
        done(null, payload);
      });
    },
    async start() {
      await service.start();
      const listen = context.config.tlsListen;
      if (!server || !listen) return;
      const secure = server;
      await new Promise<void>((resolve, reject) => {
        secure.once('error', reject);
        secure.listen(listen.port, listen.host, () => {
          secure.off('error', reject);
          resolve();
        });
      });
      const address = listening()!;
      context.log.info({ url: `https://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` }, 'Bulwark listening over HTTPS');
    },
    async stop() {
      service.stop();
      if (!server) return;
      service.detach(server);
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      // Requests in flight finish (they were told `connection: close`); idle keep-alive sockets go now.
      server.closeIdleConnections();
      await closed;
    },
  };
}
