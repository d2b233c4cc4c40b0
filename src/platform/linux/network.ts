import { conflict } from '../../core/errors.js';
import { ipBatchLine } from '../../render/system/ip-batch.js';
import type { ApplyOutcome, InterfaceChange, NetInterface, Network, SystemRoute, VlanDevice } from '../network.js';
import { ip, ipJson, ipOrConflict, ipReason } from './ip-tool.js';

interface IpAddress { family: string; local: string; prefixlen: number; scope?: string }

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
  addr_info?: IpAddress[];
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
      addresses: info.filter((a) => a.scope !== 'link').map((a) => a.local),
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

/** Bulwark's table numbers are the kernel's, except 0, which is the kernel's `main`. */
export const kernelTable = (table: number): string => (table === 0 ? 'main' : String(table));

/** What an interface holds now: enough to put it back when a change fails half-way. */
interface InterfaceSnapshot {
  name: string;
  mtu: number;
  up: boolean;
  alias: string | null;
  /** Global addresses with their prefix, `a.b.c.d/p`. */
  v4: string[];
  v6: string[];
}

async function snapshot(name: string): Promise<InterfaceSnapshot> {
  const [link] = await ipJson<IpLink[]>(['link', 'show', 'dev', name]);
  const [addresses] = await ipJson<IpLink[]>(['addr', 'show', 'dev', name]);
  const global = (addresses?.addr_info ?? []).filter((a) => a.scope !== 'link');
  const of = (family: string) => global.filter((a) => a.family === family).map((a) => `${a.local}/${a.prefixlen}`);
  return { name, mtu: link.mtu ?? 0, up: (link.flags ?? []).includes('UP'), alias: link.ifalias ?? null, v4: of('inet'), v6: of('inet6') };
}

const value = (text: unknown, field: string) => ({ value: text, field });

/**
 * The batch that takes an interface from `from` to the change: addresses of a family the change names are
 * replaced (removed, then the new one added), MTU, description (`alias`) and up/down set when given.
 */
export function interfaceBatch(from: InterfaceSnapshot, change: InterfaceChange): string[] {
  const dev = value(from.name, 'interface');
  const lines: string[] = [];
  const replace = (current: string[], next: string | null, field: string) => {
    for (const address of current) if (address !== next) lines.push(ipBatchLine(['address', 'del', value(address, field), 'dev', dev]));
    if (next && !current.includes(next)) lines.push(ipBatchLine(['address', 'add', value(next, field), 'dev', dev]));
  };
  if (change.ipv4_mode === 'static') replace(from.v4, change.ipv4_address ?? null, 'body.ipv4_address');
  if (change.ipv4_mode === 'none') replace(from.v4, null, 'body.ipv4_address');
  if (change.ipv6_address !== undefined) replace(from.v6, change.ipv6_address, 'body.ipv6_address');
  if (change.mtu !== undefined) lines.push(ipBatchLine(['link', 'set', 'dev', dev, 'mtu', value(change.mtu, 'body.mtu')]));
  if (change.description !== undefined) lines.push(ipBatchLine(['link', 'set', 'dev', dev, 'alias', value(change.description ?? '', 'body.description')]));
  if (change.enabled !== undefined) lines.push(ipBatchLine(['link', 'set', 'dev', dev, change.enabled ? 'up' : 'down']));
  return lines;
}

/** The batch that puts an interface back as `to` from how it is now (`now`). */
export function restoreBatch(now: InterfaceSnapshot, to: InterfaceSnapshot): string[] {
  const lines: string[] = [];
  const dev = value(to.name, 'interface');
  for (const [current, wanted] of [[now.v4, to.v4], [now.v6, to.v6]] as const) {
    for (const address of current) if (!wanted.includes(address)) lines.push(ipBatchLine(['address', 'del', value(address, 'address'), 'dev', dev]));
    for (const address of wanted) if (!current.includes(address)) lines.push(ipBatchLine(['address', 'add', value(address, 'address'), 'dev', dev]));
  }
  if (now.mtu !== to.mtu) lines.push(ipBatchLine(['link', 'set', 'dev', dev, 'mtu', value(to.mtu, 'mtu')]));
  if (now.alias !== to.alias) lines.push(ipBatchLine(['link', 'set', 'dev', dev, 'alias', value(to.alias ?? '', 'description')]));
  if (now.up !== to.up) lines.push(ipBatchLine(['link', 'set', 'dev', dev, to.up ? 'up' : 'down']));
  return lines;
}

/** The `ip route` arguments naming one static route (after `replace` or `del`). */
export function routeArgs(route: { destination: string; gateway: string; interface: string | null; metric: number; table: number }): string[] {
  return [route.destination, 'via', route.gateway, ...(route.interface ? ['dev', route.interface] : []), 'metric', String(route.metric), 'table', kernelTable(route.table)];
}

/** Interfaces, addresses, VLANs and static routes through iproute2: `ip -j` reads, `ip -batch` and `ip route` write. */
export function createLinuxNetwork(): Network {
  return {
    async interfaces() {
      const [links, addresses] = await Promise.all([ipJson<IpLink[]>(['-s', '-d', 'link', 'show']), ipJson<IpLink[]>(['addr', 'show'])]);
      return interfacesFromIp(links, addresses);
    },
    async routes(table) {
      return routesFromIp(await ipJson<IpRoute[]>(['-4', 'route', 'show', 'table', kernelTable(table)]), table);
    },
    async configureInterface(name, change): Promise<ApplyOutcome> {
      if (change.ipv4_mode === 'dhcp') throw conflict(`interface ${name}: ipv4_mode dhcp is not applied on linux (Bulwark runs no DHCP client for its own interfaces); use static or none`);
      const before = await snapshot(name);
      const lines = interfaceBatch(before, change);
      if (lines.length === 0) return { applied: true, message: `Interface ${name} configured: nothing to change` };
      const result = await ip(['-batch', '-'], { input: `${lines.join('\n')}\n` });
      if (result.code === 0) return { applied: true, message: `Interface ${name} configured: ${lines.length} change${lines.length === 1 ? '' : 's'} applied` };
      // Half a batch may have run: put back what it changed before answering.
      const undo = restoreBatch(await snapshot(name), before);
      if (undo.length) await ip(['-force', '-batch', '-'], { input: `${undo.join('\n')}\n` });
      throw conflict(`interface ${name}: the kernel refused the change (${ipReason(result)}); the previous settings are kept`);
    },
    async setVlan(vlan: VlanDevice, present) {
      const exists = (await ip(['link', 'show', 'dev', vlan.device])).code === 0;
      if (!present) {
        if (exists) await ipOrConflict(['link', 'del', 'dev', vlan.device], `VLAN ${vlan.device} could not be removed`);
        return { applied: true, message: `VLAN ${vlan.device} removed` };
      }
      if (exists) await ipOrConflict(['link', 'del', 'dev', vlan.device], `VLAN ${vlan.device} could not be replaced`);
      await ipOrConflict(['link', 'add', 'link', vlan.parent, 'name', vlan.device, 'mtu', String(vlan.mtu), 'type', 'vlan', 'id', String(vlan.vlan_id)], `VLAN ${vlan.device} could not be created`);
      const up = await ip(['link', 'set', 'dev', vlan.device, 'up']);
      if (up.code !== 0) {
        await ip(['link', 'del', 'dev', vlan.device]);
        throw conflict(`VLAN ${vlan.device} could not be brought up: ${ipReason(up)}`);
      }
      return { applied: true, message: `VLAN ${vlan.device} created on ${vlan.parent}` };
    },
    async setStaticRoute(route, present) {
      if (present) {
        await ipOrConflict(['route', 'replace', ...routeArgs(route)], `route to ${route.destination} was not installed`);
        return { applied: true, message: `route to ${route.destination} installed in table ${kernelTable(route.table)}` };
      }
      const removed = await ip(['route', 'del', ...routeArgs(route)]);
      // Already gone (removed by hand, or its interface went down) is what a withdrawal wants.
      if (removed.code !== 0 && !/No such process|not found|Cannot find device/i.test(ipReason(removed))) throw conflict(`route to ${route.destination} was not withdrawn: ${ipReason(removed)}`);
      return { applied: true, message: `route to ${route.destination} withdrawn from table ${kernelTable(route.table)}` };
    },
  };
}
