import type { NetInterface, Network, SystemRoute } from '../network.js';
import { runCommand } from '../exec.js';
import { configureFreebsdInterface, setFreebsdRoute, setFreebsdVlan } from './network-changes.js';

/** Parses `ifconfig -a` (FreeBSD) into Bulwark's interface view; counters come from `netstat -ibn`. */
export function parseIfconfig(text: string): NetInterface[] {
  const interfaces: NetInterface[] = [];
  let current: NetInterface | null = null;
  for (const line of text.split('\n')) {
    const head = /^([A-Za-z0-9_.]+): flags=\w+<([^>]*)> .*mtu (\d+)/.exec(line);
    if (head) {
      const flags = head[2].split(',');
      current = {
        name: head[1], mac: null, mtu: Number(head[3]), up: flags.includes('UP'), loopback: flags.includes('LOOPBACK'),
        ipv4: null, ipv4_prefix: null, ipv6: null, vlan_id: null, vlan_parent: null, description: null,
        counters: { bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0 },
      };
      interfaces.push(current);
      continue;
    }
    if (!current) continue;
    const trimmed = line.trim();
    let match: RegExpExecArray | null;
    if ((match = /^ether ([0-9a-f:]{17})/.exec(trimmed))) current.mac = match[1];
    else if ((match = /^inet (\S+) netmask 0x([0-9a-f]{8})/.exec(trimmed)) && !current.ipv4) {
      current.ipv4 = match[1];
      current.ipv4_prefix = [...parseInt(match[2], 16).toString(2)].filter((b) => b === '1').length;
    } else if ((match = /^inet6 (\S+) prefixlen/.exec(trimmed)) && !match[1].startsWith('fe80') && !current.ipv6) current.ipv6 = match[1];
    else if ((match = /^description: (.*)$/.exec(trimmed))) current.description = match[1];
    else if ((match = /^vlan: (\d+) .*parent interface: (\S+)/.exec(trimmed))) {
      current.vlan_id = Number(match[1]);
      current.vlan_parent = match[2];
    }
  }
  return interfaces;
}

/** Parses `netstat -rn -4` rows: Destination Gateway Flags Netif [Expire]. */
export function parseNetstatRoutes(text: string, table: number): SystemRoute[] {
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 4 && /^(default|\d)/.test(fields[0]))
    .map(([destination, gateway, flags, netif]) => ({
      destination,
      gateway: gateway.startsWith('link#') ? null : gateway,
      interface: netif,
      flags,
      metric: null,
      table,
    }));
}

/** FreeBSD: ifconfig, netstat and route (changes in network-changes.ts). */
export function createFreebsdNetwork(): Network {
  return {
    async interfaces() {
      const result = await runCommand('ifconfig', ['-a']);
      if (result.code !== 0) throw new Error(`ifconfig: ${result.stderr.trim()}`);
      return parseIfconfig(result.stdout);
    },
    async routes(table) {
      const result = await runCommand('netstat', ['-rn', '-4', '-F', String(table)]);
      if (result.code !== 0) throw new Error(`netstat: ${result.stderr.trim()}`);
      return parseNetstatRoutes(result.stdout, table);
    },
    async configureInterface(name, change) {
      const steps = await configureFreebsdInterface(name, change);
      return { applied: true, message: `Interface ${name} configured: ${steps} change${steps === 1 ? '' : 's'} applied` };
    },
    async setVlan(vlan, present) {
      await setFreebsdVlan(vlan, present);
      return { applied: true, message: `VLAN ${vlan.device} ${present ? `created on ${vlan.parent}` : 'removed'}` };
    },
    async setStaticRoute(route, present) {
      await setFreebsdRoute(route, present);
      return { applied: true, message: `route to ${route.destination} ${present ? 'installed in' : 'withdrawn from'} FIB ${route.table}` };
    },
  };
}
