/**
 * The administrator's outbound allow-list (`/settings/outbound`, settings:write): the one list of loopback,
 * private or otherwise special addresses that destinations an operator writes may reach — reverse-proxy
 * upstreams and certificate-resolver CA servers, DNS blocklist sources, object storage, gateway probes.
 * Sections an operator writes cannot widen it: their own address lists may only name what this list covers
 * (docs/security.md).
 */
import { isIP } from 'node:net';
import { allowListOf, isAllowed, isSpecialAddress } from './special-addresses.js';

export const ADMIN_ALLOW_LIST_KIND = 'settings_outbound';
export const ADMIN_ALLOW_LIST_PATH = '/api/v1/settings/outbound';

/** What reads the section: the configuration store (or anything with its getSingleton). */
export interface SingletonReader {
  getSingleton(kind: string): Record<string, unknown> | undefined;
}

export function adminAllowList(store: SingletonReader): string[] {
  const entries = store.getSingleton(ADMIN_ALLOW_LIST_KIND)?.allowed_addresses;
  return Array.isArray(entries) ? entries.map(String) : [];
}

/**
 * Why a destination host (a name or a literal address) is refused at write time, or null: a literal special
 * address not on the administrator's list. Names (`localhost` too) are resolved when the connection is made,
 * by the outbound guard (or, for the reverse proxy, before every apply).
 */
export function adminDestinationProblem(host: string, store: SingletonReader): string | null {
  const literal = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(literal) ? [literal] : [];
  const list = allowListOf(adminAllowList(store));
  const refused = addresses.find((address) => isSpecialAddress(address) && !isAllowed(address, list));
  return refused === undefined ? null : `${host} is a loopback, private or otherwise special address: an administrator must name it in ${ADMIN_ALLOW_LIST_PATH} (allowed_addresses) first`;
}

/**
 * A section's own address list (kept for compatibility) may only narrow the administrator's: each entry must be
 * on it verbatim, or be a single address it covers. Answers the first entry that is not, or null.
 */
export function entryNotCoveredByAdmin(entries: readonly string[], store: SingletonReader): string | null {
  const admin = adminAllowList(store);
  const list = allowListOf(admin);
  return entries.find((entry) => !admin.includes(entry) && !(isIP(entry) && list.check(entry, isIP(entry) === 6 ? 'ipv6' : 'ipv4'))) ?? null;
}

/** The message for such an entry, naming the field. */
export const notCoveredMessage = (field: string, entry: string): string =>
  `${field}: "${entry}" is not on the administrator's outbound allow-list; an administrator must name it in ${ADMIN_ALLOW_LIST_PATH} (allowed_addresses) first`;
