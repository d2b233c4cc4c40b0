import { isIP } from 'node:net';

/** An address family: 4 or 6. */
export type Family = 4 | 6;

/** One CIDR block, normalised (host bits cleared). */
export interface Cidr {
  family: Family;
  /** The network address as an integer. */
  base: bigint;
  prefix: number;
}

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

/** Parses a single IPv4 or IPv6 address (no prefix) into its family and integer value. */
export function parseIp(text: string): { family: Family; value: bigint } | undefined {
  const family = isIP(text);
  if (family === 4) {
    let value = 0n;
    for (const part of text.split('.')) value = (value << 8n) | BigInt(Number(part));
    return { family, value };
  }
  if (family === 6) return { family, value: parseIpv6(text) };
  return undefined;
}

function parseIpv6(text: string): bigint {
  let address = text.toLowerCase();
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (v4) {
    const value = parseIp(v4[1])!.value;
    address = address.slice(0, -v4[1].length) + `${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const [head, tail] = address.split('::') as [string, string | undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const parts = tail === undefined ? headParts : [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  let value = 0n;
  for (const part of parts) value = (value << 16n) | BigInt(parseInt(part || '0', 16));
  return value;
}

export function formatIp(family: Family, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const hextets = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (length >= 2) of zero hextets.
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (hextets[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && hextets[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) { bestStart = i; bestLength = j - i; }
    i = j;
  }
  const hex = hextets.map((h) => h.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** Parses `ip` or `ip/prefix`; the prefix must fit the family. Host bits are cleared. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) return undefined;
  const bits = BITS[ip.family];
  let prefix = bits;
  if (slash >= 0) {
    const prefixText = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > bits) return undefined;
    prefix = Number(prefixText);
  }
  return { family: ip.family, base: clearHostBits(ip.value, prefix, bits), prefix };
}

function clearHostBits(value: bigint, prefix: number, bits: number): bigint {
  const hostBits = BigInt(bits - prefix);
  return (value >> hostBits) << hostBits;
}

/** Parses `first-last` (same family, first <= last). */
export function parseRange(text: string): { family: Family; first: bigint; last: bigint } | undefined {
  const dash = text.indexOf('-');
  if (dash < 0) return undefined;
  const first = parseIp(text.slice(0, dash).trim());
  const last = parseIp(text.slice(dash + 1).trim());
  if (!first || !last || first.family !== last.family || first.value > last.value) return undefined;
  return { family: first.family, first: first.value, last: last.value };
}

/** The smallest list of CIDR blocks exactly covering first..last (pf tables hold no ranges). */
export function rangeToCidrs(family: Family, first: bigint, last: bigint): Cidr[] {
  const bits = BITS[family];
  const blocks: Cidr[] = [];
  let current = first;
  while (current <= last) {
    // The largest block that starts aligned at `current` and ends inside the range.
    let size = bitLength(last - current + 1n) - 1;
    const alignment = current === 0n ? bits : bitLength(current & -current) - 1;
    if (alignment < size) size = alignment;
    blocks.push({ family, base: current, prefix: bits - size });
    current += 1n << BigInt(size);
  }
  return blocks;
}

const bitLength = (value: bigint): number => value.toString(2).length;

export function formatCidr(cidr: Cidr): string {
  const ip = formatIp(cidr.family, cidr.base);
  return cidr.prefix === BITS[cidr.family] ? ip : `${ip}/${cidr.prefix}`;
}

/** The last address of a block. */
export function cidrLast(cidr: Cidr): bigint {
  return cidr.base + (1n << BigInt(BITS[cidr.family] - cidr.prefix)) - 1n;
}

/** Sorts and merges blocks of one family into the fewest covering intervals, as CIDRs. */
export function mergeCidrs(blocks: readonly Cidr[]): Cidr[] {
  const byFamily: Record<Family, Cidr[]> = { 4: [], 6: [] };
  for (const block of blocks) byFamily[block.family].push(block);
  const result: Cidr[] = [];
  for (const family of [4, 6] as const) {
    const sorted = byFamily[family].sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : a.prefix - b.prefix));
    let start: bigint | undefined;
    let end = 0n;
    // An interval made of one input block needs no re-splitting (the common case).
    let single: Cidr | undefined;
    const flush = () => {
      if (start === undefined) return;
      if (single) result.push(single);
      else result.push(...rangeToCidrs(family, start, end));
    };
    for (const block of sorted) {
      const last = cidrLast(block);
      if (start !== undefined && block.base <= end + 1n) {
        if (last > end) {
          end = last;
          single = undefined;
        }
        continue;
      }
      flush();
      start = block.base;
      end = last;
      single = block;
    }
    flush();
  }
  return result;
}

/**
 * `mergeCidrs([...merged, ...blocks])`, where `merged` is mergeCidrs's output for one family and `blocks` are of
 * that family. The merged result depends only on the union of the blocks, so new intervals that neither overlap
 * nor touch an old one are put in place by binary search (an entry added to an alias of 10,000 costs a few
 * comparisons, not a sort); anything else is merged whole again. No blocks: `merged` itself.
 */
export function withBlocksAdded(merged: readonly Cidr[], blocks: readonly Cidr[]): readonly Cidr[] {
  if (blocks.length === 0) return merged;
  const result: Cidr[] = [];
  let from = 0;
  for (const block of mergeCidrs(blocks)) {
    // The first old block starting after this one: the old neighbours are just before and at it.
    let low = from;
    let high = merged.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (merged[middle].base <= block.base) low = middle + 1;
      else high = middle;
    }
    const before = merged[low - 1];
    const after = merged[low];
    if ((before && cidrLast(before) + 1n >= block.base) || (after && cidrLast(block) + 1n >= after.base)) return mergeCidrs([...merged, ...blocks]);
    for (; from < low; from++) result.push(merged[from]);
    result.push(block);
  }
  for (; from < merged.length; from++) result.push(merged[from]);
  return result;
}

/** True when the address (integer) lies in the block. */
export function cidrContains(cidr: Cidr, family: Family, value: bigint): boolean {
  return cidr.family === family && value >= cidr.base && value <= cidrLast(cidr);
}
