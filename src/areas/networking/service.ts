import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { isDomainName, isIpOrCidr, parseIpv4Cidr, prefixToNetmask } from '../../core/ip.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import type { InterfaceChange, NetInterface, VlanDevice } from '../../platform/network.js';
import { outboundFetch } from '../../net/outbound.js';
import { allowListOf, isAllowed, isSpecialAddress } from '../../net/special-addresses.js';
import { ServiceState } from '../common/service-state.js';
import {
  APPLIED_KEY, NOTHING_APPLIED, patchInterfaces, patchRoutes, patchVlans, routeKey, sameVlan, type AppliedInterface, type AppliedNetwork, type StaticRouteSpec,
} from './applied-network.js';
import { revertWrites } from '../../model/revert-writes.js';

export const NET_KINDS = {
  interfaceConfig: 'interface_config',
  interfaceRole: 'interface_role',
  vlan: 'vlan',
  route: 'static_route',
  ddnsRecord: 'ddns_record',
  ddnsConfig: 'ddns_config',
} as const;

/** The DNS-provider kind of the ACME area, which DDNS records point at. */
export const DNS_PROVIDER_KIND = 'acme_dns_provider';

/** Interfaces the API lists but never manages: pf logging/sync and IPsec encapsulation pseudo-devices. */
const HIDDEN = /^(pflog|pfsync|enc)\d*$/;

export const vlanDevice = (vlanId: unknown) => `vlan${String(vlanId)}`;


/**
 * What a stored interface setting asks of the host: the fields stored, an address stored alone meaning a static
 * one (as PUT /interfaces/config/{name} reads it).
 */
export function interfaceChangeOf(data: ConfigData): InterfaceChange {
  const change: InterfaceChange = {};
  if (data.ipv4_mode !== undefined) change.ipv4_mode = data.ipv4_mode as InterfaceChange['ipv4_mode'];
  if (data.ipv4_address !== undefined) change.ipv4_address = data.ipv4_address as string | null;
  if (data.ipv4_address !== undefined && data.ipv4_mode === undefined) change.ipv4_mode = 'static';
  if (data.ipv6_address !== undefined) change.ipv6_address = data.ipv6_address as string | null;
  if (data.mtu !== undefined) change.mtu = Number(data.mtu);
  if (data.enabled !== undefined) change.enabled = Boolean(data.enabled);
  if (data.description !== undefined) change.description = data.description as string | null;
  return change;
}

export function validateVlanFields(data: ConfigData): void {
  if (data.ipv4_mode === 'static') {
    const cidr = parseIpv4Cidr(String(data.ipv4_address ?? ''));
    if (!cidr) throw badRequest('body.ipv4_address must be an IPv4 address with a prefix (CIDR) when ipv4_mode is static');
  } else {
    data.ipv4_address = null;
  }
  if (data.ipv6_address) {
    const [address, prefix] = String(data.ipv6_address).split('/');
    if (isIP(address) !== 6 || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= 128))) throw badRequest('body.ipv6_address must be an IPv6 address, optionally with /0..128');
  }
  if (typeof data.description === 'string') data.description = data.description.trim() || null;
}

export function validateRouteFields(data: ConfigData): void {
  const destination = String(data.destination);
  if (destination !== 'default' && !isIpOrCidr(destination)) throw badRequest('body.destination must be default, an IP address or IP/prefix');
  if (!isIP(String(data.gateway))) throw badRequest('body.gateway must be an IP address');
  if (destination !== 'default' && isIP(destination.split('/')[0]) !== isIP(String(data.gateway))) throw badRequest('body.gateway must be of the same address family as the destination');
}

export function validateDdnsRecord(data: ConfigData, existing: ConfigObject | undefined, records: readonly ConfigObject[]): void {
  if (!isDomainName(String(data.hostname).replace(/\.$/, ''), { requireDot: true })) throw badRequest('body.hostname must be a fully qualified domain name');
  if (data.source === 'interface' && !data.interface) throw badRequest('body.interface is required when source is interface');
  if (data.source === 'explicit') {
    const ip = String(data.explicit_ip ?? '');
    const family = isIP(ip);
    if (!family) throw badRequest('body.explicit_ip is required (an IP address) when source is explicit');
    if ((data.record_type === 'a' && family !== 4) || (data.record_type === 'aaaa' && family !== 6)) throw badRequest('body.explicit_ip must match the record type family');
  }
  const clash = records.find((o) => o.id !== existing?.id && o.data.provider_id === data.provider_id && o.data.hostname === data.hostname && o.data.record_type === data.record_type);
  if (clash) throw conflict(`a ${String(data.record_type)} record for ${String(data.hostname)} at that provider already exists`);
}

function routeSpec(route: ConfigData): StaticRouteSpec {
  return { destination: String(route.destination), gateway: String(route.gateway), interface: (route.interface as string | null | undefined) ?? null, metric: Number(route.metric ?? 0), table: Number(route.fib ?? 0) };
}

function vlanSpec(vlan: ConfigData): VlanDevice {
  return { device: vlanDevice(vlan.vlan_id), parent: String(vlan.parent), vlan_id: Number(vlan.vlan_id), mtu: Number(vlan.mtu ?? 1500) };
}

interface DdnsState {
  last_ip: string | null;
  last_ipv6: string | null;
  last_updated: string | null;
  last_status: 'updated' | 'unchanged' | 'error' | null;
  last_error: string | null;
}
const NO_DDNS_STATE: DdnsState = { last_ip: null, last_ipv6: null, last_updated: null, last_status: null, last_error: null };

/** Runs every step of an apply even after one fails, collecting `what: why` for each failure. */
function failureCollector() {
  const failures: string[] = [];
  const attempt = async (what: string, work: () => Promise<{ applied: boolean; message: string } | void>) => {
    try {
      const outcome = await work();
      if (outcome && !outcome.applied) failures.push(`${what}: ${outcome.message}`);
    } catch (error) {
      failures.push(`${what}: ${(error as Error).message}`);
    }
  };
  return { failures, attempt };
}

/** Interfaces as the host shows them plus Bulwark's stored settings, roles and not-yet-created VLANs. */
export class NetworkingService {
  readonly state: ServiceState;
  /** The host's interfaces as last read; collection validators are synchronous and read this. */
  known: NetInterface[] = [];

  constructor(
    private readonly context: AppContext,
    private readonly parts: { vlans: CollectionModel; routes: CollectionModel; ddnsRecords: CollectionModel; ddnsConfig: SingletonModel },
  ) {
    this.state = new ServiceState(context.db, context.clock);
    // A coordinated apply records its version after every applier ran: stamp it on what the applier put in the kernel.
    context.apply.onApplied((event) => {
      const applied = this.state.get(APPLIED_KEY, NOTHING_APPLIED);
      if (applied.awaiting_version) this.state.set(APPLIED_KEY, { ...applied, version: event.version.version, awaiting_version: false });
    });
  }

  async refreshKnown(): Promise<NetInterface[]> {
    this.known = await this.context.platform.network.interfaces();
    return this.known;
  }

  /** Host interfaces and enabled VLAN devices. */
  interfaceNames(): Set<string> {
    return new Set([...this.known.map((i) => i.name), ...this.parts.vlans.objects().filter((v) => v.data.enabled).map((v) => vlanDevice(v.data.vlan_id))]);
  }

  assertInterface(name: string, field: string): void {
    if (this.known.length > 0 && !this.interfaceNames().has(name)) throw badRequest(`${field}: interface ${name} does not exist`);
  }

  role(name: string): string | null {
    const entry = this.context.store.list(NET_KINDS.interfaceRole).find((o) => o.data.name === name);
    return entry ? String(entry.data.role) : null;
  }

  roles(): [string, string][] {
    return this.context.store.list(NET_KINDS.interfaceRole).map((o) => [String(o.data.name), String(o.data.role)]);
  }

  setRole(name: string, role: string): void {
    const { store } = this.context;
    const existing = store.list(NET_KINDS.interfaceRole).find((o) => o.data.name === name);
    if (existing) store.update(NET_KINDS.interfaceRole, existing.id, { name, role });
    else store.insert(NET_KINDS.interfaceRole, { name, role });
  }

  storedConfig(name: string): ConfigData | undefined {
    return this.context.store.list(NET_KINDS.interfaceConfig).find((o) => o.data.name === name)?.data;
  }

  saveConfig(name: string, patch: ConfigData): ConfigData {
    const { store } = this.context;
    const existing = store.list(NET_KINDS.interfaceConfig).find((o) => o.data.name === name);
    const merged = { ...(existing?.data ?? {}), ...patch, name };
    if (existing) store.update(NET_KINDS.interfaceConfig, existing.id, merged);
    else store.insert(NET_KINDS.interfaceConfig, merged);
    return merged;
  }

  async detailed(): Promise<Record<string, unknown>[]> {
    const interfaces = (await this.refreshKnown()).filter((i) => !HIDDEN.test(i.name));
    const routes = await this.context.platform.network.routes(0);
    const defaultRoute = routes.find((r) => r.destination === 'default');
    const rows = interfaces.map((iface) => {
      const stored = this.storedConfig(iface.name);
      return {
        name: iface.name,
        mac: iface.mac,
        ipv4: iface.ipv4,
        ipv4_netmask: iface.ipv4_prefix === null ? null : `0x${prefixToNetmask(iface.ipv4_prefix).split('.').map((o) => Number(o).toString(16).padStart(2, '0')).join('')}`,
        ipv4_prefix: iface.ipv4_prefix,
        ipv6: iface.ipv6,
        status: iface.up ? 'up' : 'down',
        mtu: iface.mtu,
        media: iface.loopback ? null : iface.up ? 'Ethernet autoselect' : null,
        description: (stored?.description as string | null | undefined) ?? iface.description,
        is_vlan: iface.vlan_id !== null || iface.name.startsWith('vlan'),
        vlan_id: iface.vlan_id,
        vlan_parent: iface.vlan_parent,
        ...iface.counters,
        gateway: defaultRoute?.interface === iface.name ? defaultRoute.gateway : null,
        ipv4_mode: (stored?.ipv4_mode as string | undefined) ?? (iface.ipv4 ? 'static' : null),
        role: this.role(iface.name),
      };
    });
    // VLANs configured here but not (yet) present on the host are listed as down.
    for (const vlan of this.parts.vlans.objects()) {
      const device = vlanDevice(vlan.data.vlan_id);
      if (!vlan.data.enabled || rows.some((r) => r.name === device)) continue;
      const cidr = vlan.data.ipv4_address ? String(vlan.data.ipv4_address).split('/') : null;
      rows.push({
        name: device, mac: null, ipv4: cidr?.[0] ?? null, ipv4_netmask: null, ipv4_prefix: cidr ? Number(cidr[1]) : null,
        ipv6: (vlan.data.ipv6_address as string | null | undefined)?.split('/')[0] ?? null, status: 'down', mtu: Number(vlan.data.mtu),
        media: null, description: (vlan.data.description as string | null | undefined) ?? null, is_vlan: true, vlan_id: Number(vlan.data.vlan_id),
        vlan_parent: String(vlan.data.parent), bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0,
        gateway: null, ipv4_mode: String(vlan.data.ipv4_mode) as 'dhcp', role: this.role(device),
      });
    }
    return rows;
  }

  /** 409 when a VLAN's device is still named by a route, a role or the DHCP server. */
  assertVlanUnused(vlan: ConfigObject): void {
    const device = vlanDevice(vlan.data.vlan_id);
    const route = this.parts.routes.objects().find((r) => r.data.interface === device);
    if (route) throw conflict(`VLAN ${device} is in use by static route ${route.id} (field interface)`);
    if (this.role(device)) throw conflict(`VLAN ${device} has the interface role ${String(this.role(device))}; remove the role first`);
    const dhcp = this.context.store.getSingleton('dhcp_config');
    if ((dhcp?.interfaces as string[] | undefined)?.includes(device)) throw conflict(`VLAN ${device} is in use by the DHCP server (field interfaces)`);
  }

  async syncVlan(vlan: ConfigData, present: boolean): Promise<{ applied: boolean; message: string }> {
    return this.context.platform.network.setVlan(vlanSpec(vlan), present && Boolean(vlan.enabled));
  }

  /**
   * Makes the kernel follow one stored write (`before` leaves, `after` arrives). When the kernel refuses, what
   * was withdrawn is put back and the stored object returns to `before` (raw store calls fire no hook), so a
   * 409 leaves the appliance as it was.
   */
  async followWrite(kind: string, change: { before?: ConfigObject; after?: ConfigObject }, sync: (data: ConfigData, present: boolean) => Promise<unknown>): Promise<void> {
    const { before, after } = change;
    const restoreStored = () => revertWrites(this.context.store, [{ kind, before, after }]);
    try {
      if (before) await sync(before.data, false);
    } catch (error) {
      restoreStored();
      throw error;
    }
    try {
      if (after) await sync(after.data, true);
    } catch (error) {
      if (before) await sync(before.data, true).catch((undo: Error) => this.context.log.error({ err: undo.message }, 'networking: the previous object could not be put back into the kernel'));
      restoreStored();
      throw error;
    }
  }

  /**
   * Start of Bulwark: puts back what the applier last put into the kernel (the applied record, never pending edits):
   * VLANs (one the kernel already holds as recorded is left alone), the interface settings (only what differs is
   * changed), then the static routes (`ip route replace`). Every step runs; a failure answers which ones.
   */
  async restoreApplied(): Promise<void> {
    const { network } = this.context.platform;
    const applied = this.applied();
    const { failures, attempt } = failureCollector();
    const held = await this.refreshKnown();
    const holds = (vlan: VlanDevice) => held.some((i) => i.name === vlan.device && i.vlan_parent === vlan.parent && i.vlan_id === vlan.vlan_id && i.mtu === vlan.mtu);
    for (const vlan of applied.vlans) if (!holds(vlan)) await attempt(`creating VLAN ${vlan.device}`, () => network.setVlan(vlan, true));
    const present = new Set((await this.refreshKnown()).map((i) => i.name));
    for (const { name, data } of applied.interfaces) {
      if (!present.has(name)) continue;
      await attempt(`interface ${name}`, () => network.configureInterface(name, interfaceChangeOf(data)));
      if (data.gateway) await attempt(`the default gateway of ${name}`, () => this.applyGateway(name, String(data.gateway)));
    }
    for (const route of applied.routes) await attempt(`route to ${route.destination}`, () => network.setStaticRoute(route, true));
    if (failures.length > 0) throw conflict(`networking: ${failures.join('; ')}`);
  }

  /** Whether the kernel holds what was applied: every recorded VLAN device, static IPv4 address and static route. */
  async appliedInKernel(): Promise<boolean> {
    const applied = this.applied();
    const { network } = this.context.platform;
    const staticAddresses = applied.interfaces.filter(({ data }) => data.ipv4_mode !== 'dhcp' && data.ipv4_mode !== 'none' && typeof data.ipv4_address === 'string' && data.ipv4_address);
    if (applied.vlans.length > 0 || staticAddresses.length > 0) {
      const held = new Map((await network.interfaces()).map((i) => [i.name, i]));
      if (!applied.vlans.every((vlan) => held.has(vlan.device))) return false;
      // An interface that is gone (a USB NIC unplugged) is not waited for; one that is there holds its address.
      const holdsAddress = ({ name, data }: { name: string; data: ConfigData }) => {
        const iface = held.get(name);
        const address = String(data.ipv4_address).split('/')[0];
        return !iface || iface.ipv4 === address || (iface.addresses ?? []).includes(address);
      };
      if (!staticAddresses.every(holdsAddress)) return false;
    }
    for (const table of new Set(applied.routes.map((route) => route.table))) {
      const held = await network.routes(table);
      // The kernel lists a host route without its /32 (/128).
      const bare = (destination: string) => destination.replace(/\/(32|128)$/, '');
      if (!applied.routes.filter((route) => route.table === table).every((route) => held.some((r) => bare(r.destination) === bare(route.destination)))) return false;
    }
    return true;
  }

  /** Whether anything was applied that a start has to bring back. */
  hasApplied(): boolean {
    const applied = this.applied();
    return applied.routes.length > 0 || applied.vlans.length > 0 || applied.interfaces.length > 0;
  }

  appliedVersion(): number | null {
    return this.state.get(APPLIED_KEY, NOTHING_APPLIED).version ?? null;
  }

  async syncRoute(route: ConfigData, present: boolean): Promise<{ applied: boolean; message: string }> {
    return this.context.platform.network.setStaticRoute(routeSpec(route), present && Boolean(route.enabled));
  }

  // ---- the applier: interface addresses, VLANs and static routes as one area of the apply coordinator ----

  private desiredRoutes(): StaticRouteSpec[] {
    return this.parts.routes.objects().filter((o) => o.data.enabled).map((o) => routeSpec(o.data));
  }

  private desiredVlans(): VlanDevice[] {
    return this.parts.vlans.objects().filter((o) => o.data.enabled).map((o) => vlanSpec(o.data));
  }

  private desiredInterfaces(): AppliedInterface[] {
    return this.context.store.list(NET_KINDS.interfaceConfig).map((o) => ({ name: String(o.data.name), data: o.data }));
  }

  /** What the kernel holds from Bulwark: as recorded, or (never recorded, an older install) the stored configuration. */
  private applied(): AppliedNetwork & { interfaces: AppliedInterface[] } {
    const applied = this.state.get(APPLIED_KEY, NOTHING_APPLIED);
    if (!applied.recorded) return { recorded: true, routes: this.desiredRoutes(), vlans: this.desiredVlans(), interfaces: this.desiredInterfaces() };
    return { ...applied, interfaces: applied.interfaces ?? this.desiredInterfaces() };
  }

  /** The version a write outside a coordinated apply leaves the record at: the active one when nothing else changed. */
  private writeVersion(): number | null {
    return this.context.apply.versions.activeIfCurrent()?.version ?? null;
  }

  /** After a static-route or VLAN write the kernel followed: exactly that object changes in the record. */
  recordFollowed(kind: string, change: { before?: ConfigObject; after?: ConfigObject }): void {
    const applied = this.applied();
    const enabled = (object?: ConfigObject) => (object?.data.enabled ? object : undefined);
    const [before, after] = [enabled(change.before), enabled(change.after)];
    const next = kind === NET_KINDS.route
      ? { ...applied, routes: patchRoutes(applied.routes, before ? routeSpec(before.data) : null, after ? routeSpec(after.data) : null) }
      : { ...applied, vlans: patchVlans(applied.vlans, before ? vlanSpec(before.data) : null, after ? vlanSpec(after.data) : null) };
    this.state.set(APPLIED_KEY, { ...next, version: this.writeVersion(), awaiting_version: false });
  }

  /** After PUT /interfaces/config/{name} was applied: the interface's settings as stored now are what the kernel holds. */
  recordInterface(name: string, data: ConfigData): void {
    const applied = this.applied();
    this.state.set(APPLIED_KEY, { ...applied, interfaces: patchInterfaces(applied.interfaces, name, data), version: this.writeVersion(), awaiting_version: false });
  }

  /**
   * Makes the kernel hold the stored network configuration, whatever replaced it (restore, import, the
   * commit-confirm rollback, a reload): routes and VLANs applied before but no longer stored are withdrawn,
   * VLANs created, each stored interface setting (addresses, MTU, state, description, gateway) applied, and
   * every enabled static route installed (`ip route replace`, idempotent). Every step runs even after one
   * fails; any failure answers 409 listing them, and what may still be in the kernel is remembered so the next
   * apply withdraws it.
   */
  async applyAll(): Promise<void> {
    const { network } = this.context.platform;
    const previous = this.applied();
    const routes = this.desiredRoutes();
    const vlans = this.desiredVlans();
    const { failures, attempt } = failureCollector();
    for (const route of previous.routes) {
      if (!routes.some((wanted) => routeKey(wanted) === routeKey(route))) await attempt(`withdrawing the route to ${route.destination}`, () => network.setStaticRoute(route, false));
    }
    for (const vlan of previous.vlans) {
      if (!vlans.some((wanted) => wanted.device === vlan.device)) await attempt(`removing VLAN ${vlan.device}`, () => network.setVlan(vlan, false));
    }
    // A VLAN the kernel already holds as stored is left alone: re-creating it would drop its traffic.
    for (const vlan of vlans) if (!previous.vlans.some((held) => sameVlan(held, vlan))) await attempt(`creating VLAN ${vlan.device}`, () => network.setVlan(vlan, true));
    const present = new Set((await this.refreshKnown()).map((i) => i.name));
    for (const config of this.context.store.list(NET_KINDS.interfaceConfig)) {
      const name = String(config.data.name);
      // Settings kept for an interface this host does not have (an imported configuration) wait for it.
      if (!present.has(name)) continue;
      await attempt(`interface ${name}`, () => network.configureInterface(name, interfaceChangeOf(config.data)));
      if (config.data.gateway) await attempt(`the default gateway of ${name}`, () => this.applyGateway(name, String(config.data.gateway)));
    }
    for (const route of routes) await attempt(`route to ${route.destination}`, () => network.setStaticRoute(route, true));
    if (failures.length > 0) {
      const union = <T>(held: T[], wanted: T[], same: (a: T, b: T) => boolean) => [...wanted, ...held.filter((item) => !wanted.some((w) => same(w, item)))];
      this.state.set(APPLIED_KEY, {
        recorded: true, routes: union(previous.routes, routes, (a, b) => routeKey(a) === routeKey(b)), vlans: union(previous.vlans, vlans, (a, b) => a.device === b.device),
        interfaces: this.desiredInterfaces(), version: null, awaiting_version: false,
      });
      throw conflict(`networking: ${failures.join('; ')}`);
    }
    this.state.set(APPLIED_KEY, { recorded: true, routes, vlans, interfaces: this.desiredInterfaces(), version: null, awaiting_version: true });
  }

  /** The interface's gateway moves the default route only if this interface owns it or none exists (as the PUT does). */
  private async applyGateway(name: string, gateway: string): Promise<void> {
    const { network } = this.context.platform;
    const defaultRoute = (await network.routes(0)).find((r) => r.destination === 'default');
    if (!defaultRoute || defaultRoute.interface === name) await network.setStaticRoute({ destination: 'default', gateway, interface: name, metric: 0, table: 0 }, true);
  }

  // ---- dynamic DNS ----

  ddnsState(id: string): DdnsState {
    return this.state.get(`ddns.${id}`, NO_DDNS_STATE);
  }

  providerName(providerId: string): string {
    const provider = this.context.store.get(DNS_PROVIDER_KIND, providerId);
    return provider ? String(provider.data.name ?? `#${providerId}`) : `#${providerId}`;
  }

  /** Resolves the record's address(es) and pushes them when they changed. */
  async updateRecord(id: string): Promise<{ ok: boolean; message: string }> {
    const record = this.parts.ddnsRecords.find(id);
    if (!record.data.enabled) return { ok: true, message: 'Skipped("record disabled")' };
    const previous = this.ddnsState(id);
    const now = isoTime(this.context.clock.now());
    try {
      const wantV4 = record.data.record_type !== 'aaaa';
      const wantV6 = record.data.record_type !== 'a';
      const v4 = wantV4 ? await this.addressFor(record.data, 4) : null;
      const v6 = wantV6 ? await this.addressFor(record.data, 6) : null;
      if (v4 === previous.last_ip && v6 === previous.last_ipv6 && previous.last_status !== 'error') {
        this.state.set(`ddns.${id}`, { ...previous, last_updated: now, last_status: 'unchanged', last_error: null });
        return { ok: true, message: 'Unchanged' };
      }
      await this.push(record.data, { v4, v6 });
      this.state.set(`ddns.${id}`, { last_ip: v4, last_ipv6: v6, last_updated: now, last_status: 'updated', last_error: null });
      return { ok: true, message: `Updated([${[v4, v6].filter(Boolean).map((a) => `"${a}"`).join(', ')}])` };
    } catch (error) {
      const message = (error as Error).message;
      this.state.set(`ddns.${id}`, { ...previous, last_updated: now, last_status: 'error', last_error: message });
      return { ok: false, message };
    }
  }

  private async addressFor(record: ConfigData, family: 4 | 6): Promise<string> {
    if (record.source === 'explicit') {
      const ip = String(record.explicit_ip);
      if (isIP(ip) !== family) throw new Error(`explicit_ip ${ip} is not an IPv${family} address`);
      return ip;
    }
    if (record.source === 'interface') {
      const iface = (await this.refreshKnown()).find((i) => i.name === record.interface);
      if (!iface) throw new Error(`interface ${String(record.interface)} does not exist`);
      const ip = family === 4 ? iface.ipv4 : iface.ipv6;
      if (!ip) throw new Error(`interface ${iface.name} has no IPv${family} address`);
      return ip;
    }
    const config = this.parts.ddnsConfig.read();
    const url = String(family === 4 ? config.ip_echo_url_v4 : config.ip_echo_url_v6);
    // An echo answers one address: a few bytes, never a download.
    const response = await outboundFetch(url, {}, { allowList: config.allow_private_echo as string[], timeoutMs: 10_000, maxBytes: 4096 });
    const text = (await response.text()).trim();
    if (response.status !== 200 || isIP(text) !== family) throw new Error(`the address echo service ${url} did not answer an IPv${family} address`);
    return text;
  }

  /**
   * Pushes the A/AAAA records through the provider's API (Cloudflare: find the record by name and type, then
   * update it or create it). The provider and its sealed token belong to the ACME area's DNS providers.
   */
  private async push(record: ConfigData, addresses: { v4: string | null; v6: string | null }): Promise<void> {
    const provider = this.context.store.get(DNS_PROVIDER_KIND, String(record.provider_id));
    if (!provider) throw new Error(`DNS provider ${String(record.provider_id)} no longer exists`);
    if (provider.data.kind !== 'cloudflare') throw new Error(`DNS provider ${this.providerName(provider.id)} (${String(provider.data.kind)}) cannot push A/AAAA records; use a cloudflare provider`);
    const token = this.context.models.get(DNS_PROVIDER_KIND).secret(provider, 'api_token');
    if (!token) throw new Error(`DNS provider ${this.providerName(provider.id)} has no api_token`);
    const extra = (provider.data.extra as Record<string, string> | undefined) ?? {};
    // extra.api_base points at a Cloudflare-compatible endpoint (default the public API).
    const api = String(extra.api_base || 'https://api.cloudflare.com/client/v4').replace(/\/$/, '');
    const allowList = this.parts.ddnsConfig.read().allow_private_echo as string[];
    // Plain http only to an address the admin allow-listed (a LAN stand-in); the public API is https.
    const apiHost = new URL(api).hostname.replace(/^\[|\]$/g, '');
    const allowHttp = api.startsWith('http:') && isIP(apiHost) !== 0 && isAllowed(apiHost, allowListOf(allowList)) && isSpecialAddress(apiHost);
    const policy = { allowList, allowHttp, timeoutMs: 15_000 };
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const call = async <T>(path: string, init: { method?: string; body?: string } = {}): Promise<T> => {
      const response = await outboundFetch(`${api}${path}`, { ...init, headers }, policy);
      const body = (await response.json().catch(() => ({}))) as T & { success?: boolean; errors?: { message: string }[] };
      if (!response.ok || body.success === false) throw new Error(`Cloudflare ${init.method ?? 'GET'} ${path}: ${body.errors?.map((e) => e.message).join('; ') || `HTTP ${response.status}`}`);
      return body;
    };
    let zoneId = extra.zone_id;
    if (!zoneId) {
      const zones = await call<{ result?: { id: string }[] }>(`/zones?name=${encodeURIComponent(String(provider.data.zone))}`);
      zoneId = zones.result?.[0]?.id ?? '';
      if (!zoneId) throw new Error(`zone ${String(provider.data.zone)} not found with this token`);
    }
    const name = String(record.hostname).replace(/\.$/, '');
    for (const [type, content] of [['A', addresses.v4], ['AAAA', addresses.v6]] as const) {
      if (!content) continue;
      const existing = await call<{ result?: { id: string }[] }>(`/zones/${zoneId}/dns_records?type=${type}&name=${encodeURIComponent(name)}`);
      const body = JSON.stringify({ type, name, content, ttl: Number(record.ttl), proxied: false });
      const id = existing.result?.[0]?.id;
      await call(id ? `/zones/${zoneId}/dns_records/${id}` : `/zones/${zoneId}/dns_records`, { method: id ? 'PUT' : 'POST', body });
    }
  }

  assertKnownInterface(name: string): NetInterface | undefined {
    const found = this.known.find((i) => i.name === name);
    if (!found && !this.interfaceNames().has(name)) throw notFound(`interface ${name} not found`);
    return found;
  }
}
