import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { badRequest } from '../core/errors.js';

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/** Bodies and stored objects are JSON and must carry the right types: no coercion (`"80"` is not a port). */
export const bodyAjv = makeAjv(false);

/** Compiles a body schema for validation outside a route (merged updates, imports, stored objects). */
export function compileBodyValidator(schema: object): ValidateFunction {
  return bodyAjv.compile(schema);
}

/** Validates data against a compiled body schema, throwing a 400 that names the field. */
export function assertValid(validate: ValidateFunction, data: unknown, part = 'body'): void {
  if (!validate(data)) throw badRequest(describeValidationErrors(validate.errors ?? [], part));
}

/** Turns an ajv error into a message that names the offending field, e.g. "body.port must be <= 65535". */
export function describeValidationErrors(errors: readonly Partial<ErrorObject>[], part: string): string {
  const error = errors[0];
  if (!error) return `${part} is invalid`;
  const path = (error.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = (error.params ?? {}) as Record<string, unknown>;
  const name = (extra?: string) => [part, ...path, ...(extra ? [extra] : [])].join('.');
  switch (error.keyword) {
    case 'required':
      return `${name(String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${name(String(params.additionalProperty))} is not a known field`;
    case 'enum':
      return `${name()} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${name()} ${error.message ?? 'is invalid'}`;
  }
}
