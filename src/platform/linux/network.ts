import type { NetInterface, Network, SystemRoute } from '../network.js';
import { runCommand } from '../exec.js';

interface IpLink {
  ifname: string;
  flags?: string[];
  mtu?: number;
  link_type?: string;
  address?: string;
  link?: string;
  ifalias?: string;
  linkinfo?: { info_kind?: string; info_data?: { id?: number } };
  stats64?: { rx?: { bytes?: number; packets?: number; errors?: number }; tx?: { bytes?: number; packets?: number; errors?: number } };
  addr_info?: { family: string; local: string; prefixlen: number; scope?: string }[];
}

interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  metric?: number;
  flags?: string[];
  protocol?: string;
  scope?: string;
}

/** Merges `ip -j -s -d link` and `ip -j addr` into Bulwark's interface view. */
export function interfacesFromIp(links: IpLink[], addresses: IpLink[]): NetInterface[] {
  const addressesByName = new Map(addresses.map((entry) => [entry.ifname, entry.addr_info ?? []]));
  return links.map((link) => {
    const info = addressesByName.get(link.ifname) ?? [];
    const v4 = info.find((a) => a.family === 'inet');
    const v6 = info.find((a) => a.family === 'inet6' && a.scope !== 'link');
    const isVlan = link.linkinfo?.info_kind === 'vlan';
    return {
      name: link.ifname,
      mac: link.address && link.link_type !== 'none' ? link.address : null,
      mtu: link.mtu ?? 0,
      up: (link.flags ?? []).includes('UP'),
      loopback: link.link_type === 'loopback' || (link.flags ?? []).includes('LOOPBACK'),
      ipv4: v4?.local ?? null,
      ipv4_prefix: v4?.prefixlen ?? null,
      ipv6: v6?.local ?? null,
      vlan_id: isVlan ? (link.linkinfo?.info_data?.id ?? null) : null,
      vlan_parent: isVlan ? (link.link ?? null) : null,
      description: link.ifalias ?? null,
      counters: {
        bytes_in: link.stats64?.rx?.bytes ?? 0,
        bytes_out: link.stats64?.tx?.bytes ?? 0,
        packets_in: link.stats64?.rx?.packets ?? 0,
        packets_out: link.stats64?.tx?.packets ?? 0,
        errors_in: link.stats64?.rx?.errors ?? 0,
        errors_out: link.stats64?.tx?.errors ?? 0,
      },
    };
  });
}

export function routesFromIp(routes: IpRoute[], table: number): SystemRoute[] {
  return routes.map((route) => ({
    destination: route.dst,
    gateway: route.gateway ?? null,
    interface: route.dev ?? null,
    // BSD-style flags the UI knows: U up, G gateway, S static (not learned from the kernel).
    flags: `U${route.gateway ? 'G' : ''}${route.protocol === 'static' || route.protocol === 'boot' ? 'S' : ''}`,
    metric: route.metric ?? null,
    table,
  }));
}

async function ipJson<T>(args: string[]): Promise<T> {
  const result = await runCommand('ip', ['-j', ...args], { timeoutMs: 10_000 });
  if (result.code !== 0) throw new Error(`ip ${args.join(' ')}: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout || '[]') as T;
}

/** Reads interfaces and routes from iproute2. Read-only in this release: changes are stored, not pushed. */
export function createLinuxNetwork(): Network {
  return {
    async interfaces() {
      const [links, addresses] = await Promise.all([ipJson<IpLink[]>(['-s', '-d', 'link', 'show']), ipJson<IpLink[]>(['addr', 'show'])]);
      return interfacesFromIp(links, addresses);
    },
    async routes(table) {
      return routesFromIp(await ipJson<IpRoute[]>(['-4', 'route', 'show', 'table', table === 0 ? 'main' : String(table)]), table);
    },
    async configureInterface(name) {
      return { applied: false, message: `Interface ${name} configuration stored; the linux platform reads interfaces only in this release and does not change the host` };
    },
    async setStaticRoute(route) {
      return { applied: false, message: `route to ${route.destination} stored; the linux platform does not change the kernel routing table in this release` };
    },
  };
}
