import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString, NullableInteger } from '../common/schemas.js';
import { DaemonReportFields } from '../common/daemon-report-schema.js';

const Seconds = () => Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 31_536_000 }), Type.Null()]));

export const DhcpConfig = Type.Object({
  enabled: Type.Boolean({ default: false }),
  interfaces: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,15}$' }), { default: [], maxItems: 64 }),
  authoritative: Type.Boolean({ default: true }),
  default_lease_time: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 3600 }),
  max_lease_time: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 86400 }),
  dns_servers: Type.Array(Type.String(), { default: ['1.1.1.1', '8.8.8.8'], maxItems: 16 }),
  domain_name: Type.String({ default: 'local', maxLength: 253 }),
  domain_search: Type.Array(Type.String(), { default: [], maxItems: 16 }),
  ntp_servers: Type.Array(Type.String(), { default: [], maxItems: 16 }),
  wins_servers: Type.Array(Type.String(), { default: [], maxItems: 16 }),
  next_server: Type.Optional(NullableString()),
  boot_filename: Type.Optional(NullableString({ maxLength: 255 })),
  log_level: StringEnum(['error', 'warn', 'info', 'debug', 'trace'], { default: 'info' }),
  log_format: StringEnum(['text', 'json'], { default: 'text' }),
  api_port: Type.Integer({ minimum: 1, maximum: 65535, default: 9967 }),
  workers: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  accept_relayed: Type.Boolean({ default: true }),
  relay_rate_limit_burst: Type.Integer({ minimum: 1, default: 200 }),
  relay_rate_limit_pps: Type.Number({ exclusiveMinimum: 0, default: 100.0 }),
});

export const SubnetOption = Type.Object({
  code: Type.Integer({ minimum: 1, maximum: 254 }),
  value_type: StringEnum(['ip', 'ips', 'string', 'u8', 'u16', 'u32', 'hex']),
  value: Type.String({ maxLength: 1024 }),
});

export const Subnet = Type.Object({
  network: Type.String({ description: 'IPv4 CIDR, e.g. 192.168.1.0/24' }),
  pool_start: Type.String(),
  pool_end: Type.String(),
  gateway: Type.String(),
  dns_servers: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
  domain_name: Type.Optional(NullableString({ maxLength: 253 })),
  lease_time: Seconds(),
  max_lease_time: Seconds(),
  renewal_time: Seconds(),
  rebinding_time: Seconds(),
  preferred_time: Seconds(),
  subnet_type: StringEnum(['address', 'prefix-delegation'], { default: 'address' }),
  delegated_length: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 128 }), Type.Null()])),
  enabled: Type.Boolean({ default: true }),
  description: Type.Optional(NullableString({ maxLength: 512 })),
  trusted_relays: Type.Array(Type.String(), { default: [], maxItems: 64 }),
  ntp_servers: Type.Optional(Type.Union([Type.Array(Type.String(), { maxItems: 16 }), Type.Null()])),
  options: Type.Array(SubnetOption, { default: [], maxItems: 64 }),
});

export const Reservation = Type.Object({
  subnet_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  mac_address: Type.String({ pattern: '^$|^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$', description: 'aa:bb:cc:dd:ee:ff; may be empty when client_id identifies the client' }),
  ip_address: Type.String(),
  hostname: Type.Optional(NullableString({ maxLength: 253 })),
  client_id: Type.Optional(NullableString({ maxLength: 255 })),
  description: Type.Optional(NullableString({ maxLength: 512 })),
});

export const Lease = Type.Object({
  ip_address: Type.String(),
  mac_address: Type.String(),
  hostname: NullableString(),
  client_id: NullableString(),
  state: Type.String(),
  lease_time: Type.Integer(),
  starts: Type.String(),
  expires: Type.String(),
  subnet: Type.String(),
});

export const PoolStats = Type.Object({
  subnet: Type.String(),
  total: Type.Integer(),
  allocated: Type.Integer(),
  available: Type.Integer(),
  utilization: Type.Number(),
});

export const DhcpDdns = Type.Object({
  enabled: Type.Boolean({ default: false }),
  forward_zone: Type.String({ default: '', maxLength: 253 }),
  reverse_zone_v4: Type.String({ default: '', maxLength: 253 }),
  reverse_zone_v6: Type.String({ default: '', maxLength: 253 }),
  dns_server: Type.String({ default: '', maxLength: 64 }),
  tsig_key: Type.String({ default: '', maxLength: 253 }),
  tsig_algorithm: StringEnum(['hmac-sha256', 'hmac-sha512', 'hmac-md5'], { default: 'hmac-sha256' }),
  tsig_secret: Type.String({ default: '', maxLength: 512, description: 'write-only; sealed at rest' }),
  ttl: Type.Integer({ minimum: 0, maximum: 604800, default: 300 }),
});

export const DhcpHaConfig = Type.Object({
  mode: StringEnum(['standalone', 'active-active', 'hot-standby'], { default: 'standalone', description: 'Kea HA: active-active is load-balancing' }),
  peer: Type.Optional(NullableString({ description: 'host:port of the partner' })),
  listen: Type.Optional(NullableString({ description: 'host:port this node listens on for HA' })),
  scope_split: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  mclt: Type.Optional(NullableInteger({ minimum: 0 })),
  partner_down_delay: Type.Optional(NullableInteger({ minimum: 0 })),
  node_id: Type.Optional(NullableInteger({ minimum: 0 })),
  peers: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  tls_cert: Type.Optional(NullableString()),
  tls_key: Type.Optional(NullableString()),
  tls_ca: Type.Optional(NullableString()),
});

export const HaStatus = Type.Object({
  mode: Type.String(),
  role: Type.String(),
  state: NullableString({ description: "this server's HA state as Kea reports it (waiting, syncing, hot-standby, load-balancing, partner-down …)" }),
  peer_state: NullableString(),
  healthy: Type.Boolean(),
});

export const DhcpStatus = Type.Object({
  running: Type.Boolean(),
  ...DaemonReportFields,
  version: Type.String(),
  uptime: NullableInteger(),
  total_subnets: Type.Integer(),
  total_reservations: Type.Integer(),
  active_leases: Type.Integer(),
  ha: Type.Union([HaStatus, Type.Null()]),
  pool_stats: Type.Array(PoolStats),
  last_apply_at: NullableString(),
  last_apply_result: NullableString(),
  simulated: Type.Boolean(),
});

export const DhcpActionResult = Type.Object({
  message: Type.String(),
  running: Type.Boolean(),
  config_file: NullableString(),
  check: Type.Object({ checked: Type.Boolean(), ok: Type.Boolean(), checker: NullableString(), output: Type.String() }),
  simulated: Type.Boolean(),
});
