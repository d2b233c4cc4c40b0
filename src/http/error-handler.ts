import type { FastifyError, FastifyInstance } from 'fastify';
import { HttpError } from '../core/errors.js';
import { describeValidationErrors } from '../model/validation.js';
import type { MethodIndex } from './method-index.js';

/**
 * The one place errors become responses. Every error answers `{"error": "<message>"}`; client mistakes
 * are 400 with the field named (never 415/422); nothing internal ever reaches the client.
 */
export function installErrorHandling(app: FastifyInstance, methods: MethodIndex): void {
  app.setErrorHandler((error: FastifyError | HttpError | Error, request, reply) => {
    if (error instanceof HttpError) {
      return reply.status(error.statusCode).headers(error.headers).send({ error: error.message });
    }
    const fastifyError = error as FastifyError;
    if (fastifyError.validation) {
      const part = fastifyError.validationContext ?? 'request';
      return reply.status(400).send({ error: describeValidationErrors(fastifyError.validation, part) });
    }
    const status = fastifyError.statusCode ?? 500;
    if (status === 415 || fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(400).send({ error: `unsupported content type: send application/json` });
    }
    if (fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
      return reply.status(400).send({ error: 'body is not valid JSON' });
    }
    if (fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply.status(400).send({ error: 'body is empty: send a JSON object, or no Content-Type when there is nothing to send' });
    }
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (empty JSON body, body too large, bad content length): their messages
      // describe the request, never the server.
      return reply.status(status === 422 ? 400 : status).send({ error: fastifyError.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ error: 'internal error' });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = methods.allowed(path);
    if (allowed.length > 0) {
      return reply.status(405).header('allow', allowed.join(', ')).send({ error: `method ${request.method} not allowed on ${path}` });
    }
    return reply.status(404).send({ error: `no route ${request.method} ${path}` });
  });
}
