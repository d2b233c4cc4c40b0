import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';

export const Nullable = <T extends object>(schema: T) => Type.Union([schema as never, Type.Null()]);
export const Port = () => Type.Integer({ minimum: 0, maximum: 65535 });
export const PortRangeSchema = Type.Object({ start: Port(), end: Port() }, { additionalProperties: false });
export const NullablePortRange = Nullable(PortRangeSchema);

export const PROTOCOL_VALUES = ['tcp', 'udp', 'icmp', 'icmp6', 'tcp/udp', 'esp', 'ah', 'gre', 'any'] as const;
export const ProtocolSchema = StringEnum(PROTOCOL_VALUES);
export const StatusSchema = StringEnum(['active', 'disabled']);
export const TRACKING_VALUES = ['none', 'keep_state', 'modulate_state', 'synproxy_state'] as const;

/** An optional request field that may also be null (null clears it on PUT). */
export const OptionalNullable = <T extends object>(schema: T) => Type.Optional(Nullable(schema));
