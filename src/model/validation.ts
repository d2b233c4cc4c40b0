import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { badRequest } from '../core/errors.js';

// ajv-formats ships CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function makeAjv(coerceTypes: boolean | 'array', verbose = false): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    verbose,
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

/** Turns ajv's errors into a message that names the offending field, e.g. "body.port must be <= 65535". */
export function describeValidationErrors(errors: readonly Partial<ErrorObject>[], part: string): string {
  if (errors.length === 0) return `${part} is invalid`;
  const last = errors[errors.length - 1];
  return last.keyword === 'anyOf' ? describeUnion(errors, last, part) : describeError(errors[0], part);
}

function describeError(error: Partial<ErrorObject>, part: string): string {
  const params = (error.params ?? {}) as Record<string, unknown>;
  const name = (extra?: string) => fieldName(error, part, extra);
  switch (error.keyword) {
    case 'required':
      return `${name(String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${name(String(params.additionalProperty))} is not a known field`;
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).join(', ');
      return typeof error.data === 'string' && (part === 'querystring' || part === 'params')
        ? `${name()}: ${JSON.stringify(error.data.slice(0, 64))} is not one of: ${allowed}`
        : `${name()} must be one of: ${allowed}`;
    }
    default:
      return `${name()} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * A union (anyOf, e.g. a nullable field or a port in several forms) fails with one error per branch, then its
 * own. The branch whose type fits the value says what is wrong with it (a bound, a missing property); when no
 * branch's type fits, the message lists the types the field takes, never only the first branch's.
 */
function describeUnion(errors: readonly Partial<ErrorObject>[], union: Partial<ErrorObject>, part: string): string {
  const prefix = `${union.schemaPath ?? ''}/`;
  const branches = new Map<string, Partial<ErrorObject>[]>();
  for (const error of errors.slice(0, -1)) {
    if (!error.schemaPath?.startsWith(prefix)) continue;
    const branch = error.schemaPath.slice(prefix.length).split('/')[0];
    branches.set(branch, [...(branches.get(branch) ?? []), error]);
  }
  const alternatives: string[] = [];
  for (const [branch, branchErrors] of branches) {
    const [first] = branchErrors;
    const own = branchErrors.length === 1 && first.instancePath === union.instancePath;
    if (own && first.schemaPath === `${prefix}${branch}/type`) alternatives.push(String((first.params as { type?: unknown }).type));
    else if (own && first.keyword === 'const') alternatives.push(JSON.stringify((first.params as { allowedValue?: unknown }).allowedValue));
    else return describeValidationErrors(branchErrors, part);
  }
  if (alternatives.length === 0) return describeError(union, part);
  const unique = [...new Set(alternatives)];
  const listed = unique.length === 1 ? unique[0] : `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
  return `${fieldName(union, part)} must be ${listed}`;
}

function fieldName(error: Partial<ErrorObject>, part: string, extra?: string): string {
  const path = (error.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  return [part, ...path, ...(extra ? [extra] : [])].join('.');
}
