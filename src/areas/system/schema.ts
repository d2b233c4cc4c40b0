import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString } from '../common/schemas.js';
import { HOST_LABEL_PATTERN, HOST_NAME_PATTERN, TERMINAL_TEXT_PATTERN } from '../../render/grammar.js';

/** IANA zone names: letters, digits, _ + - in /-separated parts (the zone list is checked by the validate hook). */
export const TIMEZONE_PATTERN = '^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$';

export const General = Type.Object({
  hostname: Type.String({ default: '', maxLength: 63, pattern: `${HOST_LABEL_PATTERN}|^$`, description: 'one DNS label, or empty' }),
  domain: Type.String({ default: '', maxLength: 253, pattern: `${HOST_NAME_PATTERN}|^$`, description: 'a DNS name, or empty' }),
  timezone: Type.String({ default: 'UTC', minLength: 1, maxLength: 64, pattern: TIMEZONE_PATTERN }),
});

export const Banner = Type.Object({
  login_banner: Type.String({ default: '', maxLength: 8192, pattern: TERMINAL_TEXT_PATTERN, description: 'text; LF and TAB allowed, no other control character' }),
  motd: Type.String({ default: '', maxLength: 8192, pattern: TERMINAL_TEXT_PATTERN, description: 'text; LF and TAB allowed, no other control character' }),
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
  files: Type.Array(Type.String(), { description: "the files written: the host's own (linux, freebsd) or in the data directory (simulated)" }),
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
