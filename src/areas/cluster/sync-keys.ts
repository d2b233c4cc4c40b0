/**
 * The per-peer API keys of a pair: the key the peer presents to this node (inbound: an API key of the `system`
 * service account carrying ha:manage only, named cluster-peer:<id>) and the key this node presents to the peer
 * (outbound, sealed in the peer record). Pairing exchanges both; `generate-key` replaces the inbound one (shown once,
 * registered on the peer with PUT /cluster/nodes/{id} {key}). A pair missing either key cannot synchronise: it is
 * reported (GET /cluster/status, health-summary) and sync skips it saying why, never silently.
 */
import type { AppContext } from '../../context.js';
import { HttpError } from '../../core/errors.js';
import { SERVICE_ACCOUNT } from '../../auth/identity-service.js';
import type { PeerRecord } from './sync-state.js';

export type InboundKeyState = 'ok' | 'revoked';
export type OutboundKeyState = 'ok' | 'none' | 'refused';

export interface PeerKeys {
  /** The key the peer presents here: revoked (or expired, or deleted) means the peer's calls answer 401. */
  inbound: InboundKeyState;
  /** The key this node presents: none registered, or refused by the peer (it answered 401). */
  outbound: OutboundKeyState;
  /** Why the pair cannot synchronise, or null. */
  problem: string | null;
}

/** The name the inbound key of a peer carries (listed in GET /auth/api-keys). */
export const peerKeyName = (peerId: string): string => `cluster-peer:${peerId}`;

export function peerKeys(context: AppContext, peer: PeerRecord): PeerKeys {
  const inbound: InboundKeyState = context.identity.apiKeys.liveById(peer.inbound_key_id) ? 'ok' : 'revoked';
  const outbound: OutboundKeyState = peer.outbound_key === '' ? 'none' : peer.outbound_key_refused_at ? 'refused' : 'ok';
  const problems: string[] = [];
  if (outbound !== 'ok') {
    problems.push(`${outbound === 'none' ? 'this node holds no key for' : `${peer.name} refused the key this node presents (401 at ${peer.outbound_key_refused_at}), so nothing is sent to`} ${peer.name}: generate one there (POST /api/v1/cluster/nodes/{id}/generate-key on ${peer.name}) and register it here (PUT /api/v1/cluster/nodes/${peer.id} {key})`);
  }
  if (inbound === 'ok') return { inbound, outbound, problem: problems[0] ?? null };
  problems.push(`the key ${peer.name} presents to this node (API key ${peerKeyName(peer.id)}) was revoked or expired: ${peer.name}'s calls are refused; generate a new one here (POST /api/v1/cluster/nodes/${peer.id}/generate-key) and register it on ${peer.name}`);
  return { inbound, outbound, problem: problems.join('; ') };
}

/** Creates the key a peer presents to this node: system service account, ha:manage only. */
export function createInboundKey(context: AppContext, peerId: string, createdBy: string): { id: string; key: string } {
  const account = context.identity.users.byUsername(SERVICE_ACCOUNT);
  if (!account) throw new HttpError(503, 'the service account is missing: restart Bulwark');
  const { record, key } = context.identity.apiKeys.create({ name: peerKeyName(peerId), permissions: ['ha:manage'], ownerId: account.id, createdBy, expiresAt: null });
  return { id: record.id, key };
}

/** Replaces the peer's inbound key (the old one answers 401 at once); the new secret is returned once, never stored in clear. */
export function regenerateInboundKey(context: AppContext, peer: PeerRecord): { peer: PeerRecord; key: string } {
  const { apiKeys } = context.identity;
  for (const record of apiKeys.list()) if (record.id === peer.inbound_key_id || record.name === peerKeyName(peer.id)) apiKeys.remove(record.id);
  const created = createInboundKey(context, peer.id, 'cluster generate-key');
  return { peer: { ...peer, inbound_key_id: created.id }, key: created.key };
}
