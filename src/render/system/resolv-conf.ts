import { isHostName, isIpAddress } from '../grammar.js';
import { renderRefused } from '../refusal.js';

/** The one writer of resolv.conf lines: `nameserver <IP>` or `search <domain> ...`. */
export function resolvConfLine(keyword: 'nameserver' | 'search', values: string[], field: string): string {
  const valid = keyword === 'nameserver' ? values.length === 1 && isIpAddress(values[0]) : values.length > 0 && values.every(isHostName);
  if (!valid) throw renderRefused('resolv.conf', field, keyword === 'nameserver' ? 'not an IP address' : 'not a domain name');
  return `${keyword} ${values.join(' ')}`;
}
