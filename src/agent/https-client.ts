import { isIP } from 'node:net';
import { resolveGuardedHost } from '../net/guarded-host.js';
import { outboundFetch } from '../net/outbound.js';

export interface TlsMaterial {
  /** The controller's CA (PEM); absent only for the first fetch of the CA itself, which is then pinned by hash. */
  ca?: string;
  cert?: string;
  key?: string;
}

/** Most bytes of one controller answer the agent reads. */
const ANSWER_CAP_BYTES = 1024 * 1024;

/** Where a controller URL goes, through the outbound guard: the checked address and the name TLS verifies (the WebSocket's). */
export async function guardedTarget(url: URL, allowList: readonly string[]) {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const { address } = await resolveGuardedHost(host, allowList);
  return { address, servername: isIP(host) ? undefined : host, host: url.host };
}

/**
 * One HTTPS request to the controller, through the outbound guard (outboundFetch: the allow-list, same-host
 * redirects, each answer capped at 1 MiB). With `tls.ca` the controller's certificate must chain to it and name the
 * host, and the client certificate is presented when given; without it (only to fetch the CA, whose hash the
 * enrolment token pins) nothing is trusted from the answer until the caller has checked that hash.
 */
export async function controllerRequest(
  base: string,
  path: string,
  options: { method: 'GET' | 'POST'; body?: unknown; tls: TlsMaterial; allowList: readonly string[]; timeoutMs?: number },
): Promise<{ status: number; text: string }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const response = await outboundFetch(new URL(path, base).toString(), {
    method: options.method, body: payload, headers: payload ? { 'content-type': 'application/json' } : {},
  }, {
    allowList: options.allowList, maxBytes: ANSWER_CAP_BYTES, timeoutMs: options.timeoutMs ?? 15_000,
    privateTls: { ca: options.tls.ca ?? null, cert: options.tls.cert, key: options.tls.key },
  });
  return { status: response.status, text: await response.text() };
}

/** An address literal must be among the certificate's IP subject alternative names (Node checks names, not this). */
export function checkAddressIdentity(address: string, subjectAltName: string | undefined): Error | undefined {
  const addresses = (subjectAltName ?? '').split(', ').filter((entry) => entry.startsWith('IP Address:')).map((entry) => entry.slice('IP Address:'.length));
  return addresses.includes(address) ? undefined : new Error(`the controller's certificate does not name ${address}`);
}
