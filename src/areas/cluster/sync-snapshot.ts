/**
 * What configuration sync carries between the two nodes of a pair, and how: the shared sections (every kind but
 * the node-local ones), their content hash, and the snapshot on the wire, whose secrets are sealed for the peer
 * (AES-256-GCM under a key only the pair holds, bound to kind, id and field) and whose whole body is
 * authenticated with an HMAC under the pair's other key: a snapshot not made by the peer does not open.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { canonicalJson } from '../../core/canonical-json.js';
import { Sealer, sha256Hex } from '../../core/crypto.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import type { KindCatalogue } from '../../store/kind-catalogue.js';
import { assertValid, compileBodyValidator } from '../../model/validation.js';
import { unwrapSecret, wrapSecret, type ExportKeys } from '../config/export-format.js';
import { mapSecrets, pathText, WRAPPED_PREFIX } from '../config/secrets.js';
import { CLUSTER_KINDS } from './schema.js';
import type { ChainEntry } from './sync-chain.js';

/**
 * Sections that belong to one node and never travel: its interface and VLAN addresses, host name, HTTPS
 * certificate and local CA, its role, priority, state-sync peer and health checks (each node checks its own
 * uplinks). Its pairing lives outside the configuration store altogether.
 */
export const NODE_LOCAL_KINDS: ReadonlySet<string> = new Set([
  'interface_config', 'vlan', 'system_general', 'settings_tls', 'ca_root', 'ca_cert',
  CLUSTER_KINDS.local, CLUSTER_KINDS.pfsync, CLUSTER_KINDS.health,
]);

export const isShared = (object: { kind: string }): boolean => !NODE_LOCAL_KINDS.has(object.kind);

/** The two keys of a pair, derived from the secret both nodes received at pairing. */
export function pairKeys(pairSecret: string): ExportKeys {
  const key = Buffer.from(hkdfSync('sha256', Buffer.from(pairSecret, 'hex'), Buffer.alloc(0), 'bulwark-cluster-sync-v1', 64));
  return { encryption: key.subarray(0, 32), mac: key.subarray(32) };
}

const hmacHex = (keys: ExportKeys, text: string): string => createHmac('sha256', keys.mac).update(text).digest('hex');

/**
 * Content hash of the shared configuration, equal on both nodes when they hold the same: one line per object
 * (kind, id, position, digest of its data) in a fixed order. A secret enters as an HMAC of its plaintext under
 * the pair's key: the same on both nodes though each seals it with its own key, and no digest of a secret alone.
 */
export function sharedHash(objects: readonly ConfigObject[], kinds: KindCatalogue, plaintext: (value: string) => string, keys: ExportKeys): string {
  const lines = objects.filter(isShared).map((object) => {
    const data = mapSecrets(object.data, kinds.secretFields(object.kind), (value, path) => `secret:${hmacHex(keys, `${object.kind}\n${object.id}\n${pathText(path)}\n${plaintext(value)}`)}`);
    return `${JSON.stringify(object.kind)} ${JSON.stringify(object.id)} ${object.position} ${sha256Hex(canonicalJson(data))}`;
  });
  return sha256Hex(lines.sort().join('\n'));
}

const ChainEntrySchema = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  link: Type.String({ pattern: '^[0-9a-f]{64}$' }),
}, { additionalProperties: false });

export const SNAPSHOT_FORMAT = 'bulwark-cluster-snapshot';

export const SyncSnapshotSchema = Type.Object({
  format: Type.Literal(SNAPSHOT_FORMAT),
  format_version: Type.Literal(1),
  sender: Type.String({ maxLength: 128 }),
  sent_at: Type.String({ maxLength: 40 }),
  /** The administrator chose this side (split-brain resolved): the receiver takes it whatever its history. */
  force: Type.Boolean(),
  /** The shared content hash of `objects`: the head of `chain`. */
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  chain: Type.Array(ChainEntrySchema, { minItems: 1, maxItems: 256 }),
  objects: Type.Array(Type.Object({
    kind: Type.String({ minLength: 1, maxLength: 128 }),
    id: Type.String({ minLength: 1, maxLength: 256 }),
    position: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true }),
    created_at: Type.String(),
    updated_at: Type.String(),
  }, { additionalProperties: false }), { maxItems: 200_000 }),
  integrity: Type.String({ pattern: '^[0-9a-f]{64}$' }),
}, { additionalProperties: false });
export type SyncSnapshot = Static<typeof SyncSnapshotSchema>;

const validateSnapshot = compileBodyValidator(SyncSnapshotSchema);

/** The snapshot of `objects` (shared ones only) for the peer: secrets sealed for it, the whole body under the pair's HMAC. */
export function sealSnapshot(input: { objects: readonly ConfigObject[]; kinds: KindCatalogue; sealer: Sealer; keys: ExportKeys; sender: string; sentAt: string; force: boolean; chain: ChainEntry[] }): SyncSnapshot {
  const { kinds, sealer, keys } = input;
  const objects = input.objects.filter(isShared).map((object) => ({
    ...object,
    data: mapSecrets(object.data, kinds.secretFields(object.kind), (value, path) =>
      wrapSecret(keys, Sealer.isSealed(value) ? sealer.open(value) : value, object.kind, object.id, pathText(path))),
  }));
  const body = {
    format: SNAPSHOT_FORMAT as typeof SNAPSHOT_FORMAT, format_version: 1 as const, sender: input.sender, sent_at: input.sentAt, force: input.force,
    hash: input.chain.at(-1)!.hash, chain: input.chain, objects,
  };
  return { ...body, integrity: hmacHex(keys, canonicalJson(body)) };
}

/**
 * A received snapshot's objects, ready for this node's store: shape and HMAC checked (400 naming what failed), node-local
 * kinds refused, every secret opened from its peer sealing and sealed again with this node's key, and the content
 * hash recomputed and held to what the sender announced.
 */
export function openSnapshot(body: unknown, input: { kinds: KindCatalogue; sealer: Sealer; keys: ExportKeys }): { snapshot: SyncSnapshot; objects: ConfigObject[] } {
  assertValid(validateSnapshot, body);
  const snapshot = body as SyncSnapshot;
  const { integrity, ...rest } = snapshot;
  const expected = Buffer.from(hmacHex(input.keys, canonicalJson(rest)), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(integrity, 'hex'))) throw badRequest('body.integrity: the snapshot was not made by the paired peer, or was modified on the way (HMAC check failed)');
  if (snapshot.chain.at(-1)!.hash !== snapshot.hash) throw badRequest('body.hash is not the head of body.chain');
  const plain = new Map<string, string>();
  const isMarker = (value: string) => value.startsWith(WRAPPED_PREFIX) || Sealer.isSealed(value);
  const objects = snapshot.objects.map((object) => {
    if (!isShared(object)) throw badRequest(`body.objects: ${object.kind} ${object.id} is node-local and never synchronised`);
    const data = mapSecrets(object.data as ConfigData, input.kinds.secretFields(object.kind), (value, path) => {
      if (!value.startsWith(WRAPPED_PREFIX)) throw badRequest(`body.objects: ${object.kind} ${object.id} ${pathText(path)}: a secret must travel sealed for this node`);
      const opened = unwrapSecret(input.keys, value, object.kind, object.id, pathText(path));
      const sealed = input.sealer.seal(opened);
      plain.set(sealed, opened);
      return sealed;
    }, isMarker);
    return { ...object, data };
  });
  const hash = sharedHash(objects, input.kinds, (value) => plain.get(value) ?? value, input.keys);
  if (hash !== snapshot.hash) throw badRequest('body.hash does not match the objects the snapshot carries');
  return { snapshot, objects };
}
