/**
 * Which process listens on an NFLOG group of this network namespace: `/proc/net/netfilter/nfnetlink_log` lists
 * each bound group with the netlink port of its listener, which for a process's first netlink socket is its pid
 * (ulogd's NFLOG input opens its socket first). Used as ulogd's identity check: the group is bound, by it.
 */
import { readFile } from 'node:fs/promises';

const BINDINGS = '/proc/net/netfilter/nfnetlink_log';

/** The netlink port bound to `group` in this namespace, or null when no listener holds it. */
export function nflogListener(table: string, group: number): number | null {
  for (const line of table.split('\n')) {
    // "%5u %6u %5u %1u %5u %6u %2u": group, peer port id, queue length, copy mode, copy range, flush timeout, use
    const [groupNumber, portId] = line.trim().split(/\s+/).map(Number);
    if (groupNumber === group && Number.isInteger(portId)) return portId;
  }
  return null;
}

/** True when `pid` holds the NFLOG group (it bound it and still listens). */
export async function holdsNflogGroup(group: number, pid: number | null): Promise<boolean> {
  if (pid === null) return false;
  const table = await readFile(BINDINGS, 'utf8').catch(() => '');
  return nflogListener(table, group) === pid;
}
