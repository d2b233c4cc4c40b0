import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, conflict } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { ipv4ToNumber, networkOf, numberToIpv4, parseCidr } from '../../net/address.js';
import type { WireguardInterfaceSpec } from '../../platform/wireguard.js';
import { WgPeerStored, WgTunnelStored } from './schema.js';
import { declareIpsecModel, derivedAlgorithms, ipsecFields } from './ipsec-model.js';
import { isCidr, isCommaList, isHostOrAddress, isHostPort, isInterfaceName } from '../../render/grammar.js';
import { generateKeyPair, generatePresharedKey, isWireguardKey, publicKeyOf, renderInterfaceConfig, renderPeerConfig } from './wireguard.js';

const str = (value: unknown) => (typeof value === 'string' ? value : null);
const trimOrNull = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** The host part of an allowed-ips entry (prefix ignored), for duplicate and next-free checks. */
const hostOf = (entry: string) => entry.trim().split('/')[0];

/** Parses a comma-separated allowed-ips list; every element must be an IP or CIDR. */
export function parseAllowedIps(text: string, field = 'body.allowed_ips'): string[] {
  const entries = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) if (!parseCidr(entry)) throw badRequest(`${field}: "${entry}" is not an IP address or CIDR`);
  return entries;
}

/** Items of a stored comma-separated list, spaces around commas ignored. */
const listItems = (value: string) => value.split(',').map((s) => s.trim()).filter(Boolean);

function checkSplitRoutes(value: unknown): void {
  if (typeof value !== 'string') return;
  for (const entry of listItems(value)) {
    if (!isCidr(entry)) throw badRequest(`body.split_routes: "${entry}" is not a CIDR`);
  }
}

/** The tunnel fields that reach client files, held to their grammar (docs/vpn.md). */
function checkTunnel(data: ConfigData): void {
  if (!isCidr(String(data.address))) throw badRequest(`body.address: "${String(data.address)}" is not an IP address with prefix`);
  checkSplitRoutes(data.split_routes);
  if (typeof data.dns === 'string' && data.dns.trim() !== '' && !isCommaList(listItems(data.dns).join(','), isHostOrAddress)) {
    throw badRequest('body.dns must be comma-separated IP addresses or host names');
  }
  if (typeof data.endpoint_host === 'string' && data.endpoint_host !== '' && !isHostOrAddress(data.endpoint_host)) {
    throw badRequest('body.endpoint_host must be a host name or an IP address');
  }
  if (typeof data.listen_interface === 'string' && !isInterfaceName(data.listen_interface)) throw badRequest('body.listen_interface must be an interface name');
}

/** WireGuard tunnels and peers, IPsec SAs: the configuration model and what is derived from it. */
export class VpnService {
  readonly tunnels: CollectionModel;
  readonly peers: CollectionModel;
  readonly ipsec: CollectionModel;

  constructor(private readonly context: AppContext) {
    const { models } = context;
    this.tunnels = models.collection({
      kind: 'wg_tunnel', noun: 'WireGuard tunnel', writeAccess: 'vpn:write',
      schema: WgTunnelStored,
      unique: [{ field: 'name', caseInsensitive: true }, 'listen_port', 'interface'],
      writeOnly: ['private_key'],
      validate: checkTunnel,
    });
    this.peers = models.collection({
      kind: 'wg_peer', noun: 'WireGuard peer', writeAccess: 'vpn:write',
      schema: WgPeerStored,
      parent: { kind: 'wg_tunnel', field: 'tunnel_id' },
      references: [{ field: 'tunnel_id', kind: 'wg_tunnel' }],
      writeOnly: ['preshared_key', 'client_private_key'],
      unique: ['public_key'],
      computed: {
        schema: { has_preshared_key: { type: 'boolean' }, has_client_private_key: { type: 'boolean' } },
        add: (object) => ({
          has_preshared_key: typeof object.data.preshared_key === 'string',
          has_client_private_key: typeof object.data.client_private_key === 'string',
        }),
      },
      validate: (data, { existing }) => this.checkPeerAddresses(data, existing),
    });
    this.ipsec = declareIpsecModel(context);
  }

  // ---- tunnels -------------------------------------------------------------------------------------

  createTunnel(body: ConfigData): ConfigObject {
    const keys = this.keysFor(body.private_key);
    const { private_key: _omit, ...rest } = body;
    return this.tunnels.create({
      ...rest,
      address: String(body.address).trim(),
      split_routes: trimOrNull(body.split_routes),
      listen_interface: trimOrNull(body.listen_interface) === 'any' ? null : trimOrNull(body.listen_interface),
      interface: this.nextInterfaceName(),
      private_key: keys.private_key,
      public_key: keys.public_key,
      status: 'down',
    });
  }

  updateTunnel(id: string, body: ConfigData): ConfigObject {
    const { id: _id, interface: _if, public_key: _pk, status: _st, created_at: _c, updated_at: _u, private_key, ...patch } = body;
    if ('address' in patch) patch.address = String(patch.address).trim();
    if ('split_routes' in patch) patch.split_routes = trimOrNull(patch.split_routes);
    if ('listen_interface' in patch) patch.listen_interface = trimOrNull(patch.listen_interface) === 'any' ? null : trimOrNull(patch.listen_interface);
    if (private_key !== undefined) Object.assign(patch, this.keysFor(private_key));
    return this.tunnels.update(id, patch);
  }

  private keysFor(privateKey: unknown): { private_key: string; public_key: string } {
    if (privateKey === undefined || privateKey === null || privateKey === '') return generateKeyPair();
    if (typeof privateKey !== 'string' || !isWireguardKey(privateKey)) throw badRequest('body.private_key must be a base64 WireGuard key (44 characters)');
    return { private_key: privateKey, public_key: publicKeyOf(privateKey) };
  }

  private nextInterfaceName(): string {
    const used = new Set(this.tunnels.objects().map((o) => o.data.interface));
    const prefix = this.context.config.wireguardPrefix;
    for (let n = 0; ; n++) if (!used.has(`${prefix}${n}`)) return `${prefix}${n}`;
  }

  /** The configuration the interface is brought up with: keys opened from their sealed form. */
  interfaceSpec(tunnel: ConfigObject): WireguardInterfaceSpec {
    const peers = this.peers.objects(tunnel.id).map((peer) => ({
      public_key: String(peer.data.public_key),
      preshared_key: this.peers.secret(peer, 'preshared_key') ?? null,
      allowed_ips: peer.data.allowed_ips as string[],
      endpoint: str(peer.data.endpoint),
      persistent_keepalive: (peer.data.persistent_keepalive as number | null) ?? null,
    }));
    const spec = {
      interface: String(tunnel.data.interface),
      private_key: this.tunnels.secret(tunnel, 'private_key')!,
      public_key: String(tunnel.data.public_key),
      listen_port: Number(tunnel.data.listen_port),
      address: String(tunnel.data.address),
      mtu: (tunnel.data.mtu as number | null) ?? null,
      peers,
    };
    // Beside the database (0700 directory, 0600 file): the file wg reads the keys from, kept for inspection.
    const setconfFile = join(this.context.config.dataDir, 'wireguard', `${spec.interface}.conf`);
    return { ...spec, setconf: renderInterfaceConfig(spec), setconfFile };
  }

  // ---- peers ---------------------------------------------------------------------------------------

  /** First free host of the tunnel's IPv4 subnet (a bare address counts as /24), skipping the tunnel's own. */
  nextFreeAddress(tunnelId: string, ignorePeer?: string): string {
    const tunnel = this.tunnels.find(tunnelId);
    const address = parseCidr(String(tunnel.data.address));
    if (!address || address.family !== 4) throw badRequest('next free address needs an IPv4 tunnel address');
    const prefix = address.prefix ?? 24;
    const used = new Set<string>([address.address]);
    for (const peer of this.peers.objects(tunnelId)) {
      if (peer.id === ignorePeer) continue;
      for (const entry of peer.data.allowed_ips as string[]) used.add(hostOf(entry));
    }
    const size = 2 ** (32 - prefix);
    const base = Math.floor(ipv4ToNumber(address.address) / size) * size;
    // Network and broadcast addresses are skipped for prefixes that have them; at most 65534 hosts are scanned.
    const first = prefix >= 31 ? base : base + 1;
    const last = prefix >= 31 ? base + size - 1 : Math.min(base + size - 2, base + 65534);
    for (let candidate = first; candidate <= last; candidate++) {
      const ip = numberToIpv4(candidate);
      if (!used.has(ip)) return `${ip}/32`;
    }
    throw conflict(`no free address left in ${networkOf(address)}`);
  }

  private checkPeerAddresses(data: ConfigData, existing: ConfigObject | undefined): void {
    const entries = data.allowed_ips as string[];
    for (const entry of entries) if (!isCidr(entry)) throw badRequest(`body.allowed_ips: "${entry}" is not an IP address or CIDR`);
    const mine = new Set(entries.map(hostOf));
    for (const other of this.peers.objects(String(data.tunnel_id))) {
      if (other.id === existing?.id) continue;
      const clash = (other.data.allowed_ips as string[]).map(hostOf).find((host) => mine.has(host));
      if (clash) throw conflict(`address ${clash} is already used by peer ${other.id} of this tunnel`);
    }
    if (data.endpoint !== null && data.endpoint !== undefined && !isHostPort(String(data.endpoint))) {
      throw badRequest('body.endpoint must be host:port');
    }
  }

  createPeer(tunnelId: string, body: ConfigData): ConfigObject {
    this.tunnels.find(tunnelId);
    const allowedText = String(body.allowed_ips).trim();
    const allowed = allowedText === '' || allowedText.toLowerCase() === 'auto' ? [this.nextFreeAddress(tunnelId)] : parseAllowedIps(allowedText);
    if (allowed.length === 0) throw badRequest('body.allowed_ips must name at least one address');
    let publicKey = str(body.public_key)?.trim() ?? '';
    let clientPrivateKey: string | undefined;
    if (body.auto_generate_key === true) {
      const pair = generateKeyPair();
      publicKey = pair.public_key;
      clientPrivateKey = pair.private_key;
    } else if (!publicKey) {
      throw badRequest('body.public_key is required unless auto_generate_key is true');
    }
    if (!isWireguardKey(publicKey)) throw badRequest('body.public_key must be a base64 WireGuard key (44 characters)');
    const data: ConfigData = {
      name: str(body.name) ?? '',
      public_key: publicKey,
      endpoint: trimOrNull(body.endpoint),
      allowed_ips: allowed,
      persistent_keepalive: typeof body.keepalive === 'number' && body.keepalive > 0 ? body.keepalive : null,
    };
    const psk = this.presharedKeyOf(body.preshared_key);
    if (psk) data.preshared_key = psk;
    if (clientPrivateKey) data.client_private_key = clientPrivateKey;
    return this.peers.create(data, tunnelId);
  }

  updatePeer(tunnelId: string, peerId: string, body: ConfigData): ConfigObject {
    const existing = this.peers.find(peerId, tunnelId);
    const patch: ConfigData = {};
    if ('name' in body) patch.name = str(body.name) ?? '';
    if ('endpoint' in body) patch.endpoint = trimOrNull(body.endpoint);
    if ('allowed_ips' in body) {
      patch.allowed_ips = parseAllowedIps(String(body.allowed_ips));
      if ((patch.allowed_ips as string[]).length === 0) throw badRequest('body.allowed_ips must name at least one address');
    }
    if ('keepalive' in body) patch.persistent_keepalive = typeof body.keepalive === 'number' && body.keepalive > 0 ? body.keepalive : null;
    if (body.preshared_key === '') {
      // Clearing a write-only secret: written directly, since an absent field means "keep".
      const { preshared_key: _cleared, ...rest } = existing.data;
      this.context.store.update('wg_peer', peerId, rest);
    } else if (body.preshared_key !== undefined) {
      patch.preshared_key = this.presharedKeyOf(body.preshared_key);
    }
    return this.peers.update(peerId, patch, tunnelId);
  }

  private presharedKeyOf(value: unknown): string | undefined {
    if (value === undefined || value === null || value === '') return undefined;
    if (value === 'generate') return generatePresharedKey();
    if (typeof value !== 'string' || !isWireguardKey(value)) throw badRequest('body.preshared_key must be a base64 WireGuard key or "generate"');
    return value;
  }

  /**
   * Both client files of a peer: all traffic through the tunnel, or only the tunnel's networks. Without
   * `includeKeys` neither the client's private key nor the preshared key is written (a placeholder and a comment
   * stand in for them): the route that asks for them needs vpn:write.
   */
  peerConfig(tunnelId: string, peerId: string, includeKeys: boolean): { full_tunnel: string; split_tunnel: string } {
    const tunnel = this.tunnels.find(tunnelId);
    const peer = this.peers.find(peerId, tunnelId);
    const tunnelAddress = parseCidr(String(tunnel.data.address))!;
    const host = str(tunnel.data.endpoint_host) ?? tunnelAddress.address;
    const endpointHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const presharedKey = this.peers.secret(peer, 'preshared_key') ?? null;
    const base = {
      client_private_key: includeKeys ? this.peers.secret(peer, 'client_private_key') ?? null : null,
      address: (peer.data.allowed_ips as string[])[0] ?? null,
      dns: trimOrNull(tunnel.data.dns) === null ? null : listItems(String(tunnel.data.dns)).join(', '),
      mtu: (tunnel.data.mtu as number | null) ?? null,
      server_public_key: String(tunnel.data.public_key),
      preshared_key: includeKeys ? presharedKey : null,
      preshared_key_withheld: presharedKey !== null && !includeKeys,
      endpoint: `${endpointHost}:${String(tunnel.data.listen_port)}`,
      persistent_keepalive: (peer.data.persistent_keepalive as number | null) ?? null,
    };
    const routes = typeof tunnel.data.split_routes === 'string' ? listItems(tunnel.data.split_routes) : [];
    const split = routes.length > 0 ? routes.join(', ') : networkOf(tunnelAddress);
    return {
      full_tunnel: renderPeerConfig({ ...base, allowed_ips: '0.0.0.0/0, ::/0' }),
      split_tunnel: renderPeerConfig({ ...base, allowed_ips: split }),
    };
  }

  // ---- IPsec ---------------------------------------------------------------------------------------

  createIpsec(body: ConfigData): ConfigObject {
    // A random SPI with bit 0x100 set, so it is never in the reserved range below 256.
    const spi = (randomInt(0, 2 ** 32 - 1) | 0x100) >>> 0;
    const fields = ipsecFields(body);
    return this.ipsec.create({ ...fields, ...derivedAlgorithms(fields), spi });
  }

  updateIpsec(id: string, body: ConfigData): ConfigObject {
    const existing = this.ipsec.find(id);
    const patch = ipsecFields(body);
    return this.ipsec.update(id, { ...patch, ...derivedAlgorithms({ ...existing.data, ...patch }) });
  }
}
