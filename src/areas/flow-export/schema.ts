import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { HOST_PORT_PATTERN, INTERFACE_NAME_PATTERN } from '../../render/grammar.js';

export const FLOW_EXPORT_KIND = 'settings_flow_export';

/** /settings/flow-export: where the flows of traffic through the box are exported, and how. */
export const FlowExportConfig = Type.Object({
  enabled: Type.Boolean({ default: false }),
  protocol: StringEnum(['netflow9', 'ipfix'], { default: 'ipfix', description: 'NetFlow v9 or IPFIX (NetFlow v10)' }),
  collectors: Type.Array(Type.String({ maxLength: 300, pattern: HOST_PORT_PATTERN }), {
    default: [], maxItems: 4, description: 'host:port of each collector ([v6]:port); every flow goes to all of them',
  }),
  active_timeout_secs: Type.Integer({ minimum: 10, maximum: 86400, default: 60, description: 'a flow still active is exported after this long' }),
  inactive_timeout_secs: Type.Integer({ minimum: 1, maximum: 3600, default: 15, description: 'a flow idle for this long is exported' }),
  sampling: Type.Integer({ minimum: 1, maximum: 65535, default: 1, description: 'one packet in N is counted (1: every packet)' }),
  interfaces: Type.Array(Type.String({ pattern: INTERFACE_NAME_PATTERN }), { default: [], maxItems: 32, description: 'interfaces whose traffic is exported' }),
});

const InterfaceStatus = Type.Object({
  interface: Type.String(), ifindex: Type.Union([Type.Integer(), Type.Null()]), running: Type.Boolean(), pid: Type.Union([Type.Integer(), Type.Null()]),
  restarts: Type.Integer(), last_error: Type.Union([Type.String(), Type.Null()]),
});

export const FlowExportView = Type.Object({
  config: FlowExportConfig,
  status: Type.Object({
    exporter: Type.String({ description: 'softflowd (Debian) on linux; simulated' }),
    running: Type.Boolean(),
    simulated: Type.Boolean(),
    interfaces: Type.Array(InterfaceStatus),
    /** The collectors as the exporter sends to them: each name resolved once through the outbound guard. */
    collectors: Type.Array(Type.String()),
    last_error: Type.Union([Type.String(), Type.Null()]),
  }),
});
