import { BlockList, isIP } from 'node:net';

/**
 * Destinations an appliance must never be tricked into fetching from (SSRF): loopback, private, link-local
 * (including the 169.254.169.254 metadata address), CGNAT, documentation, benchmarking, multicast and
 * reserved ranges, in both families.
 */
const SPECIAL = new BlockList();
const v4: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const v6: [string, number][] = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
];
for (const [address, prefix] of v4) SPECIAL.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of v6) SPECIAL.addSubnet(address, prefix, 'ipv6');

/** `::ffff:10.0.0.1` is 10.0.0.1. */
export function unmapIPv4(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

export function isSpecialAddress(address: string): boolean {
  const plain = unmapIPv4(address);
  const family = isIP(plain);
  if (family === 0) return true;
  return SPECIAL.check(plain, family === 6 ? 'ipv6' : 'ipv4');
}

/** An admin allow-list of IPs and CIDRs that may be reached although special (a local AI runtime, an internal S3). */
export function allowListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (!isIP(address)) continue;
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

export function isAllowed(address: string, allowList: BlockList): boolean {
  const plain = unmapIPv4(address);
  const family = isIP(plain);
  if (!family) return false;
  return allowList.check(plain, family === 6 ? 'ipv6' : 'ipv4') || !isSpecialAddress(plain);
}
