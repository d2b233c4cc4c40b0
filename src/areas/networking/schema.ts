import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString, NullableInteger } from '../common/schemas.js';

/** An interface name as Linux accepts it (15 characters at most), never starting with `-` (it reaches `ip` argument vectors). */
export const INTERFACE_NAME = '^[A-Za-z0-9_.:][A-Za-z0-9_.:-]{0,14}$';
export const NameParams = Type.Object({ name: Type.String({ pattern: INTERFACE_NAME }) });

export const InterfaceSummary = Type.Object({
  name: Type.String(),
  ipv4: NullableString(),
  ipv6: NullableString(),
  status: StringEnum(['up', 'down']),
  mac: NullableString(),
  role: NullableString(),
});

export const Counters = {
  bytes_in: Type.Integer(),
  bytes_out: Type.Integer(),
  packets_in: Type.Integer(),
  packets_out: Type.Integer(),
  errors_in: Type.Integer(),
  errors_out: Type.Integer(),
};

export const InterfaceDetail = Type.Object({
  name: Type.String(),
  mac: NullableString(),
  ipv4: NullableString(),
  ipv4_netmask: Type.Union([Type.String(), Type.Null()], { description: 'hex form, e.g. 0xffffff00' }),
  ipv4_prefix: NullableInteger(),
  ipv6: NullableString(),
  status: StringEnum(['up', 'down']),
  mtu: Type.Integer(),
  media: NullableString(),
  description: NullableString(),
  is_vlan: Type.Boolean(),
  vlan_id: NullableInteger(),
  vlan_parent: NullableString(),
  ...Counters,
  gateway: NullableString(),
  ipv4_mode: Type.Union([StringEnum(['dhcp', 'static', 'none']), Type.Null()]),
  role: NullableString(),
});

export const InterfaceConfigBody = Type.Object({
  ipv4_mode: Type.Optional(StringEnum(['dhcp', 'static', 'none'])),
  ipv4_address: Type.Optional(NullableString({ description: 'CIDR; required when static' })),
  gateway: Type.Optional(NullableString()),
  ipv6_address: Type.Optional(NullableString()),
  mtu: Type.Optional(Type.Integer({ minimum: 68, maximum: 9000 })),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(NullableString({ maxLength: 255 })),
});

/** The one way a request says it means to cut the address it reached (docs/networking.md). */
export const InterfaceConfigQuery = Type.Object({
  confirm_management_cut: Type.Optional(Type.Boolean({ default: false, description: 'apply a change that removes or downs the address this request reached' })),
}, { additionalProperties: false });

export const InterfaceConfigResult = Type.Object({ message: Type.String(), applied: Type.Boolean(), simulated: Type.Boolean() });

export const InterfaceStats = Type.Object({ name: Type.String(), ...Counters });

export const RoleBody = Type.Object({ role: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,31}$', description: 'wan, lan, dmz, … (stored as given)' }) });
export const RoleView = Type.Object({ name: Type.String(), role: NullableString() });

export const Vlan = Type.Object({
  vlan_id: Type.Integer({ minimum: 1, maximum: 4094 }),
  parent: Type.String({ pattern: INTERFACE_NAME }),
  ipv4_mode: StringEnum(['dhcp', 'static', 'none'], { default: 'none' }),
  ipv4_address: Type.Optional(NullableString()),
  ipv6_address: Type.Optional(NullableString()),
  mtu: Type.Integer({ minimum: 68, maximum: 9000, default: 1500 }),
  enabled: Type.Boolean({ default: true }),
  description: Type.Optional(NullableString({ maxLength: 255 })),
});

export const StaticRoute = Type.Object({
  destination: Type.String({ description: 'default, an IP address or IP/prefix' }),
  gateway: Type.String({ description: 'IP address of the next hop' }),
  interface: Type.Optional(Type.Union([Type.String({ pattern: INTERFACE_NAME }), Type.Null()])),
  metric: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  enabled: Type.Boolean({ default: true }),
  description: Type.Optional(NullableString({ maxLength: 255 })),
  fib: Type.Integer({ minimum: 0, maximum: 255, default: 0, description: 'routing table number' }),
});

export const SystemRouteView = Type.Object({ destination: Type.String(), gateway: NullableString(), flags: Type.String(), interface: NullableString(), metric: NullableInteger() });

export const DdnsRecord = Type.Object({
  provider_id: Type.String({ description: 'id of an ACME DNS provider (cloudflare or route53 can push A/AAAA)' }),
  hostname: Type.String({ minLength: 1, maxLength: 253 }),
  record_type: StringEnum(['a', 'aaaa', 'both'], { default: 'a' }),
  source: StringEnum(['auto-public', 'interface', 'explicit'], { default: 'auto-public' }),
  interface: Type.Optional(Type.Union([Type.String({ pattern: INTERFACE_NAME }), Type.Null()])),
  explicit_ip: Type.Optional(NullableString()),
  ttl: Type.Integer({ minimum: 60, maximum: 86400, default: 60 }),
  enabled: Type.Boolean({ default: true }),
});

export const DdnsStatusFields = {
  provider_name: Type.String(),
  last_ip: NullableString(),
  last_ipv6: NullableString(),
  last_updated: NullableString(),
  last_status: Type.Union([StringEnum(['updated', 'unchanged', 'error']), Type.Null()]),
  last_error: NullableString(),
};

/** How often dynamic DNS records are polled unless /ddns/config says otherwise. */
export const DDNS_POLL_DEFAULT_SECS = 300;
export const DdnsConfig = Type.Object({
  poll_interval_secs: Type.Integer({ minimum: 60, maximum: 86400, default: DDNS_POLL_DEFAULT_SECS }),
  ip_echo_url_v4: Type.String({ default: 'https://api.ipify.org', maxLength: 2048 }),
  ip_echo_url_v6: Type.String({ default: 'https://api6.ipify.org', maxLength: 2048 }),
  allow_private_echo: Type.Array(Type.String(), { default: [], maxItems: 16, description: 'admin allow-list of private IPs/CIDRs the echo service may live on' }),
});

export const DdnsUpdateResult = Type.Object({ ok: Type.Boolean(), message: Type.String() });
