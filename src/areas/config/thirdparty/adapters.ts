import { isIP } from 'node:net';
import type { AppContext } from '../../../context.js';
import { badRequest, conflict } from '../../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../../store/config-store.js';
import { publicKeyOf } from '../../vpn/wireguard.js';
import { AliasCreateBody, toStoredAlias } from '../../packet-filter/aliases.js';
import { RuleCreateBody, sortRulesByPriority, toStoredRule } from '../../packet-filter/rules.js';
import { NatCreateBody, toStoredNat } from '../../packet-filter/nat.js';
import { inSubnet } from '../../../render/kea/kea.js';
import type { AddressMatch, MappedKind } from './model.js';

/** What an adapter may look at while it builds a request body. */
export interface AdapterContext {
  app: AppContext;
  /** The host's interface names (null when the platform could not list them: the host checks are then left out, as the API does). */
  hostInterfaces: ReadonlySet<string> | null;
}

/**
 * Where an intermediate kind goes: the store kind of the owning area's object and the request body its POST
 * takes. The importer validates the body against the POST's own body schema (defaults included), runs the
 * area's request normaliser when it has one (`request`), then the collection's create (uniqueness,
 * references, the area's validator, sealing) — exactly what the API does. A body an adapter cannot build is
 * refused with a 400 naming why, which the importer lists as skipped.
 */
export interface Adapter {
  kind: string;
  /** The parent object's link field, for nested collections (peers under a tunnel). */
  parentLink?: string;
  body(data: ConfigData, ctx: AdapterContext): { body: ConfigData; notes: string[] };
  /** For areas whose POST normalises the request (packet filter): its body schema, normaliser and post-write step. */
  request?: { schema: object; toStored(body: ConfigData, ctx: AdapterContext): ConfigData; after?(ctx: AdapterContext): void };
  /** For targets that are not a declared collection (interface roles): validates and stores like their PUT. */
  write?(body: ConfigData, ctx: AdapterContext): ConfigObject;
}

const DESCRIPTION_MAX = 255;
const LABEL_MAX = 63;

/** Descriptions are free text in the source firewalls; Bulwark's are one line of at most 255 characters. */
function description(value: unknown, notes: string[], max = DESCRIPTION_MAX, forbidden = /[\0-\x1f\x7f]/g): string | null {
  const text = String(value ?? '').trim();
  const clean = text.replace(forbidden, ' ').trim();
  const cut = clean.length > max ? clean.slice(0, max) : clean;
  if (cut !== text) notes.push(`description shortened or cleaned to fit (${max} characters, one line)`);
  return cut || null;
}

/** A mapped address as the packet filter writes it: any, an address/CIDR, or `<alias>`. */
function address(match: AddressMatch | null | undefined): string {
  const value = match?.address ?? 'any';
  if (value === 'any') return 'any';
  return isIP(value.split('/')[0]) ? value : `<${value}>`;
}

/** `80`, `1000-2000` or `1000:2000` → start/end request fields; a port alias has no equivalent on rules. */
function ports(match: AddressMatch | null | undefined, side: 'src' | 'dst' | 'redirect', what: string): ConfigData {
  const port = match?.port ?? null;
  if (port === null || port === '' || port === 'any') return {};
  const range = /^(\d{1,5})(?:[:-](\d{1,5}))?$/.exec(port);
  if (!range) throw badRequest(`${what} port "${port}" is a port alias: Bulwark rules take a port or a range, not a port alias`);
  return { [`${side}_port_start`]: Number(range[1]), [`${side}_port_end`]: Number(range[2] ?? range[1]) };
}

function requireHostInterface(name: string, field: string, ctx: AdapterContext): void {
  if (ctx.hostInterfaces && !ctx.hostInterfaces.has(name)) {
    throw badRequest(`${field}: interface ${name} does not exist on this appliance (map it with interface_map)`);
  }
}

const status = (enabled: unknown) => (enabled === false ? 'disabled' : 'active');

export const ADAPTERS: Partial<Record<MappedKind, Adapter>> = {
  // An interface becomes a role on the local interface it is mapped to; its addressing is shown, not applied
  // (PUT /interfaces/config acts on the host at once and could cut the very access the import came over).
  interface: {
    kind: 'interface_role',
    body(data, ctx) {
      const name = String(data.name);
      const notes: string[] = [];
      if (data.ipv4_address || data.ipv6_address || data.ipv4_mode === 'dhcp') {
        notes.push(`addressing not imported (${[data.ipv4_mode === 'dhcp' ? 'DHCP' : data.ipv4_address, data.ipv6_address].filter(Boolean).join(', ')}): set it with PUT /interfaces/config/${name}`);
      }
      if (name === data.source_name && ctx.hostInterfaces && !ctx.hostInterfaces.has(name)) {
        throw badRequest(`${name} is a name of the source firewall: map it to a local interface with interface_map to import its role`);
      }
      return { notes, body: { name, role: String(data.source_name) } };
    },
    write(body, ctx) {
      const { store } = ctx.app;
      const name = String(body.name);
      if (!/^[A-Za-z][A-Za-z0-9_-]{0,31}$/.test(String(body.role))) throw badRequest('body.role must start with a letter and hold at most 32 letters, digits, _ and -');
      requireHostInterface(name, 'interface', ctx);
      const existing = store.list('interface_role').find((o) => o.data.name === name);
      if (existing) throw conflict(`interface ${name} already has the role ${String(existing.data.role)}`);
      return store.insert('interface_role', { name, role: body.role });
    },
  },
  vlan: {
    kind: 'vlan',
    body(data, ctx) {
      const notes: string[] = [];
      requireHostInterface(String(data.parent), 'body.parent', ctx);
      const cidr = typeof data.ipv4_address === 'string' ? data.ipv4_address : null;
      if (data.pcp !== null && data.pcp !== undefined) notes.push(`priority (PCP ${String(data.pcp)}) not mapped`);
      return {
        notes,
        body: {
          vlan_id: data.tag, parent: data.parent, ipv4_mode: cidr ? 'static' : 'none', ipv4_address: cidr,
          enabled: true, description: description(data.description, notes),
        },
      };
    },
  },
  gateway: {
    kind: 'mw_gateway',
    body(data, ctx) {
      if (data.dynamic) throw badRequest('dynamic gateway (address learned by DHCP/PPP): a Bulwark gateway needs a next-hop address');
      requireHostInterface(String(data.interface), 'body.interface', ctx);
      const notes: string[] = [];
      if (data.default) notes.push('marked default in the source: the default route is not changed by an import');
      const weight = Math.min(255, Math.max(1, Number(data.weight) || 1));
      const monitor = typeof data.monitor === 'string' && isIP(data.monitor) ? data.monitor : null;
      return {
        notes,
        body: {
          name: data.name, instance_id: '61696677-0000-0000-0000-000000000000', interface: data.interface, next_hop: data.address,
          ip_version: data.ip_version === 'inet6' ? 'v6' : 'v4', monitor_target: monitor, weight, enabled: data.enabled !== false,
        },
      };
    },
  },
  route: {
    kind: 'static_route',
    body(data) {
      if (!data.gateway_address) throw badRequest(`via the dynamic gateway ${String(data.gateway)}: a Bulwark static route needs a next-hop address`);
      const notes: string[] = [];
      return {
        notes,
        body: { destination: data.network, gateway: data.gateway_address, interface: null, metric: 0, enabled: data.enabled !== false, description: description(data.description, notes), fib: 0 },
      };
    },
  },
  alias: {
    kind: 'alias',
    request: { schema: AliasCreateBody, toStored: (body) => toStoredAlias(body) },
    body(data) {
      const notes: string[] = [];
      // nested aliases are written <name>; addresses, CIDRs, ranges, ports and URLs are kept as they are
      const entries = (data.entries as string[]).map((entry) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(entry) ? `<${entry}>` : entry));
      let type = String(data.type);
      if (type === 'networkgroup') type = 'network';
      if (type === 'url' || type === 'urltable') type = 'url_table';
      if (type === 'host' && entries.some((e) => !e.startsWith('<') && (e.includes('/') || e.includes('-')))) {
        type = 'network';
        notes.push('host alias holding networks or ranges: imported as a network alias');
      }
      if (data.enabled === false) notes.push('disabled in the source: imported disabled');
      if (data.refresh_days) notes.push(`refresh every ${String(data.refresh_days)} day(s) in the source: Bulwark refreshes url_table aliases on its own schedule`);
      return { notes, body: { name: data.name, alias_type: type, entries, description: description(data.description, notes), enabled: data.enabled !== false } };
    },
  },
  rule: {
    kind: 'rule',
    request: {
      schema: RuleCreateBody,
      toStored: (body, ctx) => toStoredRule(body, undefined, ctx.app.store.list('rule')),
      after: (ctx) => sortRulesByPriority(ctx.app),
    },
    body(data) {
      const notes: string[] = [];
      const source = data.source as AddressMatch;
      const destination = data.destination as AddressMatch;
      if (data.gateway) notes.push(`policy routing via gateway ${String(data.gateway)} not imported: add a /multiwan/policies entry`);
      if (data.floating && data.interface === 'any') notes.push('floating rule on every interface');
      return {
        notes,
        body: {
          action: data.action === 'reject' ? 'block_return' : String(data.action),
          direction: ['in', 'out', 'any'].includes(String(data.direction)) ? data.direction : 'in',
          protocol: String(data.protocol),
          ip_version: data.ip_version === 'inet46' ? 'both' : data.ip_version,
          interface: data.interface === 'any' ? null : data.interface,
          src_addr: address(source), dst_addr: address(destination),
          ...ports(source, 'src', 'source'), ...ports(destination, 'dst', 'destination'),
          src_invert: source?.invert ?? false, dst_invert: destination?.invert ?? false,
          log: data.log === true, quick: data.quick !== false,
          description: description(data.description, notes), status: status(data.enabled),
        },
      };
    },
  },
  nat_port_forward: {
    kind: 'nat',
    request: { schema: NatCreateBody, toStored: (body) => toStoredNat(body) },
    body(data) {
      if (data.no_rdr) throw badRequest('a "no redirect" exception has no Bulwark equivalent');
      const target = String(data.redirect_address);
      if (!isIP(target)) throw badRequest(`redirect target "${target}" is an alias: a Bulwark port forward redirects to one address`);
      const notes: string[] = [];
      const local = data.redirect_port === null ? {} : ports({ address: target, port: String(data.redirect_port), invert: false }, 'redirect', 'redirect');
      if (local.redirect_port_start !== local.redirect_port_end) {
        // a range forwarded to a range keeps its offset in pf; Bulwark forwards every matched port to one port
        throw badRequest(`redirect port range ${String(data.redirect_port)}: a Bulwark port forward sends every matched port to one port`);
      }
      const source = data.source as AddressMatch;
      const destination = data.destination as AddressMatch;
      if (source?.invert || destination?.invert) throw badRequest('"not" matches have no equivalent on NAT rules');
      return {
        notes,
        body: {
          nat_type: 'dnat', interface: data.interface, protocol: String(data.protocol), src_addr: address(source), dst_addr: address(destination),
          ...ports(source, 'src', 'source'), ...ports(destination, 'dst', 'destination'), redirect_addr: target, ...local,
          label: description(data.description, notes, LABEL_MAX, /["';\\\r\n\0]/g), status: status(data.enabled),
        },
      };
    },
  },
  nat_outbound: {
    kind: 'nat',
    request: { schema: NatCreateBody, toStored: (body) => toStoredNat(body) },
    body(data) {
      const translation = String(data.translation);
      if (translation === 'none') throw badRequest('a "do not NAT" exception has no Bulwark equivalent');
      if (translation !== 'interface' && !isIP(translation)) throw badRequest(`translation target "${translation}" is an alias: Bulwark source NAT translates to one address`);
      const source = data.source as AddressMatch;
      const destination = data.destination as AddressMatch;
      if (source?.invert || destination?.invert) throw badRequest('"not" matches have no equivalent on NAT rules');
      const notes: string[] = [];
      return {
        notes,
        body: {
          nat_type: translation === 'interface' ? 'masquerade' : 'snat', interface: data.interface, protocol: String(data.protocol),
          src_addr: address(source), dst_addr: address(destination), ...ports(source, 'src', 'source'), ...ports(destination, 'dst', 'destination'),
          ...(translation === 'interface' ? {} : { redirect_addr: translation }), static_port: data.static_port === true,
          label: description(data.description, notes, LABEL_MAX, /["';\\\r\n\0]/g), status: status(data.enabled),
        },
      };
    },
  },
  dhcp_static_mapping: {
    kind: 'dhcp_reservation',
    body(data, ctx) {
      if (!data.ip_address) throw badRequest('no IP address: a Bulwark reservation fixes one');
      const ip = String(data.ip_address);
      const subnet = ctx.app.store.list('dhcp_subnet').find((s) => inSubnet(ip, String(s.data.network)));
      const notes = subnet ? [] : ['no Bulwark DHCP subnet holds this address yet: stored as a global reservation'];
      return {
        notes,
        body: {
          subnet_id: subnet?.id ?? null, mac_address: data.mac, ip_address: ip, hostname: data.hostname ?? null,
          description: description(data.description, notes, 512),
        },
      };
    },
  },
  dns_host_override: {
    kind: 'dns_host',
    body(data) {
      const notes: string[] = [];
      return {
        notes,
        body: {
          hostname: data.hostname, domain: data.domain, record_type: isIP(String(data.address)) === 6 ? 'AAAA' : 'A', value: data.address,
          description: description(data.description, notes, 512), enabled: data.enabled !== false,
        },
      };
    },
  },
  wg_tunnel: {
    kind: 'wg_tunnel',
    body(data, ctx) {
      const addresses = String(data.address ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      const used = new Set(ctx.app.store.list('wg_tunnel').map((o) => o.data.interface));
      let n = 0;
      while (used.has(`wg${n}`)) n++;
      const privateKey = String(data.private_key);
      const mtu = typeof data.mtu === 'number' && data.mtu >= 576 && data.mtu <= 9420 ? data.mtu : null;
      const notes = [
        ...(addresses.length > 1 ? [`only the first tunnel address is kept (${addresses.slice(1).join(', ')} dropped)`] : []),
        ...(data.public_key && data.public_key !== publicKeyOf(privateKey) ? ['the public key in the file did not match its private key: derived again'] : []),
        ...(data.enabled === false ? ['disabled in the source: imported down'] : []),
      ];
      return {
        notes,
        body: {
          name: data.name, interface: `wg${n}`, private_key: privateKey, public_key: publicKeyOf(privateKey),
          listen_port: data.listen_port, address: addresses[0] ?? '', dns: data.dns ?? null, mtu,
          listen_interface: null, split_routes: null, endpoint_host: null, status: 'down',
        },
      };
    },
  },
  wg_peer: {
    kind: 'wg_peer',
    parentLink: 'tunnel_id',
    body(data) {
      return {
        notes: data.enabled === false ? ['disabled in the source: Bulwark peers have no enabled flag; imported active'] : [],
        body: {
          name: String(data.name ?? '').slice(0, 128), public_key: data.public_key,
          ...(typeof data.preshared_key === 'string' && data.preshared_key ? { preshared_key: data.preshared_key } : {}),
          endpoint: data.endpoint ?? null, allowed_ips: data.allowed_ips, persistent_keepalive: data.persistent_keepalive ?? null,
        },
      };
    },
  },
};

/**
 * Kinds kept as an intermediate `thirdparty.<kind>` object: users, because Bulwark accounts live in the
 * identity tables (registration, password policy, SSO links), not in the configuration store; an administrator
 * creates the account from the imported record.
 */
export const PLACEHOLDER_KINDS: readonly MappedKind[] = ['imported_user'];
