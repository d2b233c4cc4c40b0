import { isIP } from 'node:net';

/** An IP address with an optional prefix, e.g. `10.0.0.1/24`, `fd00::1`, `192.168.1.0/24`. */
export interface Cidr {
  address: string;
  family: 4 | 6;
  /** Present only when written. */
  prefix?: number;
}

export function parseCidr(text: string): Cidr | null {
  const [address, prefix, extra] = text.trim().split('/');
  const family = isIP(address ?? '');
  if (!family || extra !== undefined) return null;
  if (prefix === undefined) return { address, family: family as 4 | 6 };
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return null;
  return { address, family: family as 4 | 6, prefix: Number(prefix) };
}

/**
 * The reference's "Address" syntax: `any`, an IP, a CIDR or a `<table>` name; `interface` and
 * `interface address` mean any. Returns the normalised text, or null when it is none of those.
 */
export function parseAddressSpec(text: string): string | null {
  const value = text.trim();
  if (value === 'any' || value === 'interface' || value === 'interface address') return 'any';
  if (/^<[A-Za-z0-9_.-]{1,64}>$/.test(value)) return value;
  return parseCidr(value) ? value : null;
}

export const ipv4ToNumber = (address: string): number =>
  address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);

export const numberToIpv4 = (value: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');

/** The network of an address/prefix, e.g. 172.29.240.1/24 → 172.29.240.0/24; a bare IP → /32 or /128. */
export function networkOf(cidr: Cidr): string {
  if (cidr.family === 6) return cidr.prefix === undefined ? `${cidr.address}/128` : `${maskIpv6(cidr.address, cidr.prefix)}/${cidr.prefix}`;
  const prefix = cidr.prefix ?? 32;
  const size = 2 ** (32 - prefix);
  const base = Math.floor(ipv4ToNumber(cidr.address) / size) * size;
  return `${numberToIpv4(base)}/${prefix}`;
}

export function ipv6ToBigInt(address: string): bigint {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const expand = (groups: string[]) =>
    groups.flatMap((group) => (group.includes('.') ? ((n) => [(n >>> 16).toString(16), (n & 0xffff).toString(16)])(ipv4ToNumber(group)) : [group]));
  const l = expand(left);
  const r = expand(right);
  const groups = tail === undefined ? l : [...l, ...Array(8 - l.length - r.length).fill('0'), ...r];
  return groups.reduce((acc, group) => (acc << 16n) + BigInt(parseInt(group || '0', 16)), 0n);
}

export function bigIntToIpv6(value: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((value >> BigInt(i * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups.
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
}

function maskIpv6(address: string, prefix: number): string {
  const mask = prefix === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - prefix)) - 1n);
  return bigIntToIpv6(ipv6ToBigInt(address) & mask);
}

/** The largest CIDR blocks exactly covering [start, end] (IPv4 numbers). */
export function rangeToCidrs4(start: number, end: number): string[] {
  const blocks: string[] = [];
  let current = start;
  while (current <= end) {
    let size = 1;
    while (current % (size * 2) === 0 && current + size * 2 - 1 <= end) size *= 2;
    blocks.push(`${numberToIpv4(current)}/${32 - Math.log2(size)}`);
    current += size;
  }
  return blocks;
}

/** The same for IPv6 ranges (as BigInt). */
export function rangeToCidrs6(start: bigint, end: bigint): string[] {
  const blocks: string[] = [];
  let current = start;
  while (current <= end) {
    let bits = 0n;
    while (bits < 128n && current % (1n << (bits + 1n)) === 0n && current + (1n << (bits + 1n)) - 1n <= end) bits++;
    blocks.push(`${bigIntToIpv6(current)}/${128n - bits}`);
    current += 1n << bits;
  }
  return blocks;
}
