/**
 * `dhcp_link` (/cluster/pfsync): Kea's DHCP high availability takes its two peers from the pair instead of the
 * stored /dhcp/ha addresses (which configuration sync copies to both nodes alike): this node is Kea's node1
 * (primary) or node2 by its cluster role, listens on its own address on the sync interface, and its partner is
 * the cluster node at the address the pairing recorded. The port is the stored one (the same on both nodes).
 */
import { networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import type { KeaHa } from '../../render/kea/kea.js';
import type { DhcpService } from '../dhcp/service.js';
import type { ClusterService } from './service.js';
import type { ClusterSync } from './sync-service.js';
import { RenderRefusal } from '../../render/refusal.js';

/** Kea's HA port when the stored relationship names none. */
export const KEA_HA_DEFAULT_PORT = 8000;

export interface PairForDhcp {
  dhcpLink: boolean;
  role: 'standalone' | 'primary' | 'secondary';
  /** The cluster node's address (the pairing's), or null when unpaired. */
  peerAddress: string | null;
  /** This node's address on the sync interface, or null when it has none. */
  ownAddress: string | null;
}

const portOf = (hostPort: string | null | undefined): number | null => {
  const match = /:(\d{1,5})$/.exec(hostPort ?? '');
  return match ? Number(match[1]) : null;
};
const hostPort = (address: string, port: number): string => `${isIP(address) === 6 ? `[${address}]` : address}:${port}`;

/** The relationship Kea renders: the stored one, or with dhcp_link its peers from the pair (refused when the pair cannot say). */
export function linkedKeaHa(stored: KeaHa, pair: PairForDhcp): KeaHa {
  if (!pair.dhcpLink || stored.mode === 'standalone') return stored;
  if (!pair.peerAddress) throw new RenderRefusal('cluster.pfsync.dhcp_link', 'is set but this node is not paired: pair it (POST /api/v1/cluster/nodes) or clear dhcp_link');
  if (pair.role === 'standalone') throw new RenderRefusal('cluster.pfsync.dhcp_link', "is set but this node's cluster role is standalone: set primary or secondary (PUT /api/v1/cluster/role)");
  if (!pair.ownAddress) throw new RenderRefusal('cluster.pfsync.sync_interface', 'has no address: Kea cannot listen for its partner there');
  const port = portOf(stored.listen) ?? portOf(stored.peer) ?? KEA_HA_DEFAULT_PORT;
  return { ...stored, node_id: pair.role === 'primary' ? 1 : 2, listen: hostPort(pair.ownAddress, port), peer: hostPort(pair.peerAddress, port) };
}

/** The first address of an interface of this host (namespace), of the peer's family when it has one. */
export function interfaceAddress(name: string, family: 4 | 6 = 4): string | null {
  const entries = networkInterfaces()[name] ?? [];
  const wanted = entries.find((entry) => entry.family === `IPv${family}` && !(family === 6 && entry.address.startsWith('fe80:')));
  return wanted?.address ?? null;
}

/** Makes the DHCP service render its HA peers from the pair while dhcp_link is set (at each DHCP apply). */
export function linkDhcpToPair(dhcp: DhcpService, cluster: ClusterService, sync: ClusterSync): void {
  dhcp.haLink = (stored) => {
    const pfsync = cluster.pfsyncView();
    const peer = sync.state.peer();
    const syncInterface = typeof pfsync?.sync_interface === 'string' ? pfsync.sync_interface : null;
    return linkedKeaHa(stored, {
      dhcpLink: pfsync?.dhcp_link === true, role: cluster.role(), peerAddress: peer?.address ?? null,
      ownAddress: syncInterface ? interfaceAddress(syncInterface, peer && isIP(peer.address) === 6 ? 6 : 4) : null,
    });
  };
}
