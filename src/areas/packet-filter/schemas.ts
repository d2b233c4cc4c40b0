import { Type } from 'typebox';
import { StringEnum } from '../../http/schema-helpers.js';
import { PortInput, PortNumber, PortRangeObject } from '../common/port-input.js';

export const Nullable = <T extends object>(schema: T) => Type.Union([schema as never, Type.Null()]);
export const Port = PortNumber;
/** Stored and answered: `{start, end}` or null. */
export const NullablePortRange = Nullable(PortRangeObject());
/** Requested: any form of common/port-input.ts, normalised by parsePortInput. */
export const OptionalPortInput = () => Type.Optional(PortInput());

export const PROTOCOL_VALUES = ['tcp', 'udp', 'icmp', 'icmp6', 'tcp/udp', 'esp', 'ah', 'gre', 'any'] as const;
export const ProtocolSchema = StringEnum(PROTOCOL_VALUES);
export const StatusSchema = StringEnum(['active', 'disabled']);
export const TRACKING_VALUES = ['none', 'keep_state', 'modulate_state', 'synproxy_state'] as const;

/** An optional request field that may also be null (null clears it on PUT). */
export const OptionalNullable = <T extends object>(schema: T) => Type.Optional(Nullable(schema));
