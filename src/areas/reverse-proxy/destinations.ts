/**
 * Where the reverse proxy itself connects: upstream server URLs and addresses, forward-auth addresses and ACME
 * CA servers inside the JSON of services, middlewares and certificate resolvers. Loopback, link-local (the
 * metadata address), private and other special addresses need the administrator's outbound allow-list
 * (settings:write, src/net/admin-allow-list.ts): checked for literals when an object is written (400), and
 * again, with host names resolved, before every apply (409).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { adminAllowList, adminDestinationProblem, type SingletonReader } from '../../net/admin-allow-list.js';
import { allowListOf, isAllowed } from '../../net/special-addresses.js';

/** The kinds whose JSON names places the proxy connects to (entry points only listen). */
export const OUTBOUND_KINDS = new Set(['rp_http_service', 'rp_tcp_service', 'rp_udp_service', 'rp_http_middleware', 'rp_cert_resolver']);
/** Keys whose value is a destination: `url`/`address` (servers, forwardAuth), `caServer` (ACME), `endpoint`. */
const DESTINATION_KEYS = new Set(['url', 'address', 'caserver', 'endpoint']);

/** The host of `scheme://host[:port]/…` or `host:port` / `[v6]:port`, or null. */
export function destinationHost(value: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    return URL.canParse(value) ? new URL(value).hostname.replace(/^\[|\]$/g, '') : null;
  }
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s]+)):\d{1,5}$/.exec(value) ?? /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s/]+))$/.exec(value);
  return match ? (match[1] ?? match[2]) : isIP(value) ? value : null;
}

/** Every destination in a parsed JSON value, with its path (`servers[0].url`). */
export function destinationsIn(value: unknown, path = ''): { where: string; host: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => destinationsIn(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const where = path ? `${path}.${key}` : key;
    if (typeof item === 'string' && DESTINATION_KEYS.has(key.toLowerCase())) {
      const host = destinationHost(item);
      return host ? [{ where, host }] : [];
    }
    return destinationsIn(item, where);
  });
}

const parsed = (text: unknown): unknown => {
  try {
    return JSON.parse(String(text));
  } catch {
    return null;
  }
};

/** Write time: the first literal special destination the administrator has not allowed, as a 400 message. */
export function destinationWriteProblem(kind: string, data: Record<string, unknown>, store: SingletonReader): string | null {
  if (!OUTBOUND_KINDS.has(kind) || data.config_json === null || data.config_json === undefined) return null;
  for (const { where, host } of destinationsIn(parsed(data.config_json))) {
    const problem = adminDestinationProblem(host, store);
    if (problem) return `body.config_json: ${where}: ${problem}`;
  }
  return null;
}

/**
 * Apply time: every enabled object's destinations, names resolved; the first refused one as a message (the
 * apply's 409), or null. A name that does not resolve now is left to the proxy (it cannot connect either).
 */
export async function destinationApplyProblem(objects: { kind: string; data: Record<string, unknown> }[], store: SingletonReader): Promise<string | null> {
  const allowed = allowListOf(adminAllowList(store));
  for (const { kind, data } of objects) {
    if (!OUTBOUND_KINDS.has(kind) || data.enabled === false) continue;
    for (const { where, host } of destinationsIn(parsed(data.config_json))) {
      const literal = adminDestinationProblem(host, store);
      if (literal) return `${String(data.name)} ${where}: ${literal}`;
      if (isIP(host)) continue;
      const addresses = await lookup(host, { all: true }).catch(() => []);
      const refused = addresses.find((entry) => !isAllowed(entry.address, allowed));
      if (refused) return `${String(data.name)} ${where}: ${host} resolves to ${refused.address}, a loopback, private or otherwise special address: an administrator must name it in /api/v1/settings/outbound (allowed_addresses) first`;
    }
  }
  return null;
}
