import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { PIN_PATTERN } from '../../net/spki-pin.js';

const Pin = Type.String({ pattern: PIN_PATTERN, description: 'SHA-256 of the peer\'s HTTPS certificate key (SPKI), hex (colons allowed)' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const NodeName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const Loose = Type.Object({}, { additionalProperties: true });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const PairingCodeAnswer = Type.Object({
  code: Type.String({ description: 'one-time code, shown once: give it to the other node\'s POST /cluster/nodes within 10 minutes' }),
  fingerprint: Type.String({ description: 'this node\'s certificate pin: compare it with what the other node is given' }),
  port: Port,
  expires_at: Type.String(),
});

export const PairingCallBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 128 }),
  name: NodeName,
  port: Port,
  fingerprint: Pin,
  key: Type.String({ minLength: 1, maxLength: 256 }),
  pair_secret: Type.String({ pattern: '^[0-9a-f]{64}$' }),
}, { additionalProperties: false });

export const PairingCallAnswer = Type.Object({ name: Type.String(), key: Type.String() });

/** The reference's `role` is not taken: each node sets its own (PUT /cluster/role), and the peer's is reported as it is. */
export const PairBody = Type.Object({
  name: NodeName,
  address: Type.String({ maxLength: 45, description: 'the peer\'s IP address (its sync link address)' }),
  port: Type.Integer({ minimum: 1, maximum: 65535, default: 8443, description: 'the peer\'s HTTPS port' }),
  fingerprint: Pin,
  pairing_code: Type.String({ minLength: 1, maxLength: 128, description: 'from POST /cluster/pairing-code on the peer' }),
}, { additionalProperties: false });

export const NodePatch = Type.Object({
  name: Type.Optional(NodeName),
  port: Type.Optional(Port),
  fingerprint: Type.Optional(Pin),
  key: Type.Optional(Type.String({ pattern: '^bwk_[0-9a-f]{64}$', writeOnly: true, description: "write-only: the key the peer's generate-key showed for this node to present (sealed at rest, never returned)" })),
}, { additionalProperties: false });

/** The pair's keys, as each side sees them (never a secret). */
export const PeerKeysSchema = Type.Object({
  inbound: StringEnum(['ok', 'revoked'], { description: 'the key the peer presents to this node' }),
  outbound: StringEnum(['ok', 'none', 'refused'], { description: 'the key this node presents to the peer: refused means the peer answered 401' }),
  problem: Nullable(Type.String()),
});

export const GeneratedKey = Type.Object({ key: Type.String({ description: 'shown once: register it on the peer with PUT /api/v1/cluster/nodes/{id} {key}' }) });

export const ClusterNode = Type.Object({
  id: Type.String(),
  name: Type.String(),
  address: Type.String(),
  port: Port,
  fingerprint: Type.String(),
  role: Type.String({ description: 'the peer\'s configured role as last seen, or unknown' }),
  health: StringEnum(['healthy', 'degraded', 'unreachable', 'unknown']),
  last_seen: Nullable(Type.String()),
  config_version: Type.Union([Type.Integer(), Type.Null()], { description: 'the peer\'s synchronised version number (the hash chain\'s)' }),
  config_hash: Nullable(Type.String()),
  software_version: Nullable(Type.String()),
  sync_state: StringEnum(['unpaired', 'no_key', 'in_sync', 'peer_behind', 'peer_ahead', 'split_brain', 'unreachable', 'unknown']),
  keys: PeerKeysSchema,
  last_pushed_cert_at: Type.Union([Type.String(), Type.Null()], { description: 'when a certificate renewed here was last installed by the peer (cert-push)' }),
  created_at: Type.String(),
});


const ChainEntry = Type.Object({ seq: Type.Integer(), hash: Type.String(), link: Type.String() });

export const NodeSyncStateSchema = Type.Object({
  name: Type.String(),
  role: Type.String(),
  software_version: Type.String(),
  version: Type.Union([Type.Integer(), Type.Null()]),
  hash: Type.String(),
  seq: Type.Union([Type.Integer(), Type.Null()]),
  link: Nullable(Type.String()),
  chain: Type.Array(ChainEntry),
});

export const ResolveBody = Type.Object({
  keep: StringEnum(['local', 'peer'], { description: 'local: this node\'s configuration goes to the peer; peer: the peer\'s is applied here' }),
}, { additionalProperties: false });

export const ResolveAnswer = Type.Object({
  kept: StringEnum(['local', 'peer']),
  version: Type.Union([Type.Integer(), Type.Null()]),
  hash: Type.String(),
  seq: Type.Union([Type.Integer(), Type.Null()]),
});

export const PushAnswer = Type.Object({
  at: Type.String(), ok: Type.Boolean(), seq: Type.Union([Type.Integer(), Type.Null()]), hash: Nullable(Type.String()),
  peer_version: Type.Union([Type.Integer(), Type.Null()]), ms: Type.Number(), error: Nullable(Type.String()),
});

/** The `config_sync` member of GET /cluster/status. */
export const ConfigSyncStatus = Type.Object({
  state: Type.String(),
  peer: Type.Union([Loose, Type.Null()]),
  keys: Type.Union([PeerKeysSchema, Type.Null()]),
  local: Type.Union([Loose, Type.Null()]),
  peer_head: Type.Union([Loose, Type.Null()]),
  peer_reachable: Type.Union([Type.Boolean(), Type.Null()]),
  last_seen: Nullable(Type.String()),
  split_brain: Type.Union([Loose, Type.Null()]),
  last_push: Type.Union([Loose, Type.Null()]),
  last_received: Type.Union([Loose, Type.Null()]),
  last_cert_push: Type.Union([Loose, Type.Null()]),
  last_error: Nullable(Type.String()),
});

export const SnapshotAnswer = Loose;
