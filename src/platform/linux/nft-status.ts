/**
 * The packet filter's status on linux (GET /status, /metrics, the dashboard's tick): whether `table inet bulwark`
 * is loaded, its traffic counters and its rule lines, and the kernel's conntrack count. Read from the table's counter
 * objects alone (NftablesPacketFilter.listCounters, shared by the readers of one second), not the whole table's JSON:
 * at 10,000 rules that listing is 13 MB and about twice the time (docs/dashboard.md). The rule lines are those of
 * Bulwark's own last read of the table (after every load and every drift check).
 */
import { readFile } from 'node:fs/promises';
import type { PacketFilterStatus } from '../platform.js';
import type { NftablesPacketFilter } from './packet-filter.js';
import { NFT_TRAFFIC_COUNTERS } from '../../compile/nftables.js';

/** A dashboard tick's worth: the readers of one second share one listing. */
const SHARE_MS = 1000;

export async function nftablesStatus(filter: NftablesPacketFilter, conntrackCount = '/proc/sys/net/netfilter/nf_conntrack_count'): Promise<PacketFilterStatus> {
  const base: PacketFilterStatus = { running: false, backend: 'nftables', rules: 0, states: 0, packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0 };
  const [states, listed] = await Promise.all([readFile(conntrackCount, 'utf8').then(Number, () => 0), filter.listCounters(SHARE_MS)]);
  if (listed.code !== 0) return { ...base, states, error: listed.stderr.trim() || `nft exited ${listed.code}` };
  const items = (JSON.parse(listed.stdout) as { nftables: Record<string, unknown>[] }).nftables;
  return { ...base, running: true, states, rules: filter.ruleLinesRead() ?? 0, ...trafficCounted(items) };
}

/** packets_in/out and bytes_in/out: the table's own traffic counters (NFT_TRAFFIC_COUNTERS), 0 before they exist. */
function trafficCounted(items: Record<string, unknown>[]): Pick<PacketFilterStatus, 'packets_in' | 'packets_out' | 'bytes_in' | 'bytes_out'> {
  const read = (name: string) => {
    const found = items.map((item) => item.counter as { name?: string; packets?: number; bytes?: number } | undefined).find((counter) => counter?.name === name);
    return { packets: Number(found?.packets ?? 0), bytes: Number(found?.bytes ?? 0) };
  };
  const [inbound, outbound] = [read(NFT_TRAFFIC_COUNTERS.in), read(NFT_TRAFFIC_COUNTERS.out)];
  return { packets_in: inbound.packets, packets_out: outbound.packets, bytes_in: inbound.bytes, bytes_out: outbound.bytes };
}
