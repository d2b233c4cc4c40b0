/**
 * Geo-IP rules compiled into address sets the packet filter evaluates before user rules. All countries of one
 * action share one set per family, merged into the fewest intervals: "block every country but one" is then
 * the complement of one country (a few thousand intervals), not two hundred country sets. A country both
 * blocked and allowed is blocked (the block chain runs first). The compiled sets are part of the firewall
 * model, so the packet simulator can test membership without the kernel.
 */
import { formatCidr, formatIp, parseIp, rangeToCidrs, type Family } from './addresses.js';

export type GeoAction = 'allow' | 'block';

export interface GeoIpRuleInput {
  id: string;
  country: string;
  action: GeoAction;
  status: 'active' | 'disabled';
}

/** One interval of addresses, both ends included. */
export interface AddressInterval {
  first: bigint;
  last: bigint;
}

export interface GeoIpSet {
  action: GeoAction;
  family: Family;
  /** Countries whose ranges the set holds, sorted. */
  countries: string[];
  /** Merged, sorted, non-adjacent intervals. */
  intervals: AddressInterval[];
}

export interface CompiledGeoIp {
  /** Block sets first (they are evaluated first), then allow sets; empty sets are left out. */
  sets: GeoIpSet[];
}

export const NO_GEOIP: CompiledGeoIp = { sets: [] };

/** A country's ranges as the dataset holds them (first/last address numbers). */
export type CountryRanges = (country: string) => { v4: [bigint, bigint][]; v6: [bigint, bigint][] };

/** The nftables set (and pf table) name of one action and family. */
export const geoSetName = (action: GeoAction, family: Family): string => `geoip_${action}_v${family}`;
/** pf tables hold both families: one per action. */
export const geoTableName = (action: GeoAction): string => `geoip_${action}`;

/** Sorts and joins overlapping or adjacent intervals. */
export function mergeIntervals(intervals: AddressInterval[]): AddressInterval[] {
  const sorted = [...intervals].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const merged: AddressInterval[] = [];
  for (const interval of sorted) {
    const last = merged.at(-1);
    if (last && interval.first <= last.last + 1n) {
      if (interval.last > last.last) last.last = interval.last;
    } else {
      merged.push({ ...interval });
    }
  }
  return merged;
}

export function compileGeoIp(rules: readonly GeoIpRuleInput[], rangesOf: CountryRanges): CompiledGeoIp {
  const active = rules.filter((rule) => rule.status === 'active');
  const blocked = new Set(active.filter((r) => r.action === 'block').map((r) => r.country));
  const allowed = new Set(active.filter((r) => r.action === 'allow' && !blocked.has(r.country)).map((r) => r.country));
  const sets: GeoIpSet[] = [];
  for (const [action, countries] of [['block', blocked], ['allow', allowed]] as const) {
    const names = [...countries].sort();
    const ranges = names.map(rangesOf);
    for (const family of [4, 6] as const) {
      const intervals = mergeIntervals(ranges.flatMap((r) => (family === 4 ? r.v4 : r.v6)).map(([first, last]) => ({ first, last })));
      if (intervals.length) sets.push({ action, family, countries: names, intervals });
    }
  }
  return { sets };
}

/** The set elements as nftables writes them in an interval set: an address, a CIDR or `first-last`. */
export function nftElements(set: GeoIpSet): string[] {
  return set.intervals.map(({ first, last }) => {
    const blocks = rangeToCidrs(set.family, first, last);
    if (blocks.length === 1) return formatCidr(blocks[0]);
    return `${formatIp(set.family, first)}-${formatIp(set.family, last)}`;
  });
}

/** The set as CIDR blocks (pf tables take no ranges). */
export function cidrElements(set: GeoIpSet): string[] {
  return set.intervals.flatMap(({ first, last }) => rangeToCidrs(set.family, first, last).map(formatCidr));
}

/** Whether an address falls in the geo set of an action (binary search): what a packet simulator asks. */
export function geoIpMatches(geo: CompiledGeoIp, action: GeoAction, address: string): boolean {
  const ip = parseIp(address);
  if (!ip) return false;
  const set = geo.sets.find((s) => s.action === action && s.family === ip.family);
  if (!set) return false;
  let low = 0;
  let high = set.intervals.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const interval = set.intervals[mid];
    if (ip.value < interval.first) high = mid - 1;
    else if (ip.value > interval.last) low = mid + 1;
    else return true;
  }
  return false;
}

/** The decision geo-IP takes on a packet from `source` before user rules: block, allow, or none (rules decide). */
export function geoIpVerdict(geo: CompiledGeoIp, source: string): GeoAction | null {
  if (geoIpMatches(geo, 'block', source)) return 'block';
  if (geoIpMatches(geo, 'allow', source)) return 'allow';
  return null;
}
