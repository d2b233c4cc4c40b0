import type { FastifySchemaCompiler } from 'fastify';
import { bodyAjv, makeAjv } from '../model/validation.js';

/** Query strings and path params are text and are coerced; bodies are validated as the model validates them. */
// Verbose: an error carries the refused text value, so a message can quote it (never a body's, which may be a secret).
const textAjv = makeAjv('array', true);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return textAjv.compile(schema as object);
  const validate = bodyAjv.compile(schema as object);
  // An action whose body has no required field may be called with no body at all.
  const optional = !((schema as { required?: string[] }).required?.length);
  if (!optional) return validate;
  // The wrapper must carry ajv's errors: Fastify reads them from the function it was given.
  const wrapped = (data: unknown) => {
    if (data === undefined || data === null) {
      wrapped.errors = null;
      return true;
    }
    const valid = validate(data);
    wrapped.errors = validate.errors;
    return valid;
  };
  wrapped.errors = null as typeof validate.errors;
  return wrapped;
};
