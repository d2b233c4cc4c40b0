/**
 * What this node knows of its pair, kept in the lifecycle key/value table of the configuration versions (not in
 * the configuration store: a pairing is node-local and never exported, restored or synchronised).
 */
import type { ConfigVersions } from '../../store/config-versions.js';
import type { ChainEntry, Relation } from './sync-chain.js';

export interface PeerRecord {
  id: string;
  name: string;
  /** The address the pairing step recorded: the only one sync connects to (and the outbound guard allows). */
  address: string;
  /** The peer's HTTPS port. */
  port: number;
  /** SHA-256 of the peer's HTTPS certificate key (SPKI), hex: the only key its connections are trusted with. */
  fingerprint: string;
  /** The API key this node presents to the peer (sealed); '' when none is registered. */
  outbound_key: string;
  /** When the peer answered 401 to that key (it was revoked there): nothing is sent until a new one is registered. */
  outbound_key_refused_at?: string | null;
  /** The secret both nodes derive the snapshot keys from (sealed). */
  pair_secret: string;
  /** The id of the API key (system role, ha:manage) the peer presents to this node. */
  inbound_key_id: string;
  created_at: string;
  created_by: string;
  /**
   * The node that showed the pairing code takes the other's configuration at the first sync: until then its own
   * applies start no history (which would be split-brain against the first snapshot).
   */
  awaiting_first_sync?: boolean;
}

export interface SplitBrain {
  detected_at: string;
  local_head: ChainEntry | null;
  peer_head: ChainEntry | null;
}

export interface SyncOutcome {
  at: string;
  ok: boolean;
  seq: number | null;
  hash: string | null;
  /** The version the receiving node recorded (its own numbering). */
  peer_version: number | null;
  ms: number;
  error: string | null;
}

export interface SyncState {
  reachable: boolean | null;
  last_seen: string | null;
  last_error: string | null;
  peer_role: string | null;
  peer_software_version: string | null;
  peer_head: ChainEntry | null;
  relation: Relation | null;
  split_brain: SplitBrain | null;
  last_push: SyncOutcome | null;
  last_received: { at: string; seq: number; hash: string; version: number; forced: boolean } | null;
  /** The last certificate sent to the peer (cert-push, after a renewal here). */
  last_cert_push: { at: string; cert_id: string; ok: boolean; error: string | null } | null;
}

const EMPTY_STATE: SyncState = {
  reachable: null, last_seen: null, last_error: null, peer_role: null, peer_software_version: null, peer_head: null,
  relation: null, split_brain: null, last_push: null, last_received: null, last_cert_push: null,
};

const KEYS = { peer: 'cluster_sync_peer', chain: 'cluster_sync_chain', state: 'cluster_sync_state' } as const;

export class SyncStateStore {
  constructor(private readonly versions: ConfigVersions) {}

  peer(): PeerRecord | null {
    return this.versions.getMeta<PeerRecord>(KEYS.peer) ?? null;
  }

  setPeer(peer: PeerRecord | null): void {
    this.versions.setMeta(KEYS.peer, peer);
    if (peer === null) {
      this.versions.setMeta(KEYS.chain, null);
      this.versions.setMeta(KEYS.state, null);
    }
  }

  chain(): ChainEntry[] {
    return this.versions.getMeta<ChainEntry[]>(KEYS.chain) ?? [];
  }

  setChain(chain: readonly ChainEntry[]): void {
    this.versions.setMeta(KEYS.chain, chain);
  }

  state(): SyncState {
    return { ...EMPTY_STATE, ...(this.versions.getMeta<Partial<SyncState>>(KEYS.state) ?? {}) };
  }

  updateState(patch: Partial<SyncState>): SyncState {
    const next = { ...this.state(), ...patch };
    this.versions.setMeta(KEYS.state, next);
    return next;
  }
}
