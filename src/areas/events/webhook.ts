import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { outboundFetch } from '../../net/outbound.js';
import { allowListOf } from '../../net/special-addresses.js';

export interface WebhookTarget {
  url: string;
  /** The opened secret ('' when none is set: the request then carries no signature). */
  secret: string;
  allowed_addresses: readonly string[];
}

/** `sha256=<hex>`: HMAC-SHA256 of the exact body bytes with the webhook's secret (X-Bulwark-Signature). */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** Plain http only to an IP literal the administrator listed in allowed_addresses (a collector on the LAN). */
function allowsHttp(target: WebhookTarget): boolean {
  const url = new URL(target.url);
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  return family !== 0 && allowListOf(target.allowed_addresses).check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/** One POST through the outbound guard; answers the HTTP status (an answer other than 2xx is not delivered). */
export async function postWebhook(target: WebhookTarget, body: string, headers: Record<string, string>, timeoutMs = 10_000): Promise<number> {
  const response = await outboundFetch(target.url, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Bulwark-Notifier',
      ...(target.secret ? { 'x-bulwark-signature': webhookSignature(target.secret, body) } : {}),
      ...headers,
    },
  }, { allowList: target.allowed_addresses, allowHttp: allowsHttp(target), timeoutMs, maxRedirects: 0, maxBytes: 64 * 1024 });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
}

/** Whether a failed attempt is worth repeating: no answer, 408, 429 or a server error. */
export const retryable = (status: number | null) => status === null || status === 408 || status === 429 || status >= 500;
