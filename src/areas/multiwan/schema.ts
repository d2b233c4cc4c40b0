import { Type } from 'typebox';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';
import { PortInput } from '../../model/port-input.js';
import { INTERFACE_NAME_PATTERN } from '../../render/grammar.js';

const NullableString = (max: number) => Type.Union([Type.String({ maxLength: max }), Type.Null()], { default: null });
const NullableInt = (min: number, max: number) => Type.Union([Type.Integer({ minimum: min, maximum: max }), Type.Null()], { default: null });
const IfName = Type.String({ minLength: 1, maxLength: 32, pattern: INTERFACE_NAME_PATTERN, description: 'an interface name (not starting with -)' });
/** Fields compiled into pf anchors: one token each (docs/multiwan.md); the validate hooks check addresses fully. */
const AddressToken = (options: Record<string, unknown>) => Type.String({ maxLength: 64, pattern: '^(any|[0-9A-Fa-f.:/]+)$', ...options });
const PortToken = Type.String({ maxLength: 11, pattern: '^[0-9]{1,5}(:[0-9]{1,5})?$', description: 'a port or a range a:b' });

export const DEFAULT_INSTANCE_ID = '61696677-0000-0000-0000-000000000000';

export const Instance = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  fib_number: Type.Integer({ minimum: 0, maximum: 65535 }),
  description: NullableString(256),
  mgmt_reachable: Type.Boolean({ default: false }),
  status: StringEnum(['active', 'idle', 'disabled'], { default: 'idle' }),
});

export const InstanceMember = Type.Object({ instance_id: Uuid(), interface: IfName });
export const MemberBody = Type.Object({ interface: IfName }, { additionalProperties: false });

export const MonitorKinds = ['icmp', 'tcp', 'http', 'dns'] as const;
export const Gateway = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  instance_id: Uuid(),
  interface: IfName,
  next_hop: Type.String({ minLength: 2, maxLength: 64, pattern: '^[0-9A-Fa-f.:]+$', description: 'gateway IP' }),
  ip_version: StringEnum(['v4', 'v6'], { default: 'v4' }),
  monitor_kind: StringEnum(MonitorKinds, { default: 'icmp' }),
  monitor_target: NullableString(255),
  monitor_port: NullableInt(1, 65535),
  monitor_expect: NullableString(255),
  interval_ms: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 500 }),
  timeout_ms: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  loss_pct_down: Type.Number({ minimum: 0, maximum: 100, default: 20 }),
  loss_pct_up: Type.Number({ minimum: 0, maximum: 100, default: 5 }),
  latency_ms_down: NullableInt(1, 60_000),
  latency_ms_up: NullableInt(1, 60_000),
  consec_fail_down: Type.Integer({ minimum: 1, maximum: 1000, default: 3 }),
  consec_ok_up: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  weight: Type.Integer({ minimum: 1, maximum: 255, default: 1 }),
  dampening_secs: Type.Integer({ minimum: 0, maximum: 86400, default: 10 }),
  dscp_tag: NullableInt(0, 63),
  enabled: Type.Boolean({ default: true }),
});

export const GatewayHealth = {
  state: StringEnum(['up', 'warning', 'down', 'unknown']),
  last_rtt_ms: Type.Union([Type.Number(), Type.Null()]),
  last_jitter_ms: Type.Union([Type.Number(), Type.Null()]),
  last_loss_pct: Type.Union([Type.Number(), Type.Null()]),
  last_mos: Type.Union([Type.Number(), Type.Null()]),
  last_probe_ts: Type.Union([Type.String(), Type.Null()]),
};

export const GroupPolicies = ['failover', 'weighted_lb', 'adaptive', 'load_balance'] as const;
export const Group = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  policy: StringEnum(GroupPolicies),
  preempt: Type.Boolean({ default: true }),
  sticky: StringEnum(['none', 'src', 'five_tuple'], { default: 'none' }),
  hysteresis_ms: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 2000 }),
  kill_states_on_failover: Type.Boolean({ default: true }),
});
const groupEditable = {
  name: Type.String({ minLength: 1, maxLength: 64 }),
  policy: Type.String({ description: 'failover, weighted_lb (weighted), adaptive, load_balance (load-balance, lb)' }),
  preempt: Type.Boolean(),
  sticky: Type.String({ description: 'none, src, five_tuple (five-tuple, 5tuple)' }),
  hysteresis_ms: Type.Integer({ minimum: 0, maximum: 3_600_000 }),
  kill_states_on_failover: Type.Boolean(),
};
export const GroupCreate = Type.Object(groupEditable, { required: ['name', 'policy'], additionalProperties: false });
export const GroupUpdate = Type.Object({ ...groupEditable, id: Type.String(), created_at: Type.String(), updated_at: Type.String() }, { required: [], additionalProperties: false });

export const GroupMember = Type.Object({
  group_id: Uuid(),
  gateway_id: Uuid(),
  tier: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  weight: Type.Integer({ minimum: 1, maximum: 255, default: 1 }),
});
export const GroupMemberBody = Type.Object({
  gateway_id: Uuid(),
  tier: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  weight: Type.Integer({ minimum: 1, maximum: 255, default: 1 }),
}, { required: ['gateway_id'], additionalProperties: false });
export const GroupMemberRecord = Type.Object({ group_id: Type.String(), gateway_id: Type.String(), tier: Type.Integer(), weight: Type.Integer() });

export const ActionKinds = ['set_instance', 'set_gateway', 'set_group'] as const;
export const Policy = Type.Object({
  priority: Type.Integer({ minimum: 1, maximum: 65535 }),
  name: Type.String({ minLength: 1, maxLength: 64 }),
  status: StringEnum(['active', 'disabled'], { default: 'active' }),
  ip_version: StringEnum(['v4', 'v6', 'both'], { default: 'both' }),
  iface_in: Type.Union([IfName, Type.Null()], { default: null }),
  src_addr: AddressToken({ default: 'any' }),
  dst_addr: AddressToken({ default: 'any' }),
  src_port: Type.Union([PortToken, Type.Null()], { default: null }),
  dst_port: Type.Union([PortToken, Type.Null()], { default: null }),
  protocol: StringEnum(['any', 'tcp', 'udp', 'icmp', 'icmp6', 'gre', 'esp', 'ah', 'sctp'], { default: 'any' }),
  dscp_in: NullableInt(0, 63),
  geoip_country: NullableString(2),
  schedule_id: NullableString(64),
  action_kind: StringEnum(ActionKinds),
  target_id: Uuid(),
  sticky: StringEnum(['none', 'src', 'five_tuple'], { default: 'none' }),
  fallback_target_id: Type.Union([Uuid(), Type.Null()], { default: null }),
  description: NullableString(512),
});

export const Leak = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  src_instance_id: Uuid(),
  dst_instance_id: Uuid(),
  prefix: AddressToken({ minLength: 1, description: 'CIDR or any' }),
  protocol: StringEnum(['any', 'tcp', 'udp', 'icmp', 'icmp6'], { default: 'any' }),
  ports: Type.Union([PortToken, Type.Null()], { default: null }),
  direction: StringEnum(['bidirectional', 'one_way'], { default: 'bidirectional' }),
  enabled: Type.Boolean({ default: true }),
});

export const ProbeNowBody = Type.Object({
  success: Type.Boolean({ description: 'inject a synthetic sample; omit to run a real probe through the platform' }),
  rtt_ms: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
  error: Type.Union([Type.String({ maxLength: 512 }), Type.Null()]),
}, { required: [], additionalProperties: false });

export const GatewayEvent = Type.Object({
  id: Type.Integer(),
  gateway_id: Type.String(),
  ts: Type.String(),
  from_state: Type.Union([Type.String(), Type.Null()]),
  to_state: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  probe_snapshot_json: Type.Union([Type.String(), Type.Null()]),
});

export const SlaSample = Type.Object({
  gateway_id: Type.String(),
  bucket_ts: Type.String(),
  samples: Type.Integer(),
  rtt_avg: Type.Union([Type.Number(), Type.Null()]),
  rtt_p95: Type.Union([Type.Number(), Type.Null()]),
  rtt_p99: Type.Union([Type.Number(), Type.Null()]),
  jitter_avg: Type.Union([Type.Number(), Type.Null()]),
  loss_pct: Type.Number(),
  mos_avg: Type.Union([Type.Number(), Type.Null()]),
  up_seconds: Type.Integer(),
});

export const FlowSummary = Type.Object({
  id: Type.Integer(),
  protocol: Type.String(),
  src: Type.String(),
  dst: Type.String(),
  iface: Type.Union([Type.String(), Type.Null()]),
  rtable: Type.Union([Type.Integer(), Type.Null()]),
  bytes: Type.Integer(),
  age_secs: Type.Integer(),
});

export const PreviewBody = Type.Object({
  policies: Type.Array(Type.Object({
    ...Policy.properties,
    // Proposed policies take the ports a POST /policies takes (normalised by preview).
    src_port: PortInput({ default: null }),
    dst_port: PortInput({ default: null }),
    id: Type.Optional(Type.String()),
  }, { required: ['priority', 'name', 'action_kind', 'target_id'], additionalProperties: true }), { maxItems: 10000 }),
}, { additionalProperties: false });

export const BlastRadius = Type.Object({
  new_rules: Type.Array(Type.String()),
  removed_rules: Type.Array(Type.String()),
  affected_flows: Type.Array(Type.Object({
    src: Type.String(), dst: Type.String(), protocol: Type.String(), current_iface: Type.Union([Type.String(), Type.Null()]),
    future_iface: Type.Union([Type.String(), Type.Null()]), bytes: Type.Integer(),
  })),
  would_strand_mgmt: Type.Boolean(),
  validation: Type.Array(Type.Object({ severity: StringEnum(['info', 'warning', 'error']), message: Type.String() })),
  apply_commands: Type.Array(Type.Object({ command: Type.String(), input: Type.String() }), {
    description: 'what POST /multiwan/apply would run with these policies stored: each command and the text it is fed',
  }),
});

export const EnableFibsBody = Type.Object({
  reboot: Type.Boolean({ default: false }),
  fibs: Type.Integer({ minimum: 2, maximum: 65536, default: 16, description: 'a power of two' }),
}, { additionalProperties: false });
