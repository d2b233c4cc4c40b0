import type { FastifySchemaCompiler } from 'fastify';
import { bodyAjv, makeAjv } from '../model/validation.js';

/** Query strings and path params are text and are coerced; bodies are validated as the model validates them. */
// Verbose: an error carries the refused text value, so a message can quote it (never a body's, which may be a secret).
const textAjv = makeAjv('array', true);

// A missing or null body never reaches a body validator: src/http/request-body.ts refuses it or, for a POST
// whose fields are all optional, stands `{}` in for it.
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  httpPart === 'body' ? bodyAjv.compile(schema as object) : textAjv.compile(schema as object);
