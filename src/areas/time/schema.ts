import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString } from '../common/schemas.js';
import { DaemonReportFields } from '../common/daemon-report-schema.js';

const Listen = (fallback: string) => Type.String({ default: fallback, pattern: '^(\\[[0-9A-Fa-f:]+\\]|[0-9.]+):\\d{1,5}$', description: 'address:port' });

export const TimeConfig = Type.Object({
  enabled: Type.Boolean({ default: false }),
  log_level: StringEnum(['trace', 'debug', 'info', 'warn', 'error'], { default: 'info' }),
  clock_discipline: Type.Boolean({ default: true }),
  clock_step_threshold_ms: Type.Number({ minimum: 0, maximum: 3_600_000, default: 128.0 }),
  clock_panic_threshold_ms: Type.Number({ minimum: 1, maximum: 86_400_000, default: 1000.0 }),
  ntp_enabled: Type.Boolean({ default: true }),
  ntp_listen: Listen('0.0.0.0:123'),
  ntp_interfaces: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,15}$' }), { default: [] }),
  ntp_rate_limit: Type.Number({ exclusiveMinimum: 0, maximum: 65536, default: 16.0 }),
  ntp_rate_burst: Type.Integer({ minimum: 1, maximum: 255, default: 32 }),
  nts_enabled: Type.Boolean({ default: false }),
  nts_ke_listen: Listen('0.0.0.0:4460'),
  nts_certificate: Type.String({ default: '', maxLength: 1024, description: 'path of the NTS-KE certificate' }),
  nts_private_key: Type.String({ default: '', maxLength: 1024, description: 'path of the NTS-KE private key' }),
  ptp_enabled: Type.Boolean({ default: false }),
  ptp_domain: Type.Integer({ minimum: 0, maximum: 255, default: 0 }),
  ptp_interface: Type.String({ default: 'em0', pattern: '^[A-Za-z0-9_.:-]{1,15}$' }),
  ptp_transport: StringEnum(['udp-ipv4', 'udp-ipv6', 'l2'], { default: 'udp-ipv4' }),
  ptp_priority1: Type.Integer({ minimum: 0, maximum: 255, default: 128 }),
  ptp_priority2: Type.Integer({ minimum: 0, maximum: 255, default: 128 }),
  ptp_delay_mechanism: StringEnum(['e2e', 'p2p'], { default: 'e2e' }),
  metrics_enabled: Type.Boolean({ default: true }),
  metrics_listen: Listen('127.0.0.1:9100'),
  management_enabled: Type.Boolean({ default: true }),
  management_listen: Listen('127.0.0.1:9200'),
});

export const TimeSource = Type.Object({
  address: Type.String({ minLength: 1, maxLength: 253, description: 'NTP server name or address' }),
  nts: Type.Boolean({ default: false }),
  min_poll: Type.Integer({ minimum: -6, maximum: 24, default: 4 }),
  max_poll: Type.Integer({ minimum: -6, maximum: 24, default: 10 }),
  enabled: Type.Boolean({ default: true }),
});

export const TimeStatus = Type.Object({
  running: Type.Boolean(),
  ...DaemonReportFields,
  version: Type.String(),
  sources_count: Type.Integer(),
  synchronized: Type.Boolean(),
  reference: NullableString(),
  stratum: Type.Integer(),
  offset_ms: Type.Number(),
  sources: Type.Array(Type.Object({ address: Type.String(), state: Type.String(), stratum: Type.Integer(), offset_ms: Type.Number(), reach: Type.Integer() })),
  last_apply_at: NullableString(),
  last_apply_result: NullableString(),
  simulated: Type.Boolean(),
});

export const TimeActionResult = Type.Object({
  message: Type.String(),
  running: Type.Boolean(),
  config_file: NullableString(),
  check: Type.Object({ checked: Type.Boolean(), ok: Type.Boolean(), checker: NullableString(), output: Type.String() }),
  simulated: Type.Boolean(),
});
