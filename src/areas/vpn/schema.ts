import { Type } from 'typebox';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';
import { IKE_ID_PATTERN } from '../../render/strongswan/swanctl.js';
import { HOST_PORT_PATTERN, INTERFACE_NAME_PATTERN, SINGLE_LINE_TEXT_PATTERN, WIREGUARD_KEY_PATTERN } from '../../render/grammar.js';

export const DEFAULT_IKE_PROPOSALS = 'aes256-sha256-modp2048';
export const DEFAULT_ESP_PROPOSALS = 'aes256gcm16';
export const DEFAULT_AH_PROPOSALS = 'sha256';

const Nullable = <T extends object>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Union([schema as never, Type.Null()], { default: null, ...options });

const Base64Key = Type.String({ minLength: 44, maxLength: 44, description: 'standard base64 of a 32-byte Curve25519 key' });
/** Public keys are stored in clear, so their grammar is part of the schema (sealed secrets are checked when written and rendered). */
const PublicKey = Type.String({ minLength: 44, maxLength: 44, pattern: WIREGUARD_KEY_PATTERN, description: 'standard base64 of a 32-byte Curve25519 key' });

/**
 * Grammars of the fields that reach a WireGuard file (docs/vpn.md). Character classes here; the full grammar
 * (addresses, host names) in the collections' validate hooks; the renderer checks both again.
 */
const TunnelName = Type.String({ minLength: 1, maxLength: 64, pattern: SINGLE_LINE_TEXT_PATTERN, description: 'free text, one line' });
const AddressText = Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9A-Fa-f.:/]+$', description: "an IP address with prefix, e.g. 10.8.0.1/24" });
const DnsText = Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9.:, -]*$', description: 'comma-separated IP addresses or host names' });
const InterfaceText = Type.String({ maxLength: 32, pattern: `${INTERFACE_NAME_PATTERN}|^any$` });
const CidrListText = Type.String({ maxLength: 4096, pattern: '^[0-9A-Fa-f.:/, ]*$', description: 'comma-separated CIDRs' });
const HostText = Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9.:-]*$', description: 'a host name or an IP address' });
const PeerName = Type.String({ maxLength: 128, pattern: SINGLE_LINE_TEXT_PATTERN, description: 'free text, one line (never written into a configuration file)' });
const EndpointText = Type.String({ maxLength: 261, pattern: HOST_PORT_PATTERN, description: 'host:port or [IPv6]:port' });

/** Stored fields of a WireGuard tunnel (wire-format §1.1); `private_key` is write-only and sealed. */
export const WgTunnelStored = Type.Object({
  name: TunnelName,
  interface: Type.String({ maxLength: 15, pattern: '^[a-z][a-z0-9]{0,9}[0-9]{1,4}$', description: 'assigned on create: lowest free wg<N> (the prefix is a startup option)' }),
  private_key: Base64Key,
  public_key: PublicKey,
  listen_port: Type.Integer({ minimum: 1, maximum: 65535 }),
  address: AddressText,
  dns: Nullable(DnsText, { description: 'DNS servers written into client configurations' }),
  mtu: Nullable(Type.Integer({ minimum: 576, maximum: 9420 })),
  listen_interface: Nullable(InterfaceText, { description: 'physical interface the UDP pass rule binds to; null = any' }),
  split_routes: Nullable(CidrListText, { description: 'comma-separated CIDRs for split-tunnel client AllowedIPs' }),
  endpoint_host: Nullable(HostText, { description: 'host name or address clients dial; default: the tunnel address' }),
  status: StringEnum(['up', 'down', 'error'], { default: 'down' }),
}, { required: ['name', 'interface', 'public_key', 'listen_port', 'address'] });

const tunnelEditable = {
  name: TunnelName,
  listen_port: Type.Integer({ minimum: 1, maximum: 65535 }),
  address: Type.String({ minLength: 1, maxLength: 64, pattern: '^\\s*[0-9A-Fa-f.:/]+\\s*$' }),
  dns: Nullable(DnsText),
  mtu: Nullable(Type.Integer({ minimum: 576, maximum: 9420 })),
  listen_interface: Nullable(Type.String({ maxLength: 32, pattern: '^\\s*([A-Za-z0-9_.:-]{1,32})?\\s*$' })),
  split_routes: Nullable(CidrListText),
  endpoint_host: Nullable(HostText),
  private_key: Type.String({ description: 'optional; generated when absent. Write-only: never returned' }),
};

export const WgTunnelCreate = Type.Object(
  { ...tunnelEditable, id: Type.Optional(Type.String()), created_at: Type.Optional(Type.String()), updated_at: Type.Optional(Type.String()) },
  { required: ['name', 'listen_port', 'address'], additionalProperties: false },
);
export const WgTunnelUpdate = Type.Object(
  { ...tunnelEditable, id: Type.String(), interface: Type.String(), public_key: Type.String(), status: Type.String(), created_at: Type.String(), updated_at: Type.String() },
  { required: [], additionalProperties: false },
);

export const WgTunnelRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  interface: Type.String(),
  public_key: Type.String(),
  listen_port: Type.Integer(),
  address: Type.String(),
  dns: Type.Union([Type.String(), Type.Null()]),
  mtu: Type.Union([Type.Integer(), Type.Null()]),
  listen_interface: Type.Union([Type.String(), Type.Null()]),
  split_routes: Type.Union([Type.String(), Type.Null()]),
  endpoint_host: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** Stored fields of a peer (§1.4); the preshared key and a server-generated client private key are sealed. */
export const WgPeerStored = Type.Object({
  tunnel_id: Uuid(),
  name: Type.String({ maxLength: 128, pattern: SINGLE_LINE_TEXT_PATTERN, default: '' }),
  public_key: PublicKey,
  preshared_key: Base64Key,
  client_private_key: Base64Key,
  endpoint: Nullable(EndpointText),
  allowed_ips: Type.Array(Type.String({ maxLength: 64, pattern: '^[0-9A-Fa-f.:/]+$' }), { minItems: 1 }),
  persistent_keepalive: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
}, { required: ['tunnel_id', 'public_key', 'allowed_ips'] });

const NullableText = (text: ReturnType<typeof Type.String>) => Type.Union([text, Type.Null()]);
/** The request may pad the endpoint with spaces (trimmed before storing); anything else is the host:port grammar. */
const EndpointInput = Type.String({ maxLength: 261, pattern: '^\\s*((\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5})?\\s*$' });

export const WgPeerCreate = Type.Object({
  allowed_ips: Type.String({ description: 'comma-separated CIDRs; "" or "auto" picks the next free address' }),
  auto_generate_key: Type.Boolean({ default: false, description: 'generate the client key pair on the appliance' }),
  public_key: Type.String(),
  name: NullableText(PeerName),
  endpoint: NullableText(EndpointInput),
  keepalive: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
  preshared_key: Type.String({ description: 'base64 key, or "generate". Write-only: never returned' }),
}, { required: ['allowed_ips'], additionalProperties: false });

export const WgPeerUpdate = Type.Object({
  name: NullableText(PeerName),
  endpoint: NullableText(EndpointInput),
  allowed_ips: Type.String(),
  keepalive: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]),
  preshared_key: Type.String({ description: '"" clears, "generate" makes a new one' }),
}, { required: [], additionalProperties: false });

export const WgPeerRecord = Type.Object({
  id: Type.String(),
  tunnel_id: Type.String(),
  name: Type.String(),
  public_key: Type.String(),
  endpoint: Type.Union([Type.String(), Type.Null()]),
  allowed_ips: Type.Array(Type.String()),
  persistent_keepalive: Type.Union([Type.Integer(), Type.Null()]),
  has_preshared_key: Type.Boolean(),
  has_client_private_key: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const WgStatus = Type.Object({
  running: Type.Boolean(),
  interface: Type.String(),
  simulated: Type.Boolean(),
  backend: StringEnum(['kernel', 'wireguard-go', 'simulated'], { description: 'what provides the interface: the kernel module (or FreeBSD if_wg), the supervised wireguard-go, or the simulated platform' }),
  pid: Type.Union([Type.Integer(), Type.Null()], { description: 'the supervised wireguard-go process, while it runs' }),
  restarts: Type.Integer({ description: 'automatic restarts of wireguard-go after it died' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the tunnel is not up as configured (wireguard-go died, a restart failed); null while all is well' }),
  listen_port: Type.Optional(Type.Integer()),
  public_key: Type.Optional(Type.String()),
  peer_count: Type.Optional(Type.Integer()),
  peers: Type.Array(Type.Object({
    public_key: Type.String(),
    endpoint: Type.Union([Type.String(), Type.Null()]),
    allowed_ips: Type.String(),
    latest_handshake_secs_ago: Type.Integer(),
    transfer_rx: Type.Integer(),
    transfer_tx: Type.Integer(),
    persistent_keepalive: Type.Union([Type.Integer(), Type.Null()]),
  })),
});

export const PeerConfigQuery = Type.Object({
  format: StringEnum(['json', 'conf', 'qr'], { default: 'json', description: 'json: both texts; conf: one wg-quick file; qr: PNG QR code of one file' }),
  variant: StringEnum(['full', 'split'], { default: 'full', description: 'for conf and qr: full-tunnel or split-tunnel file' }),
  include_keys: Type.Boolean({
    default: false,
    description: 'true: the file carries the peer\'s private key (when the appliance generated it) and its preshared key, and the caller needs vpn:write (403 otherwise); false: PrivateKey is a placeholder the client fills in and no PresharedKey line is written (an extension: docs/vpn.md)',
  }),
});

export const PeerConfig = Type.Object({ full_tunnel: Type.String(), split_tunnel: Type.String() });

/** Grammars of the IPsec fields that reach swanctl.conf (docs/vpn.md); the renderer checks them again. */
const IkeId = Type.String({ minLength: 1, maxLength: 255, pattern: IKE_ID_PATTERN, description: 'an IKE identity: IP address, host name, email address or distinguished name (CN=…, O=…)' });
const selectorOptions = { maxItems: 32, description: 'networks (CIDR) protected on this side; [] = the SA address itself' };
const TrafficSelectors = Type.Array(Type.String({ maxLength: 64, pattern: '^[0-9A-Fa-f.:/]+$' }), selectorOptions);
const Proposals = (fallback: string, what: string) => Type.String({ minLength: 1, maxLength: 512, pattern: '^[a-z0-9_, -]+$', default: fallback, description: `${what} proposals in strongSwan's names, comma-separated (e.g. ${fallback})` });
const AuthMethod = StringEnum(['psk', 'cert'], { default: 'psk', description: 'psk: pre-shared key; cert: a certificate issued by the local CA, the peer\'s checked against the same CA' });
const StartAction = StringEnum(['none', 'trap', 'start'], { default: 'trap', description: 'none: answer only; trap: negotiate when traffic matches; start: negotiate when loaded' });

/** IPsec SA (§1.7): stored with the request's names; the reference's response names are added on output. */
export const IpsecStored = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  local_addr: Type.String({ minLength: 1 }),
  remote_addr: Type.String({ minLength: 1 }),
  protocol: StringEnum(['esp', 'ah', 'esp_ah']),
  mode: StringEnum(['tunnel', 'transport']),
  spi: Type.Integer({ minimum: 256, maximum: 4294967295 }),
  enc_algo: Type.String({ default: 'aes-256-gcm', description: 'the ESP encryption of the first proposal (derived from esp_proposals)' }),
  auth_algo: Type.String({ default: 'hmac-sha256', description: "the ESP (or AH) integrity of the first proposal; the IKE SA's with a combined-mode ESP cipher (derived)" }),
  status: StringEnum(['up', 'down', 'error'], { default: 'down' }),
  auth_method: AuthMethod,
  psk: Type.String({ description: 'write-only, sealed' }),
  certificate_id: Nullable(Uuid()),
  local_id: Nullable(IkeId),
  remote_id: Nullable(IkeId),
  local_ts: Type.Array(TrafficSelectors.items, { ...selectorOptions, default: [] }),
  remote_ts: Type.Array(TrafficSelectors.items, { ...selectorOptions, default: [] }),
  ike_proposals: Proposals(DEFAULT_IKE_PROPOSALS, 'IKE'),
  esp_proposals: Proposals(DEFAULT_ESP_PROPOSALS, 'ESP'),
  ah_proposals: Proposals(DEFAULT_AH_PROPOSALS, 'AH'),
  start_action: StartAction,
}, { required: ['name', 'local_addr', 'remote_addr', 'protocol', 'mode', 'spi'] });

/** Request fields carry no defaults: a PUT that leaves a field out keeps it (the stored schema fills new SAs). */
const withoutDefault = <T extends object>(schema: T): T => {
  const { default: _default, ...rest } = schema as T & { default?: unknown };
  return rest as T;
};
const ipsecEditable = {
  name: Type.String({ minLength: 1, maxLength: 64 }),
  local_addr: Type.String({ minLength: 1, maxLength: 64, description: 'any, an IP address or a CIDR' }),
  remote_addr: Type.String({ minLength: 1, maxLength: 64, description: 'any, an IP address or a CIDR (a network answers only)' }),
  protocol: Type.String({ description: 'esp, ah or esp_ah (also esp+ah, espah); case-insensitive' }),
  mode: Type.String({ description: 'tunnel or transport' }),
  auth_method: withoutDefault(AuthMethod),
  psk: Type.String({ minLength: 16, maxLength: 256, description: 'pre-shared key, 16 to 256 printable characters. Write-only: never returned' }),
  certificate_id: Type.Union([Uuid(), Type.Null()], { description: 'id of a certificate issued by the local CA (GET /api/v1/ca/certs), for auth_method cert' }),
  local_id: Type.Union([IkeId, Type.Null()]),
  remote_id: Type.Union([IkeId, Type.Null()]),
  local_ts: Type.Union([TrafficSelectors, Type.String({ maxLength: 2048 })], { description: 'CIDRs as an array or a comma-separated string' }),
  remote_ts: Type.Union([TrafficSelectors, Type.String({ maxLength: 2048 })], { description: 'CIDRs as an array or a comma-separated string' }),
  ike_proposals: withoutDefault(Proposals(DEFAULT_IKE_PROPOSALS, 'IKE')),
  esp_proposals: withoutDefault(Proposals(DEFAULT_ESP_PROPOSALS, 'ESP')),
  ah_proposals: withoutDefault(Proposals(DEFAULT_AH_PROPOSALS, 'AH')),
  start_action: withoutDefault(StartAction),
};
export const IpsecCreate = Type.Object(ipsecEditable, { required: ['name', 'local_addr', 'remote_addr', 'protocol', 'mode'], additionalProperties: false });
export const IpsecUpdate = Type.Object(
  { ...ipsecEditable, id: Type.String(), src_addr: Type.String(), dst_addr: Type.String(), spi: Type.Integer(), spi_in: Type.Integer(), spi_out: Type.Integer(), enc_algo: Type.String(), auth_algo: Type.String(), status: Type.String(), has_psk: Type.Boolean(), created_at: Type.String(), updated_at: Type.String() },
  { required: [], additionalProperties: false },
);
export const IpsecComputed = {
  src_addr: Type.String(),
  dst_addr: Type.String(),
  spi_in: Type.Integer(),
  spi_out: Type.Integer(),
  has_psk: Type.Boolean(),
};

export const IpsecRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  local_addr: Type.String(),
  remote_addr: Type.String(),
  protocol: Type.String(),
  mode: Type.String(),
  spi: Type.Integer(),
  enc_algo: Type.String(),
  auth_algo: Type.String(),
  status: Type.String(),
  auth_method: Type.String(),
  certificate_id: Type.Union([Type.String(), Type.Null()]),
  local_id: Type.Union([Type.String(), Type.Null()]),
  remote_id: Type.Union([Type.String(), Type.Null()]),
  local_ts: Type.Array(Type.String()),
  remote_ts: Type.Array(Type.String()),
  ike_proposals: Type.String(),
  esp_proposals: Type.String(),
  ah_proposals: Type.String(),
  start_action: Type.String(),
  ...IpsecComputed,
  created_at: Type.String(),
  updated_at: Type.String(),
});

const IpsecChild = Type.Object({
  name: Type.String(),
  state: Type.String({ description: "charon's CHILD_SA state (INSTALLED, REKEYING, …)" }),
  mode: Type.String(),
  protocol: Type.String(),
  encap: Type.Boolean({ description: 'ESP carried in UDP (NAT traversal, or forced for kernel-libipsec)' }),
  spi_in: Type.Union([Type.String(), Type.Null()]),
  spi_out: Type.Union([Type.String(), Type.Null()]),
  bytes_in: Type.Integer(),
  bytes_out: Type.Integer(),
  packets_in: Type.Integer(),
  packets_out: Type.Integer(),
  local_ts: Type.Array(Type.String()),
  remote_ts: Type.Array(Type.String()),
});

/** Live state of every configured SA, read from `swanctl --list-sas` (GET /vpn/ipsec/status, an extension). */
export const IpsecStatus = Type.Object({
  running: Type.Boolean({ description: 'charon runs' }),
  simulated: Type.Boolean(),
  backend: Type.String({ description: 'charon, or simulated' }),
  data_path: Type.Union([StringEnum(['kernel', 'libipsec']), Type.Null()], { description: "kernel ESP, or strongSwan's userspace kernel-libipsec (a TUN device) where the kernel has none" }),
  pid: Type.Union([Type.Integer(), Type.Null()]),
  restarts: Type.Integer({ description: 'automatic restarts of charon after it died' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why charon is not running as configured, or why the last load failed' }),
  sas: Type.Array(Type.Object({
    id: Type.String(),
    name: Type.String(),
    status: StringEnum(['up', 'connecting', 'down'], { description: 'up: IKE SA established and a CHILD SA installed' }),
    not_loaded: Type.Union([Type.String(), Type.Null()], { description: 'why the SA is not loaded into charon (no credentials yet); null when it is' }),
    ike_state: Type.Union([Type.String(), Type.Null()], { description: "charon's IKE_SA state; null when none exists" }),
    remote_host: Type.Union([Type.String(), Type.Null()]),
    established_secs: Type.Union([Type.Integer(), Type.Null()]),
    child_sas: Type.Array(IpsecChild),
  })),
});
