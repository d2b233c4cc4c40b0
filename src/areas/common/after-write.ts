import type { FastifyReply } from 'fastify';
import type { RouteSpec } from '../../http/route.js';

/**
 * Runs a side effect (re-render, reload) after each successful write route of a declared collection, before
 * the answer is sent, so a client that reads right after its write sees the effect.
 */
export function afterWrite(routes: RouteSpec[], effect: () => unknown): RouteSpec[] {
  return routes.map((route) => {
    if (route.method === 'GET') return route;
    return {
      ...route,
      handler: async (request, reply) => {
        let status = 200;
        let payload: unknown;
        const deferred = {
          status(code: number) {
            status = code;
            return deferred;
          },
          send(body?: unknown) {
            payload = body;
            return deferred;
          },
          header(name: string, value: string) {
            reply.header(name, value);
            return deferred;
          },
        };
        const result = await route.handler(request, deferred as unknown as FastifyReply);
        await effect();
        return reply.status(status).send(result === deferred ? payload : result);
      },
    };
  });
}
