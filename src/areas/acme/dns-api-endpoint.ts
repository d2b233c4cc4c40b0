import type { OutboundPolicy } from '../../net/outbound.js';

/**
 * Where a DNS provider's API is reached: its public address, or `extra.endpoint` (`https://host[:port]`, no path)
 * for an API-compatible server the operator runs (or a test's stand-in); plain http only with `extra.allow_http`.
 * Either way every request goes through the outbound guard with the ACME account's allowed networks.
 */
export function dnsApiEndpoint(extra: Record<string, unknown>, fallback: string): string | { error: string } {
  if (extra.endpoint === undefined || extra.endpoint === '') return fallback;
  const text = String(extra.endpoint);
  const allowHttp = extra.allow_http === true;
  if (!/^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?\/?$/.test(text) && !/^https?:\/\/\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?\/?$/.test(text)) {
    return { error: 'extra.endpoint must be https://host[:port] without a path' };
  }
  if (text.startsWith('http:') && !allowHttp) return { error: 'extra.endpoint must use https (set extra.allow_http for a plain-http server)' };
  return text.replace(/\/$/, '');
}

/** The outbound policy of a provider's API requests. */
export function dnsApiPolicy(extra: Record<string, unknown>, allowList: readonly string[]): OutboundPolicy {
  return { allowList, allowHttp: extra.allow_http === true, timeoutMs: 30_000 };
}
