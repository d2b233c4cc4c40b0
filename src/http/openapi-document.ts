import type { SwaggerTransformObject } from '@fastify/swagger';

/**
 * Finishing touches on the OpenAPI 3.1 document that @fastify/swagger generates from the route schemas:
 * operation ids, the list of tags, and JSON Schema 2020-12 spellings where a schema library wrote draft-07.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type OpenApiObject = { paths?: Record<string, Record<string, { tags?: string[] }>>; tags?: { name: string }[] } & Record<string, unknown>;

const API_PREFIX = '/api/v1/';

const capitalised = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const words = (segment: string) => segment.split(/[^A-Za-z0-9]+/).filter(Boolean).map(capitalised).join('');

/**
 * A stable, readable id from the method and the path: `GET /api/v1/rules/{id}` → `getRulesById`,
 * `POST /api/v1/vpn/wg/{id}/peers` → `postVpnWgByIdPeers`. Paths outside `/api/v1/` keep a `Root` mark, so
 * `/ws` and `/api/v1/ws` stay distinct.
 */
export function operationIdOf(method: string, path: string): string {
  const inApi = path.startsWith(API_PREFIX);
  const rest = inApi ? path.slice(API_PREFIX.length) : path;
  const parts = rest.split('/').filter(Boolean).map((segment) => {
    const parameter = /^\{(.+)\}$/.exec(segment);
    return parameter ? `By${words(parameter[1])}` : words(segment);
  });
  return `${method.toLowerCase()}${inApi ? '' : 'Root'}${parts.join('')}`;
}

/**
 * Draft-07 tuples (`items: [a, b]`, `additionalItems`), as TypeBox writes `Type.Tuple`, become 2020-12
 * `prefixItems`: OpenAPI 3.1 schemas are 2020-12, and there an array under `items` is not a schema. The
 * document is copied, never the route schemas the serialiser compiled.
 */
function as2020(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(as2020);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = as2020(value);
  if (copy.type === 'array' && Array.isArray(copy.items)) {
    copy.prefixItems = copy.items;
    delete copy.items;
    // `items: false` says "nothing after the tuple", but linters want a schema there: `{not: {}}` says the same.
    if (copy.additionalItems === false) copy.items = { not: {} };
    delete copy.additionalItems;
  }
  return copy;
}

/** Every tag an operation uses, declared once at the top (sorted), so the document names no unknown tag. */
function declaredTags(document: OpenApiObject): { name: string }[] {
  const names = new Set<string>();
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) for (const tag of operation.tags ?? []) names.add(tag);
  }
  return [...names].sort().map((name) => ({ name }));
}

type RequestBody = { required?: boolean; content?: Record<string, { schema?: { required?: unknown[] } }> };

/**
 * A POST whose body fields are all optional may be sent without a body (it runs as if sent `{}`, see
 * src/http/request-body.ts): its requestBody says `required: false`. Every other body is required.
 */
function markOptionalBodies(document: OpenApiObject): void {
  for (const operations of Object.values(document.paths ?? {})) {
    const body = (operations.post as { requestBody?: RequestBody } | undefined)?.requestBody;
    if (!body?.content) continue;
    const schemas = Object.values(body.content).map((media) => media.schema);
    if (schemas.every((schema) => !schema?.required?.length)) body.required = false;
  }
}

/** The `transformObject` of @fastify/swagger: runs once, the plugin caches its answer. */
export const finishDocument: SwaggerTransformObject = (generated) => {
  const document = as2020(('openapiObject' in generated ? generated.openapiObject : generated.swaggerObject) as Json) as OpenApiObject;
  document.tags = declaredTags(document);
  markOptionalBodies(document);
  return document as ReturnType<SwaggerTransformObject>;
};
