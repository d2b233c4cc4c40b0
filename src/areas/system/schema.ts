import { Type } from 'typebox';
import { StringEnum } from '../../http/schema-helpers.js';
import { NullableString } from '../common/schemas.js';

export const General = Type.Object({
  hostname: Type.String({ default: '', maxLength: 63 }),
  domain: Type.String({ default: '', maxLength: 253 }),
  timezone: Type.String({ default: 'UTC', minLength: 1, maxLength: 64 }),
});

export const Banner = Type.Object({
  login_banner: Type.String({ default: '', maxLength: 8192 }),
  motd: Type.String({ default: '', maxLength: 8192 }),
});

export const Ssh = Type.Object({
  enabled: Type.Boolean({ default: true }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 22 }),
  password_auth: Type.Boolean({ default: false }),
  permit_root_login: Type.Boolean({ default: false }),
});

export const Console = Type.Object({
  kind: StringEnum(['video', 'serial', 'dual'], { default: 'video' }),
  baud: Type.Integer({ default: 115200, enum: [9600, 19200, 38400, 57600, 115200] }),
});

export const ApplyReport = Type.Object({
  ok: Type.Boolean(),
  requires_reboot: Type.Boolean(),
  requires_service_restart: NullableString(),
  warning: NullableString(),
  files: Type.Array(Type.String(), { description: 'rendered files in the data directory' }),
});

export const SystemInfo = Type.Object({
  hostname: Type.String(),
  domain: Type.String(),
  os_version: Type.String(),
  kernel: Type.String(),
  arch: Type.String(),
  uptime_secs: Type.Integer(),
  load_avg: Type.Array(Type.Number()),
  cpu_model: Type.String(),
  cpu_count: Type.Integer(),
  cpu_usage_pct: Type.Number(),
  mem_total_bytes: Type.Integer(),
  mem_used_bytes: Type.Integer(),
  disk_total_bytes: Type.Integer(),
  disk_used_bytes: Type.Integer(),
  temperatures_c: Type.Array(Type.Object({ core: Type.Integer(), celsius: Type.Number() })),
  platform: Type.String(),
  simulated: Type.Boolean(),
});
