import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sample } from 'openapi-sampler';
import { toSpecPath } from '../../src/http/route.js';
import type { Headers } from './auth.js';

/**
 * Drives an operation the way a client reading the OpenAPI document would: path parameters name objects that
 * exist (listed, or created through the collection's POST with a sampled body), the body and required query
 * parameters are sampled from the documented schemas. Used to compare the document with real answers.
 */

type JSONSchema7 = Parameters<typeof sample>[0];

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema?: JSONSchema7;
}

export interface DocumentedResponse {
  description: string;
  content?: Record<string, { schema?: object }>;
  headers?: Record<string, { schema?: object }>;
}

export interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JSONSchema7 }> };
  responses: Record<string, DocumentedResponse>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** An id that names nothing: what a path parameter gets when no object of its kind can be had. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

const SAMPLING = { skipReadOnly: true, skipNonRequired: true, quiet: true, enablePatterns: true } as const;

/**
 * Values that pass the services' own checks where a schema cannot say them (a free string the service parses
 * as an address, a range, JSON): used for top-level fields of that name whose schema has no enum or format.
 */
const FIELD_EXAMPLES: Record<string, unknown> = {
  action: 'pass', alias_type: 'host', nat_type: 'snat', protocol: 'tcp', network: '192.0.2.0/24', destination: '192.0.2.0/24',
  prefix: '192.0.2.0/24', next_hop: '192.0.2.1', gateway: '192.0.2.1', server: '192.0.2.53', servers: ['192.0.2.53'],
  value: '192.0.2.10', mac_address: '02:00:00:00:00:01', pattern: 'ads.example.com', country_code: 'NL', config_json: '{}',
  time_ranges: ['08:00-17:00'], contact_email: 'admin@example.com', password: 'Probe-password-1', permissions: ['rules:read'],
  cert_file: '/etc/ssl/probe.pem', key_file: '/etc/bulwark/probe.key', rule: 'Host(`probe.example.com`)', service: 'probe-svc',
  allowed_ips: '10.9.0.2/32', endpoint: '192.0.2.7:51820', address: '10.9.0.1/24', url: 'https://lists.example.com/hosts.txt',
};

export class OperationDriver {
  /** Values found or created for a collection path (`/api/v1/aliases` → an alias id). */
  private readonly known = new Map<string, string>();

  constructor(
    private readonly app: FastifyInstance,
    readonly document: OpenApiDocument,
    private readonly headers: () => Headers,
  ) {}

  operation(method: string, routerPath: string): Operation | undefined {
    return this.document.paths[toSpecPath(routerPath)]?.[method.toLowerCase()];
  }

  /** Sends the natural request for an operation and returns the answer with the URL it went to. */
  async drive(method: string, routerPath: string, extraHeaders: Headers = {}): Promise<{ url: string; response: LightMyRequestResponse }> {
    const operation = this.operation(method, routerPath)!;
    const url = (await this.concretePath(toSpecPath(routerPath), operation)) + this.queryOf(operation);
    const bodySchema = operation.requestBody?.content['application/json']?.schema;
    const response = await this.app.inject({
      method: method as 'GET',
      url,
      headers: { ...this.headers(), ...(bodySchema ? { 'content-type': 'application/json' } : {}), ...extraHeaders },
      ...(bodySchema ? { payload: JSON.stringify(this.sampleOf(bodySchema)) } : {}),
    });
    return { url, response };
  }

  /** The URL an operation is called at, its path parameters naming objects that exist where one can be had. */
  async urlOf(method: string, routerPath: string): Promise<string> {
    return this.concretePath(toSpecPath(routerPath), this.operation(method, routerPath) ?? { responses: {} });
  }

  private sampleOf(schema: JSONSchema7): unknown {
    const value = sample(schema, SAMPLING, this.document);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const properties = (schema as { properties?: Record<string, { enum?: unknown; const?: unknown; format?: unknown }> }).properties ?? {};
    const fields = value as Record<string, unknown>;
    for (const [name, example] of Object.entries(FIELD_EXAMPLES)) {
      const property = properties[name];
      const free = property && property.enum === undefined && property.const === undefined && property.format === undefined;
      if (free && name in fields && Array.isArray(example) === Array.isArray(fields[name])) fields[name] = example;
    }
    return fields;
  }

  private queryOf(operation: Operation): string {
    const required = (operation.parameters ?? []).filter((p) => p.in === 'query' && p.required && p.schema);
    if (required.length === 0) return '';
    return `?${new URLSearchParams(required.map((p): [string, string] => [p.name, String(this.sampleOf(p.schema!))])).toString()}`;
  }

  /** Fills each `{param}` with a value that names an existing object where one can be had. */
  private async concretePath(specPath: string, operation: Operation): Promise<string> {
    const segments = specPath.split('/');
    for (let index = 0; index < segments.length; index++) {
      const parameter = /^\{(.+)\}$/.exec(segments[index]);
      if (!parameter) continue;
      const collectionPath = segments.slice(0, index).join('/');
      const schema = operation.parameters?.find((p) => p.in === 'path' && p.name === parameter[1])?.schema;
      segments[index] = encodeURIComponent(await this.valueFor(collectionPath, parameter[1], schema));
    }
    return segments.join('/');
  }

  private async valueFor(collectionPath: string, name: string, schema: JSONSchema7 | undefined): Promise<string> {
    const key = `${collectionPath} ${name}`;
    const known = this.known.get(key);
    if (known !== undefined) return known;
    const found = (await this.listed(collectionPath, name)) ?? (await this.created(collectionPath, name));
    const value = found ?? (schema?.format === 'uuid' || !schema ? UNKNOWN_ID : String(this.sampleOf(schema)));
    this.known.set(key, value);
    return value;
  }

  private pick(record: unknown, name: string): string | undefined {
    if (record === null || typeof record !== 'object') return undefined;
    const fields = record as Record<string, unknown>;
    const value = fields[name] ?? fields.id ?? fields.name;
    return typeof value === 'string' ? value : undefined;
  }

  private async listed(collectionPath: string, name: string): Promise<string | undefined> {
    if (!this.operation('GET', collectionPath)) return undefined;
    const response = await this.app.inject({ method: 'GET', url: collectionPath, headers: this.headers() });
    if (response.statusCode !== 200 || !response.headers['content-type']?.toString().includes('json')) return undefined;
    const body = response.json() as unknown;
    return Array.isArray(body) && body.length > 0 ? this.pick(body[0], name) : undefined;
  }

  private async created(collectionPath: string, name: string): Promise<string | undefined> {
    const create = this.operation('POST', collectionPath);
    const schema = create?.requestBody?.content['application/json']?.schema;
    if (!create || !schema || collectionPath.includes('{')) return undefined;
    const response = await this.app.inject({
      method: 'POST', url: collectionPath, headers: { ...this.headers(), 'content-type': 'application/json' }, payload: JSON.stringify(this.sampleOf(schema)),
    });
    return response.statusCode === 201 ? this.pick(response.json(), name) : undefined;
  }
}

/** The media type of an answer, without parameters (`text/plain; charset=utf-8` → `text/plain`). */
export const mediaTypeOf = (response: LightMyRequestResponse): string | undefined =>
  response.headers['content-type']?.toString().split(';')[0].trim().toLowerCase();

/** What is wrong with an answer given its operation's documented responses; undefined when it tells the truth. */
export function discrepancy(operation: Operation, response: LightMyRequestResponse): string | undefined {
  const status = String(response.statusCode);
  const documented = operation.responses[status];
  if (!documented) return `answered ${status}, documented ${Object.keys(operation.responses).join(', ')}`;
  const media = mediaTypeOf(response);
  if (documented.content) {
    const types = Object.keys(documented.content);
    if (!media || !types.includes(media)) return `${status} answered ${media ?? 'no content type'}, documented ${types.join(', ')}`;
  } else if (response.rawPayload.length > 0) {
    return `${status} answered a ${media ?? 'untyped'} body, documented none`;
  }
  // The serialiser turns an object under a field documented as a string into this text: a schema that lies.
  if (media === 'application/json' && response.body.includes('"[object Object]"')) return `${status} serialised an object as a string: its schema is wrong`;
  for (const header of Object.keys(documented.headers ?? {})) {
    if (response.headers[header.toLowerCase()] === undefined) return `${status} lacks the documented header ${header}`;
  }
  return undefined;
}
