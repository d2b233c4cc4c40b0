/**
 * Readers of Unbound's live state: `unbound-control stats_noreset` and the blocklist filter's data file named
 * by the running configuration (its zones and their name counts).
 */
import { open, readFile } from 'node:fs/promises';
import type { DnsStats } from './daemons.js';
import { blocklistZonesOf } from '../render/unbound/unbound-blocklist.js';

/** Parses `unbound-control stats_noreset` (key=value lines). */
export function parseUnboundStats(text: string): Record<string, number> {
  const stats: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^([\w.\-]+)=([\d.]+)$/.exec(line.trim());
    if (match) stats[match[1]] = Number(match[2]);
  }
  return stats;
}

/** The blocklist filter's data file of a running configuration, or null when it loads no filter. */
export async function blocklistDataFile(configText: string): Promise<string | null> {
  const script = /^\s*python-script:\s*"([^"]+)"/m.exec(configText)?.[1];
  if (!script) return null;
  const text = await readFile(script, 'utf8').catch(() => '');
  return /^DATA_FILE = '([^']+)'$/m.exec(text)?.[1] ?? null;
}

const HEAD_BYTES = 256 * 1024;

/** The zones of a data file (read from its head: zone lines come first). */
export async function blocklistZones(dataFile: string): Promise<{ label: string; action: string; names: number }[]> {
  const handle = await open(dataFile, 'r').catch(() => null);
  if (!handle) return [];
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return blocklistZonesOf(buffer.subarray(0, bytesRead).toString('utf8'));
  } finally {
    await handle.close();
  }
}

export const EMPTY_DNS_STATS = (running: boolean, simulated: boolean): DnsStats => ({
  ts: Date.now(), running, queries_total: 0, simulated,
  cache: { entries: 0, max_entries: 0, hits: 0, misses: 0, insertions: 0, evictions: 0, hit_rate_pct: 0 },
  rpz: { rules: 0, zones: 0, hits: 0, per_zone: [] },
});

/**
 * `/dns/stats` from Unbound's counters, the filter's zones and the blocks counted from its log lines (`hits`,
 * per zone, since the resolver started).
 */
export function dnsStatsOf(
  stats: Record<string, number>,
  zones: { label: string; names: number }[],
  hits: ReadonlyMap<string, number>,
): Omit<DnsStats, 'ts' | 'running' | 'simulated'> {
  const cacheHits = stats['total.num.cachehits'] ?? 0;
  const misses = stats['total.num.cachemiss'] ?? 0;
  const queries = stats['total.num.queries'] ?? 0;
  const perZone = zones.map((zone) => ({ name: zone.label, rules: zone.names, hits: hits.get(zone.label) ?? 0 }));
  return {
    queries_total: queries,
    cache: {
      entries: (stats['msg.cache.count'] ?? 0) + (stats['rrset.cache.count'] ?? 0),
      max_entries: 0,
      hits: cacheHits,
      misses,
      insertions: misses,
      evictions: 0,
      hit_rate_pct: queries ? Math.round((cacheHits / queries) * 1000) / 10 : 0,
    },
    rpz: {
      rules: perZone.reduce((n, zone) => n + zone.rules, 0),
      zones: perZone.length,
      hits: perZone.reduce((n, zone) => n + zone.hits, 0),
      per_zone: perZone,
    },
  };
}
