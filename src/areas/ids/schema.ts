import { Type } from 'typebox';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';

const NullableInt = (max: number) => Type.Union([Type.Integer({ minimum: 1, maximum: max }), Type.Null()], { default: null });
const NullableString = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()], { default: null });

/** IdsConfig (wire-format §2.1); values above the engine's limits are refused rather than clamped silently. */
export const IdsConfig = Type.Object({
  mode: StringEnum(['ids', 'ips', 'disabled'], { default: 'disabled' }),
  home_net: Type.Array(Type.String({ maxLength: 64 }), { default: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'], maxItems: 256 }),
  external_net: Type.Array(Type.String({ maxLength: 64 }), { default: ['!$HOME_NET'], maxItems: 256 }),
  interfaces: Type.Array(Type.String({ maxLength: 32 }), { default: [], maxItems: 64, description: 'empty = every non-loopback interface' }),
  alert_retention_days: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  eve_log_enabled: Type.Boolean({ default: false }),
  eve_log_path: NullableString(255),
  syslog_target: NullableString(255),
  worker_count: NullableInt(64),
  flow_table_size: NullableInt(1_000_000),
  stream_depth: NullableInt(4096),
  flow_stream_depth_kb: NullableInt(4096),
  flow_reassembly_budget_mb: NullableInt(4096),
});

export const RuleFormat = StringEnum(['suricata', 'sigma', 'yara']);

export const RulesetStored = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  source_url: NullableString(2048),
  rule_format: RuleFormat,
  enabled: Type.Boolean({ default: true }),
  auto_update: Type.Boolean({ default: true }),
  update_interval_hours: Type.Integer({ minimum: 1, maximum: 8760, default: 24 }),
  last_updated: NullableString(64),
  rule_count: Type.Integer({ minimum: 0, default: 0 }),
  last_error: NullableString(1024),
});

const rulesetEditable = {
  name: Type.String({ minLength: 1, maxLength: 128 }),
  source_url: NullableString(2048),
  rule_format: RuleFormat,
  enabled: Type.Boolean(),
  auto_update: Type.Boolean(),
  update_interval_hours: Type.Integer({ minimum: 1, maximum: 8760 }),
  rules_text: Type.String({ maxLength: 64 * 1024 * 1024, description: 'rules file content to install now instead of downloading source_url' }),
};
export const RulesetCreate = Type.Object(rulesetEditable, { required: ['name', 'rule_format'], additionalProperties: false });
export const RulesetUpdate = Type.Object(
  { ...rulesetEditable, id: Type.String(), last_updated: Type.Any(), rule_count: Type.Any(), last_error: Type.Any(), created_at: Type.String(), updated_at: Type.String() },
  { required: [], additionalProperties: false },
);
export const RulesetRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  source_url: Type.Union([Type.String(), Type.Null()]),
  rule_format: Type.String(),
  enabled: Type.Boolean(),
  auto_update: Type.Boolean(),
  update_interval_hours: Type.Integer(),
  last_updated: Type.Union([Type.String(), Type.Null()]),
  rule_count: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const RuleAction = StringEnum(['alert', 'drop', 'reject', 'pass']);

export const IdsRule = Type.Object({
  id: Type.String(),
  ruleset_id: Type.String(),
  sid: Type.Union([Type.Integer(), Type.Null()]),
  rev: Type.Union([Type.Integer(), Type.Null()]),
  rule_text: Type.String(),
  msg: Type.Union([Type.String(), Type.Null()]),
  classtype: Type.Union([Type.String(), Type.Null()]),
  severity: Type.Integer(),
  enabled: Type.Boolean(),
  action_override: Type.Union([Type.String(), Type.Null()]),
  hit_count: Type.Integer(),
  last_hit: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export const RulesQuery = Type.Object({
  ruleset_id: Type.Optional(Uuid()),
  enabled: Type.Optional(Type.Boolean({ description: 'true: only enabled rules of enabled rulesets; false: only disabled rules' })),
  sid: Type.Optional(Type.Integer({ minimum: 0 })),
  q: Type.Optional(Type.String({ maxLength: 256, description: 'full-text search over SID, message and rule text' })),
  search: Type.Optional(Type.String({ maxLength: 256, description: 'same as q' })),
  limit: Type.Integer({ minimum: 1, maximum: 10000, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
}, { additionalProperties: false });

export const RuleUpdate = Type.Object({
  enabled: Type.Boolean(),
  action_override: Type.Union([RuleAction, Type.Literal(''), Type.Null()], { description: '"" or null clears the override' }),
}, { required: [], additionalProperties: false });

export const Classification = StringEnum(['unreviewed', 'confirmed', 'false_positive', 'investigating']);

export const IdsAlert = Type.Object({
  id: Type.String(),
  timestamp: Type.String(),
  signature_id: Type.Union([Type.Integer(), Type.Null()]),
  signature_msg: Type.String(),
  severity: Type.Integer(),
  src_ip: Type.String(),
  dst_ip: Type.String(),
  src_port: Type.Union([Type.Integer(), Type.Null()]),
  dst_port: Type.Union([Type.Integer(), Type.Null()]),
  protocol: Type.String(),
  action: Type.String(),
  rule_source: Type.String(),
  flow_id: Type.Union([Type.String(), Type.Null()]),
  payload_excerpt: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  acknowledged: Type.Boolean(),
  classification: Type.String(),
  analyst_notes: Type.Union([Type.String(), Type.Null()]),
});

export const AlertsQuery = Type.Object({
  severity: Type.Optional(Type.Integer({ minimum: 1, maximum: 4 })),
  src_ip: Type.Optional(Type.String({ maxLength: 64 })),
  signature_id: Type.Optional(Type.Integer({ minimum: 0 })),
  acknowledged: Type.Optional(Type.Boolean()),
  classification: Type.Optional(StringEnum(['unreviewed', 'confirmed', 'false_positive', 'investigating', 'reviewed'])),
  limit: Type.Integer({ minimum: 1, maximum: 10000, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
}, { additionalProperties: false });

export const ClassifyBody = Type.Object({
  classification: Classification,
  notes: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]),
}, { required: ['classification'], additionalProperties: false });

export const SuppressionStored = Type.Object({
  sid: Type.Integer({ minimum: 1 }),
  suppress_type: StringEnum(['src', 'dst', 'both']),
  ip_cidr: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { default: null, description: 'null: suppress the SID for every address' }),
});

export const IdsStats = Type.Object({
  mode: Type.String(),
  simulated: Type.Boolean(),
  engine: Type.String({ description: 'what runs the detection (e.g. the Suricata version), or what to install' }),
  engine_installed: Type.Boolean(),
  engine_restarts: Type.Integer({ description: 'automatic restarts of the engine after it died' }),
  engine_last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the engine last ended or failed to restart; null while all is well' }),
  severity_counts: Type.Array(Type.Tuple([Type.String(), Type.Integer()])),
  top_signatures: Type.Array(Type.Tuple([Type.String(), Type.Integer()])),
  top_sources: Type.Array(Type.Tuple([Type.String(), Type.Integer()])),
  loaded_rules: Type.Integer(),
  enabled_rulesets: Type.Integer(),
  total_rulesets: Type.Integer(),
  running: Type.Boolean(),
  packets_inspected: Type.Integer(),
  alerts_total: Type.Integer(),
  flow_count: Type.Integer(),
  flow_reassembly_bytes: Type.Integer(),
  uptime_secs: Type.Integer(),
  stats: Type.Object({
    packets_inspected: Type.Integer(), alerts_total: Type.Integer(), drops_total: Type.Integer(), bytes_per_sec: Type.Number(),
    active_flows: Type.Integer(), packets_per_sec: Type.Number(), uptime_secs: Type.Integer(),
  }),
});
