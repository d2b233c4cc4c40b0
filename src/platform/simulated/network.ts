import type { ApplyOutcome, InterfaceChange, NetInterface, Network, SystemRoute } from '../network.js';
import { parseIpv4Cidr, numberToIpv4 } from '../../core/ip.js';

const zeroCounters = () => ({ bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0 });

function seedInterfaces(): NetInterface[] {
  const base = { vlan_id: null, vlan_parent: null, description: null, counters: zeroCounters() };
  return [
    { ...base, name: 'lo', mac: '00:00:00:00:00:00', mtu: 65536, up: true, loopback: true, ipv4: '127.0.0.1', ipv4_prefix: 8, ipv6: '::1' },
    { ...base, name: 'eth0', mac: '02:42:ac:11:00:02', mtu: 1500, up: true, loopback: false, ipv4: '203.0.113.2', ipv4_prefix: 24, ipv6: '2001:db8::2', description: 'simulated uplink' },
    { ...base, name: 'eth1', mac: '02:42:ac:11:00:03', mtu: 1500, up: true, loopback: false, ipv4: '192.168.1.1', ipv4_prefix: 24, ipv6: null, description: 'simulated LAN' },
    { ...base, name: 'eth2', mac: '02:42:ac:11:00:04', mtu: 1500, up: false, loopback: false, ipv4: null, ipv4_prefix: null, ipv6: null },
  ];
}

/** A coherent fake host: four interfaces whose counters move, a routing table that follows their addresses. */
export function createSimulatedNetwork(): Network {
  const interfaces = seedInterfaces();
  const staticRoutes = new Map<string, SystemRoute>();
  let reads = 0;
  const tick = () => {
    reads++;
    for (const [index, iface] of interfaces.entries()) {
      if (!iface.up) continue;
      // Traffic grows on every read, WAN fastest, so dashboards see live-looking counters.
      const weight = iface.loopback ? 1 : 4 - index;
      iface.counters.packets_in += 10 * weight;
      iface.counters.packets_out += 8 * weight;
      iface.counters.bytes_in += 12_000 * weight;
      iface.counters.bytes_out += 7_000 * weight;
    }
  };
  const routeKey = (destination: string, table: number) => `${table}|${destination}`;
  return {
    async interfaces() {
      tick();
      return interfaces.map((iface) => ({ ...iface, counters: { ...iface.counters } }));
    },
    async routes(table) {
      const routes: SystemRoute[] = [];
      if (table === 0) {
        routes.push({ destination: 'default', gateway: '203.0.113.1', interface: 'eth0', flags: 'UGS', metric: 0, table: 0 });
        for (const iface of interfaces) {
          if (!iface.up || !iface.ipv4 || iface.ipv4_prefix === null || iface.loopback) continue;
          const cidr = parseIpv4Cidr(`${iface.ipv4}/${iface.ipv4_prefix}`)!;
          routes.push({ destination: `${numberToIpv4(cidr.network)}/${cidr.prefix}`, gateway: null, interface: iface.name, flags: 'U', metric: 0, table: 0 });
        }
      }
      for (const route of staticRoutes.values()) if (route.table === table) routes.push({ ...route });
      return routes;
    },
    async configureInterface(name: string, change: InterfaceChange): Promise<ApplyOutcome> {
      const iface = interfaces.find((i) => i.name === name);
      if (!iface) return { applied: false, message: `interface ${name} does not exist` };
      if (change.mtu !== undefined) iface.mtu = change.mtu;
      if (change.enabled !== undefined) iface.up = change.enabled;
      if (change.description !== undefined) iface.description = change.description;
      if (change.ipv4_mode === 'none') {
        iface.ipv4 = null;
        iface.ipv4_prefix = null;
      } else if (change.ipv4_mode === 'static' && change.ipv4_address) {
        const [address, prefix] = change.ipv4_address.split('/');
        iface.ipv4 = address;
        iface.ipv4_prefix = Number(prefix);
      } else if (change.ipv4_mode === 'dhcp') {
        // A simulated DHCP server answers with an address in a documentation range.
        iface.ipv4 = `198.51.100.${10 + interfaces.indexOf(iface)}`;
        iface.ipv4_prefix = 24;
      }
      if (change.ipv6_address !== undefined) iface.ipv6 = change.ipv6_address ? change.ipv6_address.split('/')[0] : null;
      return { applied: true, message: `Interface ${name} configured (simulated)` };
    },
    async setVlan(vlan, present) {
      const index = interfaces.findIndex((i) => i.name === vlan.device);
      if (index >= 0) interfaces.splice(index, 1);
      if (present) {
        if (!interfaces.some((i) => i.name === vlan.parent)) return { applied: false, message: `parent ${vlan.parent} of VLAN ${vlan.device} does not exist` };
        interfaces.push({ name: vlan.device, mac: null, mtu: vlan.mtu, up: true, loopback: false, ipv4: null, ipv4_prefix: null, ipv6: null, vlan_id: vlan.vlan_id, vlan_parent: vlan.parent, description: null, counters: zeroCounters() });
      }
      return { applied: true, message: `VLAN ${vlan.device} ${present ? 'created' : 'removed'} (simulated)` };
    },
    async setStaticRoute(route, present) {
      const key = routeKey(route.destination, route.table);
      if (present) {
        staticRoutes.set(key, { destination: route.destination, gateway: route.gateway, interface: route.interface, flags: 'UGS', metric: route.metric, table: route.table });
      } else {
        staticRoutes.delete(key);
      }
      return { applied: true, message: `route to ${route.destination} ${present ? 'installed' : 'withdrawn'} (simulated)` };
    },
  };
}
