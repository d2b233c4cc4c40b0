/**
 * acme-client speaks HTTP through its own axios instance. Every request it makes is routed here, through the
 * outbound guard (src/net/outbound.ts): https only, addresses checked after DNS, private addresses only when
 * the ACME account allows them (an on-premises CA). The guard's policy of the order in progress is carried in
 * an AsyncLocalStorage, so concurrent orders of different appliances in one process never share one.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import * as acme from 'acme-client';
import { outboundFetch, type OutboundPolicy } from '../../net/outbound.js';

const policies = new AsyncLocalStorage<OutboundPolicy>();

interface AdapterConfig {
  url?: string;
  baseURL?: string;
  method?: string;
  headers?: { toJSON?: () => Record<string, unknown> } & Record<string, unknown>;
  data?: unknown;
  validateStatus?: ((status: number) => boolean) | null;
}

/** An axios adapter over the outbound guard (responses are handed back as text; axios parses JSON itself). */
async function guardedAdapter(config: AdapterConfig) {
  const policy = policies.getStore();
  const fail = (message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), { config, isAxiosError: true, ...extra });
  if (!policy) throw new Error('ACME requests are made only inside an order');
  const url = new URL(String(config.url), config.baseURL).toString();
  const raw = typeof config.headers?.toJSON === 'function' ? config.headers.toJSON() : (config.headers ?? {});
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined && value !== null && typeof value !== 'object') headers[name] = String(value);
  let response: Response;
  try {
    response = await outboundFetch(url, { method: (config.method ?? 'get').toUpperCase(), headers, body: config.data === undefined || config.data === null ? undefined : String(config.data) }, policy);
  } catch (error) {
    // No retries and no config: acme-client's interceptor passes such an error on as it is, so a refused or
    // unreachable CA is reported at once with the guard's reason.
    throw new Error((error as Error).message);
  }
  const result = {
    data: await response.text(),
    status: response.status,
    statusText: response.statusText,
    headers: Object.fromEntries([...response.headers].map(([name, value]) => [name.toLowerCase(), value])),
    config,
    request: {},
  };
  if (!config.validateStatus || config.validateStatus(result.status)) return result;
  throw fail(`Request failed with status code ${result.status}`, { response: result });
}

acme.axios.defaults.adapter = guardedAdapter as never;

/** Runs an ACME exchange with every request going through the outbound guard under `policy`. */
export function throughOutboundGuard<T>(policy: OutboundPolicy, run: () => Promise<T>): Promise<T> {
  return policies.run({ timeoutMs: 30_000, ...policy }, run);
}
