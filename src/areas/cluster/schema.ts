import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { INTERFACE_NAME_PATTERN } from '../../render/grammar.js';
import { ConfigSyncStatus } from './sync-schema.js';

export const CLUSTER_KINDS = { carp: 'cluster_carp', pfsync: 'cluster_pfsync', health: 'cluster_health', local: 'cluster_local' } as const;

/** A VRRP password: VRRPv2 carries at most 8 characters; letters, digits and `._+=-`, not starting with `-` (one keepalived word). */
const PASSWORD_PATTERN = '^[A-Za-z0-9._+=][A-Za-z0-9._+=-]{0,7}$';

/** /cluster/carp: one virtual address (wire-format §10; the password is write-only, unlike the reference). */
export const CarpEntry = Type.Object({
  vhid: Type.Integer({ minimum: 1, maximum: 255, description: 'VRRP virtual router id' }),
  virtual_ip: Type.String({ maxLength: 45 }),
  prefix: Type.Integer({ minimum: 0, maximum: 128 }),
  interface: Type.String({ pattern: INTERFACE_NAME_PATTERN }),
  password: Type.String({ pattern: PASSWORD_PATTERN, description: 'write-only: sealed at rest, never returned' }),
});

/** /cluster/pfsync: connection state sync (conntrackd FTFW on linux). */
export const PfsyncConfig = Type.Object({
  sync_interface: Type.String({ pattern: INTERFACE_NAME_PATTERN }),
  sync_peer: Type.Optional(Type.Union([Type.String({ maxLength: 45 }), Type.Null()])),
  defer: Type.Boolean({ default: false }),
  enabled: Type.Boolean({ default: true }),
  latency_profile: StringEnum(['conservative', 'tight', 'aggressive'], { default: 'conservative' }),
  heartbeat_iface: Type.Optional(Type.Union([Type.String({ pattern: INTERFACE_NAME_PATTERN }), Type.Null()])),
  heartbeat_interval_ms: Type.Optional(Type.Union([Type.Integer({ minimum: 100, maximum: 60000 }), Type.Null()])),
  dhcp_link: Type.Boolean({ default: false }),
});

export const HEALTH_CHECK_TYPES = ['ping', 'tcp_port', 'http_get', 'pf_status', 'process_running'] as const;
/** The check types this build runs (all of wire-format §10's). */
export const RUNNABLE_CHECK_TYPES: readonly string[] = HEALTH_CHECK_TYPES;

export const HealthCheck = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }),
  check_type: StringEnum(HEALTH_CHECK_TYPES),
  interval_secs: Type.Integer({ minimum: 1, maximum: 3600, default: 10 }),
  timeout_secs: Type.Integer({ minimum: 1, maximum: 60, default: 5 }),
  failures_before_down: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
  target: Type.String({ maxLength: 300, default: '' , description: 'ping: an IP address; tcp_port: address:port ([v6]:port); http_get: an http(s) URL with an IP address host (passes on 2xx); process_running: a process name; pf_status: empty' }),
  enabled: Type.Boolean({ default: true }),
});

/** This node's own place in the pair: never replicated to the peer. */
export const ClusterLocal = Type.Object({
  role: StringEnum(['standalone', 'primary', 'secondary'], { default: 'standalone', description: 'standalone: no VRRP runs' }),
  /** Set by promote (-100) and demote (240) only; 0 neither. */
  demotion: Type.Integer({ minimum: -100, maximum: 240, default: 0 }),
});

export const ClusterRoleBody = Type.Object({ role: StringEnum(['standalone', 'primary', 'secondary']) }, { additionalProperties: false });

export const ClusterStatus = Type.Object({
  role: StringEnum(['primary', 'secondary', 'standalone']),
  peer_reachable: Type.Union([Type.Boolean(), Type.Null()]),
  pfsync_state_count: Type.Union([Type.Integer(), Type.Null()]),
  last_snapshot_hash: Type.Union([Type.String(), Type.Null()]),
  configured_role: StringEnum(['primary', 'secondary', 'standalone']),
  vrrp_state: Type.Union([StringEnum(['master', 'backup', 'mixed']), Type.Null()]),
  priority_adjustment: Type.Integer({ description: 'demotion: 240 demoted, -100 promoted, 0 neither' }),
  failing_checks: Type.Array(Type.String()),
  engine: Type.String(),
  running: Type.Boolean(),
  state_sync: Type.Union([Type.Object({
    running: Type.Boolean(), internal_entries: Type.Union([Type.Integer(), Type.Null()]), external_entries: Type.Union([Type.Integer(), Type.Null()]),
    errors: Type.Union([Type.Integer(), Type.Null()]), last_error: Type.Union([Type.String(), Type.Null()]),
    bytes_sent: Type.Union([Type.Integer(), Type.Null()]), bytes_received: Type.Union([Type.Integer(), Type.Null()]),
  }), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  config_sync: Type.Optional(ConfigSyncStatus),
});
