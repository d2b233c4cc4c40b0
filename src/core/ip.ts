import { isIP } from 'node:net';

/** Dotted IPv4 to an unsigned 32-bit number, or null. */
export function ipv4ToNumber(address: string): number | null {
  if (isIP(address) !== 4) return null;
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

export function numberToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** `10.0.0.0/24` → {network, prefix, first, last} (numbers), or null when not an IPv4 CIDR. */
export function parseIpv4Cidr(cidr: string): { address: number; prefix: number; network: number; broadcast: number } | null {
  const [address, prefixText, extra] = cidr.split('/');
  if (extra !== undefined || prefixText === undefined || !/^\d{1,2}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  const value = ipv4ToNumber(address);
  if (value === null || prefix > 32) return null;
  const size = 2 ** (32 - prefix);
  const network = Math.floor(value / size) * size;
  return { address: value, prefix, network, broadcast: network + size - 1 };
}

/** An IP address or an address/prefix of either family. */
export function isIpOrCidr(value: string): boolean {
  const [address, prefix, extra] = value.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** Dotted mask (`255.255.255.0`) → prefix length, or null. */
export function prefixToNetmask(prefix: number): string {
  return numberToIpv4(prefix === 0 ? 0 : (0xffffffff - (2 ** (32 - prefix) - 1)) >>> 0);
}

/** RFC 1123 host name label rules applied to a dotted name (no trailing dot). */
export function isDomainName(value: string, options: { wildcard?: boolean; requireDot?: boolean } = {}): boolean {
  let name = value;
  if (options.wildcard && name.startsWith('*.')) name = name.slice(2);
  if (name.length === 0 || name.length > 253) return false;
  if (options.requireDot && !name.includes('.')) return false;
  return name.split('.').every((label) => /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/.test(label));
}
