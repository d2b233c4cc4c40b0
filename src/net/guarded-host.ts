import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { OutboundRefused } from './outbound.js';
import { allowListOf, isAllowed } from './special-addresses.js';

/**
 * The outbound guard for protocols that are not fetched as URLs (SMTP, syslog): resolves the host once, refuses
 * it when any of its addresses is loopback, private or otherwise special and not on the admin's allow-list, and
 * returns the address to connect to, so the connection goes where the check looked (no second lookup to rebind).
 */
export async function resolveGuardedHost(host: string, allowList: readonly string[]): Promise<{ address: string }> {
  const allowed = allowListOf(allowList);
  const literal = host.replace(/^\[|\]$/g, '');
  const addresses = isIP(literal)
    ? [{ address: literal, family: isIP(literal) }]
    : await lookup(host, { all: true }).catch(() => {
        throw new OutboundRefused(`${host} does not resolve`);
      });
  if (addresses.length === 0) throw new OutboundRefused(`${host} does not resolve`);
  const refused = addresses.find((entry) => !isAllowed(entry.address, allowed));
  if (refused) throw new OutboundRefused(`${host} is (or resolves to) ${refused.address}, a blocked address: add it to allowed_addresses to permit it`);
  return { address: addresses[0].address };
}
