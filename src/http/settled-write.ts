import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModelRegistry } from '../model/registry.js';

type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * A write's handler, answered only once the change hooks its writes fired have run (so a read right after it
 * sees their effect, and a hook's failure is the request's failure). A handler that sends its answer itself
 * (`return reply.status(201).send(created)`) would otherwise answer before the hooks: its send is held until
 * they settle. (Such a handler returns what `send` returns; returning `reply` after sending would wait for an
 * answer that is being held.)
 */
export function settledWrite(models: Pick<ModelRegistry, 'settle'>, handler: Handler): Handler {
  return async (request, reply) => {
    const send = reply.send;
    let held: { payload: unknown } | undefined;
    // What the held send returns: the reply for chaining, but not thenable (a Reply resolves once it is sent, so
    // settle awaiting it would never end).
    const heldReply = Object.create(reply, { then: { value: undefined } }) as FastifyReply;
    reply.send = (payload?: unknown) => {
      held = { payload };
      return heldReply;
    };
    try {
      const result = await models.settle(() => handler(request, reply));
      reply.send = send;
      return held ? send.call(reply, held.payload) : result;
    } finally {
      reply.send = send;
    }
  };
}
