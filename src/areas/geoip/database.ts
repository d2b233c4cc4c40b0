import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import { ipv4ToNumber, ipv6ToBigInt, rangeToCidrs4, rangeToCidrs6 } from '../../net/address.js';

/**
 * Country ranges of the GeoLite2 data shipped inside the `geoip-country` npm package (nothing is downloaded).
 * Its files are sorted fixed-size records: IPv4 = start u32, end u32, 2-letter country; IPv6 = start and end
 * as the upper 64 bits (u64 each), country. Read here directly so a lookup also yields the matching network.
 */
export interface GeoLookup {
  country: string | null;
  network: string | null;
}

interface Table {
  buffer: Buffer;
  recordSize: number;
  count: number;
}

export class GeoDatabase {
  private v4?: Table;
  private v6?: Table;
  private readonly names = new Intl.DisplayNames(['en'], { type: 'region' });
  private cidrCounts?: Map<string, number>;
  private rangeIndex?: Map<string, { v4: [bigint, bigint][]; v6: [bigint, bigint][] }>;
  /** Counts reloads, so compiled sets know when the data under them changed. */
  generation = 0;

  constructor(private readonly dataDir = defaultDataDir()) {}

  get source(): string {
    return 'GeoLite2 Country (MaxMind, via the geoip-country npm package)';
  }

  private tables(): { v4: Table; v6: Table } {
    if (!this.v4 || !this.v6) {
      const v4 = readFileSync(join(this.dataDir, 'geoip-country.dat'));
      const v6 = readFileSync(join(this.dataDir, 'geoip-country6.dat'));
      this.v4 = { buffer: v4, recordSize: 10, count: v4.length / 10 };
      this.v6 = { buffer: v6, recordSize: 18, count: v6.length / 18 };
    }
    return { v4: this.v4, v6: this.v6 };
  }

  lookup(ip: string): GeoLookup {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    const address = mapped ? mapped[1] : ip;
    const family = isIP(address);
    if (family === 4) {
      const { v4 } = this.tables();
      const value = ipv4ToNumber(address);
      const index = search(v4.count, (i) => v4.buffer.readUInt32BE(i * 10), (i) => v4.buffer.readUInt32BE(i * 10 + 4), value);
      if (index < 0) return { country: null, network: null };
      const start = v4.buffer.readUInt32BE(index * 10);
      const end = v4.buffer.readUInt32BE(index * 10 + 4);
      return { country: v4.buffer.toString('latin1', index * 10 + 8, index * 10 + 10), network: containing4(rangeToCidrs4(start, end), value) };
    }
    if (family === 6) {
      const { v6 } = this.tables();
      const full = ipv6ToBigInt(address);
      const upper = full >> 64n;
      const index = search(v6.count, (i) => v6.buffer.readBigUInt64BE(i * 18), (i) => v6.buffer.readBigUInt64BE(i * 18 + 8), upper);
      if (index < 0) return { country: null, network: null };
      const start = v6.buffer.readBigUInt64BE(index * 18) << 64n;
      const end = (v6.buffer.readBigUInt64BE(index * 18 + 8) << 64n) | 0xffffffffffffffffn;
      return { country: v6.buffer.toString('latin1', index * 18 + 16, index * 18 + 18), network: containing6(rangeToCidrs6(start, end), full) };
    }
    return { country: null, network: null };
  }

  countryName(code: string): string | null {
    try {
      const name = this.names.of(code);
      return name && name !== code ? name : null;
    } catch {
      return null;
    }
  }

  /** Number of ranges the dataset holds for a country (IPv4 and IPv6 records), counted once. */
  cidrCount(code: string): number {
    if (!this.cidrCounts) {
      const counts = new Map<string, number>();
      const { v4, v6 } = this.tables();
      for (let i = 0; i < v4.count; i++) {
        const cc = v4.buffer.toString('latin1', i * 10 + 8, i * 10 + 10);
        counts.set(cc, (counts.get(cc) ?? 0) + 1);
      }
      for (let i = 0; i < v6.count; i++) {
        const cc = v6.buffer.toString('latin1', i * 18 + 16, i * 18 + 18);
        counts.set(cc, (counts.get(cc) ?? 0) + 1);
      }
      this.cidrCounts = counts;
    }
    return this.cidrCounts.get(code) ?? 0;
  }

  /** Every IPv4 and IPv6 range of a country as first/last address numbers, in address order. */
  ranges(code: string): { v4: [bigint, bigint][]; v6: [bigint, bigint][] } {
    if (!this.rangeIndex) {
      // One pass over both files indexes every country: compiling "all but one" asks for ~250 of them.
      const index = new Map<string, { v4: [bigint, bigint][]; v6: [bigint, bigint][] }>();
      const entry = (cc: string) => index.get(cc) ?? index.set(cc, { v4: [], v6: [] }).get(cc)!;
      const { v4, v6 } = this.tables();
      for (let i = 0; i < v4.count; i++) {
        entry(v4.buffer.toString('latin1', i * 10 + 8, i * 10 + 10)).v4.push([BigInt(v4.buffer.readUInt32BE(i * 10)), BigInt(v4.buffer.readUInt32BE(i * 10 + 4))]);
      }
      for (let i = 0; i < v6.count; i++) {
        entry(v6.buffer.toString('latin1', i * 18 + 16, i * 18 + 18)).v6.push([v6.buffer.readBigUInt64BE(i * 18) << 64n, (v6.buffer.readBigUInt64BE(i * 18 + 8) << 64n) | 0xffffffffffffffffn]);
      }
      this.rangeIndex = index;
    }
    return this.rangeIndex.get(code) ?? { v4: [], v6: [] };
  }

  /** Country codes the dataset holds ranges for. */
  countries(): string[] {
    this.ranges('');
    return [...this.rangeIndex!.keys()].sort();
  }

  /** Forgets the loaded files, so the next read takes the data as it is on disk now (after a package update). */
  reload(): void {
    this.v4 = undefined;
    this.v6 = undefined;
    this.cidrCounts = undefined;
    this.rangeIndex = undefined;
    this.generation++;
  }

  /** Every IPv4 and IPv6 network of a country, for the packet filter's geo tables. */
  networks(code: string): string[] {
    const { v4, v6 } = this.tables();
    const out: string[] = [];
    for (let i = 0; i < v4.count; i++) {
      if (v4.buffer.toString('latin1', i * 10 + 8, i * 10 + 10) === code) out.push(...rangeToCidrs4(v4.buffer.readUInt32BE(i * 10), v4.buffer.readUInt32BE(i * 10 + 4)));
    }
    for (let i = 0; i < v6.count; i++) {
      if (v6.buffer.toString('latin1', i * 18 + 16, i * 18 + 18) === code) {
        out.push(...rangeToCidrs6(v6.buffer.readBigUInt64BE(i * 18) << 64n, (v6.buffer.readBigUInt64BE(i * 18 + 8) << 64n) | 0xffffffffffffffffn));
      }
    }
    return out;
  }
}

function defaultDataDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('geoip-country/package.json')), 'data');
}

/** Binary search over sorted, non-overlapping [start, end] records; -1 when no record contains value. */
function search<T extends number | bigint>(count: number, startOf: (i: number) => T, endOf: (i: number) => T, value: T): number {
  let low = 0;
  let high = count - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (startOf(mid) > value) high = mid - 1;
    else if (endOf(mid) < value) low = mid + 1;
    else return mid;
  }
  return -1;
}

function containing4(blocks: string[], value: number): string | null {
  for (const block of blocks) {
    const [address, prefix] = block.split('/');
    const size = 2 ** (32 - Number(prefix));
    const start = ipv4ToNumber(address);
    if (value >= start && value < start + size) return block;
  }
  return null;
}

function containing6(blocks: string[], value: bigint): string | null {
  for (const block of blocks) {
    const [address, prefix] = block.split('/');
    const start = ipv6ToBigInt(address);
    if (value >= start && value < start + (1n << BigInt(128 - Number(prefix)))) return block;
  }
  return null;
}
