/**
 * Renders the DHCPv4 configuration for Kea (kea-dhcp4). Pure: configuration in, JSON text out
 * (golden-tested, and checked with `kea-dhcp4 -t` where it is installed).
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';
import { DDNS_LISTEN } from './kea-ddns.js';
import { keaCidr, keaClientId, keaHex, keaInterface, keaIpv4, keaIpv4List, keaMac, keaName, keaPeerUrl, keaText } from './kea-values.js';

export interface KeaGlobal {
  interfaces: string[];
  authoritative: boolean;
  default_lease_time: number;
  max_lease_time: number;
  dns_servers: string[];
  domain_name: string;
  domain_search: string[];
  ntp_servers: string[];
  wins_servers: string[];
  next_server?: string | null;
  boot_filename?: string | null;
  log_level: string;
  accept_relayed?: boolean;
}

export type OptionValueType = 'ip' | 'ips' | 'string' | 'u8' | 'u16' | 'u32' | 'hex';

export interface KeaSubnet {
  id: string;
  network: string;
  pool_start: string;
  pool_end: string;
  gateway: string;
  dns_servers?: string[] | null;
  domain_name?: string | null;
  lease_time?: number | null;
  max_lease_time?: number | null;
  renewal_time?: number | null;
  rebinding_time?: number | null;
  subnet_type: string;
  enabled: boolean;
  trusted_relays: string[];
  ntp_servers?: string[] | null;
  options: { code: number; value_type: OptionValueType; value: string }[];
}

export interface KeaReservation {
  subnet_id?: string | null;
  mac_address: string;
  ip_address: string;
  hostname?: string | null;
  client_id?: string | null;
}

export interface KeaDdns {
  enabled: boolean;
  forward_zone: string;
  ttl: number;
}

/** Hook libraries installed on the system (absolute paths found by the platform); absent ones are not loaded. */
export interface KeaHooks {
  /** libdhcp_lease_cmds.so: `lease4-get-all`, `lease4-del` over the control socket. */
  leaseCommands?: string | null;
  /** libdhcp_ha.so: high availability with a partner server. */
  highAvailability?: string | null;
  /** libdhcp_run_script.so and the script it runs at each lease event (src/platform/kea-lease-events.ts). */
  leaseEvents?: { library: string; script: string } | null;
}

/** High availability with one partner (the stored /dhcp/ha/config). */
export interface KeaHa {
  mode: 'standalone' | 'active-active' | 'hot-standby';
  /** `host:port` of the partner's HA listener. */
  peer?: string | null;
  /** `host:port` this server's HA listener binds. */
  listen?: string | null;
  /** 1 (default): this server is the primary; 2: it is the partner (standby or secondary). */
  node_id?: number | null;
}

export interface KeaInput {
  global: KeaGlobal;
  subnets: KeaSubnet[];
  reservations: KeaReservation[];
  ddns: KeaDdns;
  paths: { leaseFile: string; controlSocket: string };
  hooks?: KeaHooks;
  ha?: KeaHa | null;
}

/** A hook library path as Bulwark found it: absolute, plain characters, a shared object. */
function hookPath(path: string, field: string): string {
  if (!/^\/[A-Za-z0-9/._+-]+\.so$/.test(path)) throw new RenderRefusal(field, 'is not the path of a hook library');
  return path;
}

const SEVERITY: Record<string, string> = { error: 'ERROR', warn: 'WARN', info: 'INFO', debug: 'DEBUG', trace: 'DEBUG' };

/** A stable Kea subnet id (1..2^28) from a subnet's UUID, so lease files survive reordering. */
export function keaSubnetId(uuid: string, taken: Set<number>): number {
  let id = (parseInt(uuid.replace(/-/g, '').slice(0, 7), 16) % 0x0fffffff) + 1;
  while (taken.has(id)) id = (id % 0x0fffffff) + 1;
  taken.add(id);
  return id;
}

/** The wire bytes of a custom option value, as hex (Kea accepts any code this way, defined or not). */
export function optionHex(valueType: OptionValueType, value: string): string {
  const ipBytes = (ip: string) => ip.trim().split('.').map((o) => Number(o).toString(16).padStart(2, '0')).join('');
  switch (valueType) {
    case 'ip':
      return ipBytes(value);
    case 'ips':
      return value.split(',').map(ipBytes).join('');
    case 'string':
      return Buffer.from(value, 'ascii').toString('hex');
    case 'u8':
      return Number(value).toString(16).padStart(2, '0');
    case 'u16':
      return Number(value).toString(16).padStart(4, '0');
    case 'u32':
      return Number(value).toString(16).padStart(8, '0');
    case 'hex':
      return value.replace(/[:\s]/g, '').toLowerCase();
  }
}

const option = (name: string, data: string) => ({ name, data });

function ipv4Number(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

/** Whether an IPv4 address lies in a CIDR. */
export function inSubnet(address: string, cidr: string): boolean {
  const [network, prefixText] = cidr.split('/');
  if (isIP(address) !== 4 || isIP(network) !== 4) return false;
  const size = 2 ** (32 - Number(prefixText ?? 32));
  return Math.floor(ipv4Number(address) / size) === Math.floor(ipv4Number(network) / size);
}

/** `192.168.1.1/24` → `192.168.1.0/24` (Kea wants the network address). */
export function networkOf(cidr: string): string {
  const [address, prefixText] = cidr.split('/');
  const prefix = Number(prefixText ?? 32);
  const size = 2 ** (32 - prefix);
  const base = Math.floor(ipv4Number(address) / size) * size;
  return `${[24, 16, 8, 0].map((s) => Math.floor(base / 2 ** s) % 256).join('.')}/${prefix}`;
}

/**
 * The HA hook's parameters: two peers, `node1` the primary and `node2` the standby (hot-standby) or secondary
 * (load balancing); this server is the one its node id names. Peers talk over Kea's own HTTP listener
 * (multi-threading with a dedicated listener), so no control agent is needed.
 */
function highAvailability(input: KeaInput): Record<string, unknown> | null {
  const ha = input.ha;
  if (!ha || ha.mode === 'standalone') return null;
  if (!ha.listen) throw new RenderRefusal('ha.listen', 'is required for high availability');
  if (!ha.peer) throw new RenderRefusal('ha.peer', 'is required for high availability');
  const self = ha.node_id === 2 ? 1 : 0;
  const roles = ha.mode === 'hot-standby' ? ['primary', 'standby'] : ['primary', 'secondary'];
  const urls = self === 0 ? [keaPeerUrl(ha.listen, 'ha.listen'), keaPeerUrl(ha.peer, 'ha.peer')] : [keaPeerUrl(ha.peer, 'ha.peer'), keaPeerUrl(ha.listen, 'ha.listen')];
  return {
    'this-server-name': `node${self + 1}`,
    mode: ha.mode === 'hot-standby' ? 'hot-standby' : 'load-balancing',
    'heartbeat-delay': 10_000,
    'max-response-delay': 60_000,
    'max-ack-delay': 5_000,
    'max-unacked-clients': 5,
    'multi-threading': { 'enable-multi-threading': true, 'http-dedicated-listener': true, 'http-listener-threads': 0, 'http-client-threads': 0 },
    peers: [0, 1].map((index) => ({ name: `node${index + 1}`, url: urls[index], role: roles[index], 'auto-failover': true })),
  };
}

/** The hook libraries: lease commands when installed; high availability (which needs them) when configured. */
function hookLibraries(input: KeaInput): { 'hooks-libraries'?: object[] } {
  const libraries: object[] = [];
  const ha = highAvailability(input);
  if (input.hooks?.leaseCommands) libraries.push({ library: hookPath(input.hooks.leaseCommands, 'hooks.leaseCommands') });
  if (ha) {
    if (!input.hooks?.leaseCommands) throw new RenderRefusal('hooks.leaseCommands', 'is required for high availability');
    if (!input.hooks.highAvailability) throw new RenderRefusal('hooks.highAvailability', 'is not installed');
    libraries.push({ library: hookPath(input.hooks.highAvailability, 'hooks.highAvailability'), parameters: { 'high-availability': [ha] } });
  }
  if (input.hooks?.leaseEvents) {
    const { library, script } = input.hooks.leaseEvents;
    if (!/^\/[A-Za-z0-9/._+-]+\.sh$/.test(script)) throw new RenderRefusal('hooks.leaseEvents.script', 'is not the path of a script');
    // Asynchronous: Kea does not wait for the script, which only reports.
    libraries.push({ library: hookPath(library, 'hooks.leaseEvents.library'), parameters: { name: script, sync: false } });
  }
  return libraries.length ? { 'hooks-libraries': libraries } : {};
}

export function renderKea(input: KeaInput): string {
  const { global } = input;
  const taken = new Set<number>();
  const subnets = input.subnets.filter((s) => s.enabled && s.subnet_type === 'address');
  const globalOptions = [
    ...(global.dns_servers.length ? [option('domain-name-servers', keaIpv4List(global.dns_servers, 'dns_servers'))] : []),
    ...(global.domain_name ? [option('domain-name', keaName(global.domain_name, 'domain_name'))] : []),
    ...(global.domain_search.length ? [option('domain-search', global.domain_search.map((d, i) => keaName(d, `domain_search.${i}`)).join(', '))] : []),
    ...(global.ntp_servers.length ? [option('ntp-servers', keaIpv4List(global.ntp_servers, 'ntp_servers'))] : []),
    ...(global.wins_servers.length ? [option('netbios-name-servers', keaIpv4List(global.wins_servers, 'wins_servers'))] : []),
  ];
  const subnet4 = subnets.map((subnet) => {
    const field = `subnets.${subnet.id}`;
    const reservations = input.reservations
      .filter((r) => (r.subnet_id ? r.subnet_id === subnet.id : inSubnet(r.ip_address, subnet.network)))
      .map((r, index) => ({
        ...(r.mac_address ? { 'hw-address': keaMac(r.mac_address, `reservations.${index}.mac_address`).toLowerCase() } : {}),
        ...(!r.mac_address && r.client_id ? { 'client-id': keaClientId(r.client_id, `reservations.${index}.client_id`) } : {}),
        'ip-address': keaIpv4(r.ip_address, `reservations.${index}.ip_address`),
        ...(r.hostname ? { hostname: keaName(r.hostname, `reservations.${index}.hostname`) } : {}),
      }));
    const options = [
      option('routers', keaIpv4(subnet.gateway, `${field}.gateway`)),
      ...(subnet.dns_servers?.length ? [option('domain-name-servers', keaIpv4List(subnet.dns_servers, `${field}.dns_servers`))] : []),
      ...(subnet.domain_name ? [option('domain-name', keaName(subnet.domain_name, `${field}.domain_name`))] : []),
      ...(subnet.ntp_servers?.length ? [option('ntp-servers', keaIpv4List(subnet.ntp_servers, `${field}.ntp_servers`))] : []),
      ...subnet.options.map((o, index) => ({ code: o.code, 'csv-format': false, data: keaHex(optionHex(o.value_type, o.value), `${field}.options.${index}.value`) })),
    ];
    return {
      id: keaSubnetId(subnet.id, taken),
      subnet: networkOf(keaCidr(subnet.network, `${field}.network`)),
      pools: [{ pool: `${keaIpv4(subnet.pool_start, `${field}.pool_start`)} - ${keaIpv4(subnet.pool_end, `${field}.pool_end`)}` }],
      ...(subnet.lease_time ? { 'valid-lifetime': subnet.lease_time } : {}),
      ...(subnet.max_lease_time ? { 'max-valid-lifetime': subnet.max_lease_time } : {}),
      ...(subnet.renewal_time ? { 'renew-timer': subnet.renewal_time } : {}),
      ...(subnet.rebinding_time ? { 'rebind-timer': subnet.rebinding_time } : {}),
      ...(subnet.trusted_relays.length ? { relay: { 'ip-addresses': subnet.trusted_relays.map((r, i) => keaIpv4(r, `${field}.trusted_relays.${i}`)) } } : {}),
      'option-data': options,
      reservations,
    };
  });
  const config = {
    Dhcp4: {
      'interfaces-config': { interfaces: global.interfaces.map((name, index) => keaInterface(name, `interfaces.${index}`)), 'dhcp-socket-type': 'raw' },
      'control-socket': { 'socket-type': 'unix', 'socket-name': input.paths.controlSocket },
      'lease-database': { type: 'memfile', persist: true, name: input.paths.leaseFile, 'lfc-interval': 3600 },
      'valid-lifetime': global.default_lease_time,
      'max-valid-lifetime': Math.max(global.max_lease_time, global.default_lease_time),
      authoritative: global.authoritative,
      ...(global.next_server ? { 'next-server': keaIpv4(global.next_server, 'next_server') } : {}),
      ...(global.boot_filename ? { 'boot-file-name': keaText(global.boot_filename, 'boot_filename') } : {}),
      'option-data': globalOptions,
      ...(input.ddns.enabled
        ? {
            'dhcp-ddns': { 'enable-updates': true, 'server-ip': DDNS_LISTEN.address, 'server-port': DDNS_LISTEN.port },
            'ddns-send-updates': true,
            'ddns-qualifying-suffix': input.ddns.forward_zone ? keaName(input.ddns.forward_zone, 'ddns.forward_zone') : '',
            'ddns-override-client-update': true,
          }
        : {}),
      subnet4,
      ...hookLibraries(input),
      ...(highAvailability(input) ? { 'multi-threading': { 'enable-multi-threading': true } } : {}),
      loggers: [{ name: 'kea-dhcp4', output_options: [{ output: 'stdout' }], severity: SEVERITY[global.log_level] ?? 'INFO' }],
    },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
