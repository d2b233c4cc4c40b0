import { isHostName, isIpAddress } from '../grammar.js';
import { renderRefused } from '../refusal.js';

/** The one writer of /etc/hosts lines: an address, then host names, separated by whitespace; nothing else fits. */
export function hostsLine(address: string, names: string[], field: string): string {
  if (!isIpAddress(address)) throw renderRefused('hosts file', field, 'not an IP address');
  for (const name of names) if (!isHostName(name)) throw renderRefused('hosts file', field, 'not a host name');
  return `${address}\t${names.join(' ')}`;
}
