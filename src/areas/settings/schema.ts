import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString } from '../common/schemas.js';
import { HOST_PATTERN } from '../../net/header-text.js';

/** Loopback, private or otherwise special addresses the administrator lets this destination reach (IPs or CIDRs). */
const ALLOWED_ADDRESSES = {
  maxItems: 64, description: 'special addresses (loopback, private) this destination may use; public ones need no entry',
};
const AllowedAddress = Type.String({ maxLength: 64, pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$' });
const AllowedAddresses = Type.Array(AllowedAddress, { ...ALLOWED_ADDRESSES, default: [] });
/** In a partial body: absent keeps (or, in a test draft, inherits) the stored list. */
const AllowedAddressesPatch = Type.Array(AllowedAddress, ALLOWED_ADDRESSES);

/** The administrator's outbound allow-list (src/net/admin-allow-list.ts): settings:write only. */
export const OutboundAllowList = Type.Object({
  allowed_addresses: Type.Array(AllowedAddress, {
    maxItems: 256, default: [],
    description: 'loopback, private or otherwise special IPs/CIDRs that operator-written destinations (reverse-proxy upstreams, blocklist sources, object storage, gateway probes) may reach',
  }),
});

const Seconds = (description: string) => Type.Integer({ minimum: 1, maximum: 2_592_000, description: `${description}, seconds (1..2592000)` });
/** The state-table timeouts (Linux conntrack sysctls; pf timeouts on FreeBSD). */
export const StateTimeouts = Type.Object({
  tcp_established: Seconds('established TCP connections (nf_conntrack_tcp_timeout_established; pf tcp.established)'),
  udp: Seconds('UDP flows seen one way (nf_conntrack_udp_timeout; pf udp.first/udp.single)'),
  udp_stream: Seconds('UDP flows seen both ways (nf_conntrack_udp_timeout_stream; pf udp.multiple)'),
  icmp: Seconds('ICMP (nf_conntrack_icmp_timeout; pf icmp.first/icmp.error)'),
});
/** Fields not sent are kept; a field never set is left at the kernel's value. */
export const PfTuningBody = Type.Object({
  max_states: Type.Optional(Type.Integer({ minimum: 1000, maximum: 4_000_000, description: 'state-table size (net.netfilter.nf_conntrack_max; pf set limit states)' })),
  ...Type.Partial(StateTimeouts).properties,
}, { additionalProperties: false, minProperties: 1 });
const OptionalSeconds = () => Type.Union([Type.Integer(), Type.Null()]);
const NullableTimeouts = (description: string) => Type.Object({ tcp_established: OptionalSeconds(), udp: OptionalSeconds(), udp_stream: OptionalSeconds(), icmp: OptionalSeconds() }, { description });
export const PfTuningView = Type.Object({
  configured_max_states: Type.Integer(),
  live_max_states: Type.Union([Type.Integer(), Type.Null()]),
  current_states: Type.Integer(),
  min_states: Type.Integer(),
  max_states: Type.Integer(),
  configured_timeouts: NullableTimeouts('as set (null: never set, the kernel default applies)'),
  live_timeouts: NullableTimeouts('as the kernel holds them, read back (null: not readable here)'),
  warning: Type.Union([Type.String(), Type.Null()], { description: 'set when the values are not in force on the host (simulated platform, another host root)' }),
});

export const IdsAlerts = Type.Object({
  max_mb: Type.Integer({ default: 64, description: 'clamped to 8..512' }),
  max_age_secs: Type.Integer({ default: 86400, description: 'clamped to 3600..604800' }),
});

export const Syslog = Type.Object({
  enabled: Type.Boolean({ default: false }),
  host: Type.String({ default: '', maxLength: 255, pattern: HOST_PATTERN, description: 'host name or IP address' }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 514 }),
  transport: StringEnum(['udp', 'tcp'], { default: 'udp' }),
  format: StringEnum(['rfc3164', 'rfc5424'], { default: 'rfc3164' }),
  facility: Type.Integer({ minimum: 0, maximum: 23, default: 16 }),
  hostname_override: Type.String({ default: '', maxLength: 255, pattern: '^[A-Za-z0-9._:-]*$', description: 'HOSTNAME field of each message (letters, digits, . _ : -)' }),
  allowed_addresses: AllowedAddresses,
  pf_enabled: Type.Boolean({ default: false }),
  ids_enabled: Type.Boolean({ default: false }),
  app_enabled: Type.Boolean({ default: false }),
  app_min_level: StringEnum(['error', 'warn', 'info', 'debug'], { default: 'info' }),
  disable_local: Type.Boolean({ default: false }),
});

export const SyslogStatusRow = Type.Object({
  process: Type.String(),
  sent: Type.Integer(),
  dropped: Type.Integer(),
  errors: Type.Integer(),
  connected: Type.Boolean(),
  last_error: NullableString(),
  updated_at: Type.String(),
});

export const OkMessage = Type.Object({ ok: Type.Boolean(), message: Type.String() });

export const LogRotationConfig = Type.Object({
  max_size_mb: Type.Integer({ minimum: 1, maximum: 500, default: 5 }),
  keep: Type.Integer({ minimum: 0, maximum: 50, default: 7 }),
  compression: StringEnum(['none', 'gzip'], { default: 'gzip', description: 'gzip or none (bzip2, xz and zstd are not supported)' }),
});
export const ManagedLog = Type.Object({ service: Type.String(), path: Type.String(), size_bytes: Type.Union([Type.Integer(), Type.Null()]), rotated: Type.Integer(), total_bytes: Type.Integer() });
export const LogRotationView = Type.Object({
  config: LogRotationConfig,
  logs: Type.Array(ManagedLog),
  conf_path: Type.String(),
  limits: Type.Object({ min_size_mb: Type.Integer(), max_size_mb: Type.Integer(), max_keep: Type.Integer() }),
});

export const SmtpView = Type.Object({
  enabled: Type.Boolean(),
  host: Type.String(),
  port: Type.Integer(),
  tls: StringEnum(['none', 'starttls', 'implicit']),
  username: NullableString(),
  has_password: Type.Boolean(),
  from_address: Type.String(),
  recipients: Type.String({ description: 'comma-separated addresses' }),
  enabled_events: Type.Array(Type.String()),
  allowed_addresses: Type.Array(Type.String()),
});

export const SMTP_EVENTS = ['backup_saved', 's3_upload_ok', 's3_upload_failed', 'restore_ok', 'restore_failed', 'pruned', 'cert_renewed_ok', 'cert_renew_failed', 'cert_expiring_soon'] as const;

export const SmtpBody = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  host: Type.Optional(Type.String({ maxLength: 255, pattern: HOST_PATTERN, description: 'host name or IP address' })),
  allowed_addresses: Type.Optional(AllowedAddressesPatch),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  tls: Type.Optional(Type.String({ description: 'none, starttls or implicit (tls and implicittls mean implicit)' })),
  username: Type.Optional(NullableString({ maxLength: 255 })),
  password: Type.Optional(NullableString({ maxLength: 1024, description: 'write-only: absent or null keeps it, "" clears it' })),
  from_address: Type.Optional(Type.String({ maxLength: 255 })),
  recipients: Type.Optional(Type.String({ maxLength: 4096 })),
  enabled_events: Type.Optional(Type.Array(Type.String(), { maxItems: 32 })),
});
