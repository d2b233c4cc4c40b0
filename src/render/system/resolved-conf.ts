import { isHostName, isIpAddress } from '../grammar.js';
import { renderRefused } from '../refusal.js';

/** The one writer of systemd-resolved drop-in lines: `DNS=<IP> …` or `Domains=<domain> …`. */
export function resolvedLine(keyword: 'DNS' | 'Domains', values: string[], field: string): string {
  const valid = keyword === 'DNS' ? values.every(isIpAddress) : values.every(isHostName);
  if (!valid) throw renderRefused('resolved.conf', field, keyword === 'DNS' ? 'not an IP address' : 'not a domain name');
  return `${keyword}=${values.join(' ')}`;
}
