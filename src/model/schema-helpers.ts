import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';

/** A string enum as plain JSON Schema `enum`, so a bad value answers "must be one of: a, b, c". */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options });

export const IdParams = (name = 'id') => Type.Object({ [name]: Uuid() });

/** Deep copy of a JSON Schema without `default` keywords (partial updates must not inject defaults). */
export function withoutDefaults<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutDefaults) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) if (key !== 'default') copy[key] = withoutDefaults(value);
  return copy as T;
}

export type JsonObjectSchema = TSchema & { properties: Record<string, TSchema>; required?: string[] };

/**
 * The data a model holds for a schema: the schema's static type when the declaration gives a TypeBox object
 * (with its defaults filled, every field is present), plain ConfigData for a schema only known as an object.
 */
export type DataOf<S extends JsonObjectSchema> = JsonObjectSchema extends S ? Record<string, unknown> : Static<S> & Record<string, unknown>;
