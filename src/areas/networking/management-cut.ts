import type { NetInterface } from '../../platform/network.js';
import type { ConfigObject } from '../../store/config-store.js';
import { interfaceChangeOf } from './service.js';

interface Change {
  ipv4_mode?: 'dhcp' | 'static' | 'none';
  ipv4_address?: string | null;
  ipv6_address?: string | null;
  enabled?: boolean;
}

/** `::ffff:192.0.2.1` (an IPv4 client on a dual-stack socket) is the IPv4 address it carries. */
const plain = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
const hostOf = (cidr: string | null | undefined) => (cidr ? cidr.split('/')[0] : null);

/**
 * What a change to an interface would do to the management address (the local address the request reached),
 * as words for a 409, or null when it leaves it alone: taking the interface down, or replacing or removing the
 * address of that family.
 */
export function managementCut(iface: NetInterface, change: Change, localAddress: string | undefined): string | null {
  if (!localAddress) return null;
  const management = plain(localAddress);
  const held = iface.addresses ?? [iface.ipv4, iface.ipv6].filter((a): a is string => a !== null);
  if (!held.includes(management)) return null;
  if (change.enabled === false) return `takes ${iface.name} down, and with it the management address ${management}`;
  const v4 = !management.includes(':');
  if (v4 && change.ipv4_mode !== undefined && change.ipv4_mode !== 'static') return `leaves ${iface.name} without the management address ${management} (ipv4_mode ${change.ipv4_mode})`;
  if (v4 && change.ipv4_mode === 'static' && hostOf(change.ipv4_address) !== management) return `replaces the management address ${management} on ${iface.name}`;
  if (!v4 && change.ipv6_address !== undefined && hostOf(change.ipv6_address) !== management) return `replaces the management address ${management} on ${iface.name}`;
  return null;
}

/**
 * What replacing the whole configuration with `target` (restore, import) would do to the management address:
 * the first interface setting of `target` that would cut it, in the words of managementCut, or null.
 */
export function replacementCut(interfaces: readonly NetInterface[], target: readonly ConfigObject[], localAddress: string): string | null {
  for (const object of target) {
    if (object.kind !== 'interface_config') continue;
    const iface = interfaces.find((i) => i.name === object.data.name);
    const cut = iface && managementCut(iface, interfaceChangeOf(object.data), localAddress);
    if (cut) return cut;
  }
  return null;
}
