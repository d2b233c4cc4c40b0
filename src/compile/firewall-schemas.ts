/**
 * The stored shape of the packet-filter configuration (wire-format.md §3) as TypeBox schemas: the model
 * validates every stored rule, alias, schedule and NAT rule against them, and firewall-types.ts derives the
 * types the compilers read from them, so each shape is written once.
 */
import { Type, type TSchema } from 'typebox';
import { StringEnum } from '../model/schema-helpers.js';
import { PortInput, PortNumber, PortRangeObject } from '../model/port-input.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** An optional request field that may also be null (null clears it on PUT). */
export const OptionalNullable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));
export const Port = PortNumber;
/** Stored and answered: `{start, end}` or null. */
export const NullablePortRange = Nullable(PortRangeObject());
/** Requested: any form of model/port-input.ts, normalised by parsePortInput. */
export const OptionalPortInput = () => Type.Optional(PortInput());

export const PROTOCOL_VALUES = ['tcp', 'udp', 'icmp', 'icmp6', 'tcp/udp', 'esp', 'ah', 'gre', 'any'] as const;
export const ProtocolSchema = StringEnum(PROTOCOL_VALUES);
export const StatusSchema = StringEnum(['active', 'disabled']);
export const TRACKING_VALUES = ['none', 'keep_state', 'modulate_state', 'synproxy_state'] as const;

export const StateOptionsSchema = Type.Object({
  tracking: StringEnum(TRACKING_VALUES),
  policy: Nullable(StringEnum(['if_bound', 'floating'])),
  adaptive_timeouts: Nullable(Type.Object({ start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })),
  timeout_tcp: Nullable(Type.Integer({ minimum: 1, maximum: 2_592_000 })),
  timeout_udp: Nullable(Type.Integer({ minimum: 1, maximum: 2_592_000 })),
  timeout_icmp: Nullable(Type.Integer({ minimum: 1, maximum: 2_592_000 })),
}, { additionalProperties: false });

const ADDRESS = '`any`, an address, `ip/prefix`, `first-last`, or `<alias>`';

export const RuleMatchSchema = Type.Object({
  src_addr: Type.String({ description: ADDRESS }),
  src_port: NullablePortRange,
  dst_addr: Type.String({ description: ADDRESS }),
  dst_port: NullablePortRange,
}, { additionalProperties: false });

/** A stored rule (wire-format.md §3.2). */
export const RuleSchema = Type.Object({
  priority: Type.Integer({ minimum: 0, maximum: 10000 }),
  action: StringEnum(['pass', 'block', 'blockdrop', 'blockreturn']),
  direction: StringEnum(['in', 'out', 'any']),
  ip_version: StringEnum(['inet', 'inet6', 'both']),
  interface: Nullable(Type.String()),
  protocol: ProtocolSchema,
  rule_match: RuleMatchSchema,
  src_invert: Type.Boolean(),
  dst_invert: Type.Boolean(),
  log: Type.Boolean(),
  quick: Type.Boolean(),
  label: Nullable(Type.String()),
  description: Nullable(Type.String()),
  gateway: Nullable(Type.String()),
  state_options: StateOptionsSchema,
  status: StatusSchema,
  schedule_id: Nullable(Type.String()),
});

export const ALIAS_NAME = /^[A-Za-z0-9_-]{1,31}$/;
export const MAX_ALIAS_ENTRIES = 100_000;

/** A stored alias (wire-format.md §3.4). */
export const AliasSchema = Type.Object({
  name: Type.String({ pattern: ALIAS_NAME.source }),
  alias_type: StringEnum(['host', 'network', 'port', 'url_table', 'plugin']),
  entries: Type.Array(Type.String(), { maxItems: MAX_ALIAS_ENTRIES }),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
});

/** A stored schedule (wire-format.md §3.5). */
export const ScheduleSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  description: Nullable(Type.String()),
  time_ranges: Type.String({ minLength: 1, description: 'comma-joined `HH:MM-HH:MM`; a range whose end is before its start runs past midnight' }),
  days_of_week: Type.String({ minLength: 1, description: 'comma-joined weekday tokens' }),
  enabled: Type.Boolean(),
});

/** A stored NAT rule (wire-format.md §3.6). */
export const NatSchema = Type.Object({
  nat_type: StringEnum(['snat', 'dnat', 'masquerade', 'binat']),
  interface: Type.String(),
  protocol: ProtocolSchema,
  src_addr: Type.String(),
  src_port: NullablePortRange,
  dst_addr: Type.String(),
  dst_port: NullablePortRange,
  redirect: Type.Object({ address: Type.String(), port: NullablePortRange }, { additionalProperties: false }),
  label: Nullable(Type.String()),
  status: StatusSchema,
  static_port: Type.Boolean(),
});
