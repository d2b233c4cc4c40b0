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

/** Delays before the 2nd, 3rd and 4th attempt of a delivery. */
export const RETRY_DELAYS_MS = [1000, 4000, 16000];

/**
 * Up to 1 + RETRY_DELAYS_MS.length attempts; a refusal that retrying cannot change (4xx, the outbound guard's 400)
 * ends it. `attempt` throws with `status` for an HTTP answer that is not 2xx. Answers null when delivered, else why not.
 */
export async function withRetries(attempt: () => Promise<void>, stopped: () => boolean = () => false): Promise<string | null> {
  for (let index = 0; ; index++) {
    try {
      await attempt();
      return null;
    } catch (error) {
      const status = (error as { status?: number; statusCode?: number }).status ?? null;
      const refusedByGuard = (error as { statusCode?: number }).statusCode === 400;
      if (stopped() || refusedByGuard || !retryable(status) || index >= RETRY_DELAYS_MS.length) return (error as Error).message;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[index]).unref());
    }
  }
}

/** One signed POST with retries: throws on an answer other than 2xx so that withRetries sees its status. */
export function postWithRetries(target: WebhookTarget, body: string, headers: Record<string, string>, stopped?: () => boolean): Promise<string | null> {
  return withRetries(async () => {
    const status = await postWebhook(target, body, headers);
    if (status < 200 || status >= 300) throw Object.assign(new Error(`answered ${status}`), { status });
  }, stopped);
}
