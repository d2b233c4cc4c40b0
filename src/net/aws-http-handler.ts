import { Readable } from 'node:stream';
import { outboundFetch, type OutboundPolicy } from './outbound.js';

/** What an AWS SDK client (S3, Route 53) hands a request handler (the subset of smithy's HttpRequest used here). */
interface SignedRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: unknown;
}

const escape = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function queryString(query: SignedRequest['query']): string {
  const parts: string[] = [];
  for (const key of Object.keys(query ?? {}).sort()) {
    const value = query![key];
    if (value === null) parts.push(escape(key));
    else for (const item of [value].flat()) parts.push(`${escape(key)}=${escape(item)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

async function bodyOf(body: unknown): Promise<Buffer | string | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks);
  }
  throw new Error('unsupported request body type');
}

/**
 * A request handler for the AWS SDK that sends every request through outboundFetch, so object-storage and Route 53
 * traffic obeys the appliance's outbound rules (https unless allowed, no private or loopback address unless the admin
 * allow-listed it, redirects to the same host only).
 */
export class OutboundAwsHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };

  constructor(private readonly policy: OutboundPolicy) {}

  async handle(request: SignedRequest, options: { abortSignal?: AbortSignal } = {}) {
    const port = request.port ? `:${request.port}` : '';
    const url = `${request.protocol}//${request.hostname}${port}${request.path}${queryString(request.query)}`;
    // fetch sets Host and Content-Length itself, from the same URL and body that were signed.
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'content-length'].includes(name.toLowerCase())));
    const response = await outboundFetch(url, {
      method: request.method,
      headers,
      body: await bodyOf(request.body),
      signal: options.abortSignal as never,
    }, this.policy);
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    return {
      response: {
        statusCode: response.status,
        reason: response.statusText,
        headers: responseHeaders,
        body: response.body ? Readable.fromWeb(response.body as never) : Readable.from([]),
      },
    };
  }

  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {}
}
