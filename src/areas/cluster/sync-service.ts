/**
 * Configuration sync between the two nodes of a pair (issue 39 item 3). The node that holds the virtual addresses
 * (the primary) sends every applied configuration to its peer at once after the apply, and checks the peer every
 * 10 s (a missed push is sent again, drift is seen). The peer takes it through its normal apply path (as a restore:
 * the model, the transit assertions, every applier) and answers the version it recorded and the hash it now holds,
 * which the sender holds to its own: a sync cannot succeed silently without the peer holding the same.
 *
 * Versions are hash-chained (sync-chain.ts): a node takes a snapshot only when it extends its own history. When both
 * sides changed since the last version both hold, that is split-brain: refused (409), reported by both in
 * GET /cluster/status, and resolved only by the administrator choosing a side (POST /cluster/sync/resolve).
 */
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { Sealer } from '../../core/crypto.js';
import { badRequest, conflict, forbidden, HttpError } from '../../core/errors.js';
import { BUILD } from '../../core/build-info.js';
import type { Identity } from '../../http/access.js';
import type { ConfigObject } from '../../store/config-store.js';
import type { ConfigService } from '../config/service.js';
import type { ExportKeys } from '../config/export-format.js';
import type { ApiTlsService } from '../tls/service.js';
import type { ClusterService } from './service.js';
import { CHAIN_SENT, extend, relation, wellFormed, type ChainEntry, type Relation } from './sync-chain.js';
import { isShared, openSnapshot, pairKeys, sealSnapshot, sharedHash, type SyncSnapshot } from './sync-snapshot.js';
import { Pairing } from './sync-pairing.js';
import { PeerAnswered, peerRequest, PeerUnreachable, type PeerTarget } from './sync-peer-client.js';
import { SyncStateStore, type PeerRecord, type SyncOutcome, type SyncState } from './sync-state.js';
import { peerKeys, type PeerKeys } from './sync-keys.js';

export const SYNC_TOPICS = { drift: 'cluster.config_drift', splitBrain: 'cluster.split_brain', synced: 'cluster.config_synced' } as const;

/** How often each node compares its history with the peer's (pushes happen at once after an apply; this retries and sees drift). */
export const SYNC_POLL_MS = 10_000;

/** What GET /cluster/sync/state answers: a node's history as its peer compares it. */
export interface NodeSyncState {
  name: string;
  role: string;
  software_version: string;
  version: number | null;
  hash: string;
  seq: number | null;
  link: string | null;
  chain: ChainEntry[];
}

/** What the receiving node answers a snapshot with (PUT /cluster/snapshot). */
export interface ReceiveAnswer {
  applied: boolean;
  version: number | null;
  hash: string;
  seq: number;
  link: string;
  appliers: { name: string; ok: boolean; ms: number }[];
}

export type SyncStateName = 'unpaired' | 'no_key' | 'in_sync' | 'peer_behind' | 'peer_ahead' | 'split_brain' | 'unreachable' | 'unknown';

export class ClusterSync {
  readonly state: SyncStateStore;
  readonly pairing: Pairing;
  /** A received snapshot is being applied: its apply is the peer's version, not a change made here. */
  private receiving = false;
  private pushing: Promise<SyncOutcome> | null = null;
  private pushAgain = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly context: AppContext, private readonly deps: { config: ConfigService; cluster: ClusterService; tls: ApiTlsService }) {
    this.state = new SyncStateStore(context.apply.versions);
    this.pairing = new Pairing(context, this.state, deps.tls);
    context.apply.onApplied(() => {
      if (this.receiving || !this.state.peer()) return;
      void this.afterLocalApply().catch((error: Error) => context.log.warn({ err: error.message }, 'cluster: configuration sync after an apply failed'));
    });
  }

  requirePeer(): PeerRecord {
    const peer = this.state.peer();
    if (!peer) throw new HttpError(412, 'this node is not paired: pair it first (POST /api/v1/cluster/pairing-code on the peer, then POST /api/v1/cluster/nodes here)');
    return peer;
  }

  pairKeys(peer: PeerRecord): ExportKeys {
    return pairKeys(this.context.sealer.open(peer.pair_secret));
  }

  /** The pair's keys: whether each side holds one the other accepts. */
  keys(peer: PeerRecord = this.requirePeer()): PeerKeys {
    return peerKeys(this.context, peer);
  }

  /** The names of the peers this node cannot synchronise with for want of a key (health-summary's missing_peer_keys). */
  peersWithoutKey(): string[] {
    const peer = this.state.peer();
    return peer && this.keys(peer).problem ? [peer.name] : [];
  }

  /** The peer answered 401 to this node's key: recorded, so sync stops sending it and says why. */
  private noteRefusedKey(peer: PeerRecord, error: unknown, at: string): void {
    if (!(error instanceof PeerAnswered) || error.status !== 401 || peer.outbound_key_refused_at) return;
    this.state.setPeer({ ...peer, outbound_key_refused_at: at });
    this.context.log.warn({ peer: peer.name }, 'cluster: the peer refused the key this node presents; configuration sync stops until a new key is registered');
  }

  target(peer: PeerRecord): PeerTarget {
    return { address: peer.address, port: peer.port, fingerprint: peer.fingerprint, key: this.context.sealer.open(peer.outbound_key) };
  }

  /** The configuration that runs: the active version's objects (pending edits do not travel); null before the first apply. */
  private appliedObjects(): ConfigObject[] | null {
    const active = this.context.apply.versions.activeVersion();
    return active === null ? null : this.context.apply.versions.content(active) ?? null;
  }

  private requireApplied(): ConfigObject[] {
    const objects = this.appliedObjects();
    if (!objects) throw new HttpError(412, 'nothing has been applied on this node yet: there is no configuration to synchronise');
    return objects;
  }

  private hashOf(objects: readonly ConfigObject[], keys: ExportKeys): string {
    const { sealer } = this.context;
    return sharedHash(objects, this.context.store.kinds, (value) => (Sealer.isSealed(value) ? sealer.open(value) : value), keys);
  }

  /** This node's history with what runs now as its head (a change applied here is one more version). */
  private currentChain(peer: PeerRecord): ChainEntry[] {
    const chain = this.state.chain();
    const applied = this.appliedObjects();
    if (!applied || peer.awaiting_first_sync) return chain;
    const next = extend(chain, this.hashOf(applied, this.pairKeys(peer)));
    if (next.at(-1)?.link !== chain.at(-1)?.link) this.state.setChain(next);
    return next;
  }

  /** Whether this node sends: it holds the virtual addresses (or, where VRRP reports nothing, is configured primary). */
  async isSender(): Promise<boolean> {
    const configured = this.deps.cluster.role();
    if (configured === 'standalone') return false;
    const live = await this.context.platform.ha.status().catch(() => null);
    return live?.vrrp_state === 'master' || ((live?.vrrp_state ?? null) === null && configured === 'primary');
  }

  private async afterLocalApply(): Promise<void> {
    const peer = this.state.peer();
    if (!peer) return;
    this.currentChain(peer);
    if (await this.isSender()) await this.schedulePush();
  }

  /** One push at a time; an apply during a push sends again once it ends. */
  schedulePush(): Promise<SyncOutcome> {
    if (this.pushing) {
      this.pushAgain = true;
      return this.pushing;
    }
    const run = async (): Promise<SyncOutcome> => {
      let outcome: SyncOutcome;
      do {
        this.pushAgain = false;
        outcome = await this.push(false);
      } while (this.pushAgain);
      return outcome;
    };
    this.pushing = run().finally(() => (this.pushing = null));
    return this.pushing;
  }

  /** Sends what runs here to the peer; the outcome is recorded (and reported by GET /cluster/status). */
  async push(force: boolean): Promise<SyncOutcome> {
    const peer = this.requirePeer();
    const chain = this.currentChain(peer);
    if (chain.length === 0) throw new HttpError(412, 'nothing has been applied on this node yet: there is no configuration to synchronise');
    const at = isoTime(this.context.clock.now());
    const head = chain.at(-1)!;
    const keys = this.keys(peer);
    if (keys.outbound !== 'ok') {
      const skipped: SyncOutcome = { at, ok: false, seq: head.seq, hash: head.hash, peer_version: null, ms: 0, error: `not sent: ${keys.problem}` };
      this.state.updateState({ last_push: skipped, last_error: skipped.error });
      this.context.log.warn({ peer: peer.name, reason: keys.problem }, 'cluster: configuration push skipped: no key the peer accepts');
      throw new HttpError(412, skipped.error!);
    }
    const snapshot = this.snapshot(peer, force, chain);
    const started = performance.now();
    let outcome: SyncOutcome;
    try {
      await peerRequest(this.context.store, this.target(peer), 'PUT', '/api/v1/cluster/snapshot', snapshot);
      // The peer's answer is 204 (wire-format §10): what it holds afterwards is read back, so a success it merely claims is caught.
      const answer = await peerRequest(this.context.store, this.target(peer), 'GET', '/api/v1/cluster/sync/state') as NodeSyncState;
      const holds = answer?.hash === head.hash;
      outcome = { at, ok: holds, seq: head.seq, hash: head.hash, peer_version: answer?.version ?? null, ms: Math.round(performance.now() - started), error: holds ? null : `the peer answered success but holds ${String(answer?.hash)}, not ${head.hash}` };
      this.state.updateState({ last_push: outcome, reachable: true, last_seen: at, last_error: outcome.error, peer_head: holds ? head : null, ...(holds ? { relation: 'same' as const, split_brain: null } : {}) });
      if (holds) this.context.events.emit(SYNC_TOPICS.synced, { peer: peer.name, seq: head.seq, hash: head.hash, peer_version: outcome.peer_version, ms: outcome.ms });
    } catch (error) {
      const message = (error as Error).message;
      outcome = { at, ok: false, seq: head.seq, hash: head.hash, peer_version: null, ms: Math.round(performance.now() - started), error: message };
      this.state.updateState({ last_push: outcome, last_error: message, ...(error instanceof PeerUnreachable ? { reachable: false } : { reachable: true, last_seen: at }) });
      this.context.log.warn({ peer: peer.name, err: message }, 'cluster: configuration push failed');
      this.noteRefusedKey(peer, error, at);
      // A refusal is judged from both histories, as the peer judged it: split-brain is then recorded here too.
      if (error instanceof PeerAnswered && error.status === 409) await this.poll();
    }
    return outcome;
  }

  /** The snapshot of what runs here, sealed for the peer (GET /cluster/snapshot, and every push). */
  snapshot(peer = this.requirePeer(), force = false, chain = this.currentChain(peer)): SyncSnapshot {
    return sealSnapshot({
      objects: this.requireApplied(), kinds: this.context.store.kinds, sealer: this.context.sealer, keys: this.pairKeys(peer),
      sender: this.pairing.nodeName(), sentAt: isoTime(this.context.clock.now()), force, chain: chain.slice(-CHAIN_SENT),
    });
  }

  /** The shared configuration's hash (GET /cluster/snapshot/hash). */
  hash(): string {
    const keys = this.pairKeys(this.requirePeer());
    return this.hashOf(this.requireApplied(), keys);
  }

  localState(): NodeSyncState {
    const peer = this.requirePeer();
    const chain = this.currentChain(peer);
    const head = chain.at(-1);
    return {
      name: this.pairing.nodeName(), role: this.deps.cluster.role(), software_version: BUILD.version,
      version: this.context.apply.versions.activeVersion(), hash: head?.hash ?? '', seq: head?.seq ?? null, link: head?.link ?? null, chain: chain.slice(-CHAIN_SENT),
    };
  }

  /** PUT /cluster/snapshot: only the paired peer's own key may send one. */
  async receive(body: unknown, caller: Identity | null | undefined): Promise<ReceiveAnswer> {
    const peer = this.requirePeer();
    if (caller?.credential !== 'api_key' || caller.credentialId !== peer.inbound_key_id) {
      throw forbidden(`only the paired peer (${peer.name}) sends snapshots, with the key it received at pairing`);
    }
    return this.take(peer, body, { force: null });
  }

  /**
   * Checks a snapshot against this node's history and applies it. `force` null: as the snapshot says (a push);
   * true: the administrator chose the peer's side here (a pull).
   */
  private async take(peer: PeerRecord, body: unknown, options: { force: boolean | null }): Promise<ReceiveAnswer> {
    const keys = this.pairKeys(peer);
    const { snapshot, objects } = openSnapshot(body, { kinds: this.context.store.kinds, sealer: this.context.sealer, keys });
    if (!wellFormed(snapshot.chain)) throw badRequest('body.chain: a link does not follow from the one before it');
    const head = snapshot.chain.at(-1)!;
    const force = options.force ?? snapshot.force;
    const local = this.currentChain(peer);
    const at = isoTime(this.context.clock.now());
    if (!force) {
      const standing = relation(local, snapshot.chain);
      if (standing === 'same') return { applied: false, version: this.context.apply.versions.activeVersion(), hash: head.hash, seq: head.seq, link: head.link, appliers: [] };
      if (await this.isSender()) throw conflict('this node is the primary (it holds the virtual addresses): it sends configuration and does not take it; demote it, or resolve with POST /api/v1/cluster/sync/resolve');
      if (standing === 'local-ahead') throw conflict(`the snapshot (version ${head.seq}) is older than what this node holds (version ${local.at(-1)!.seq}): refused`);
      if (standing === 'diverged') {
        this.recordSplitBrain(local.at(-1) ?? null, head);
        this.deps.config.audit.record({ action: 'config.cluster_sync', outcome: 'failure', actor: `cluster peer ${peer.name}`, details: `split-brain: version ${head.seq} ${head.hash.slice(0, 12)} refused` });
        throw conflict(`split-brain: both nodes changed the configuration since the last version they share (here version ${local.at(-1)!.seq} ${local.at(-1)!.hash.slice(0, 12)}, sent version ${head.seq} ${head.hash.slice(0, 12)}); nothing was overwritten — choose a side with POST /api/v1/cluster/sync/resolve`);
      }
    }
    // The peer's shared sections, and this node's own ones as they are.
    const candidate = [...objects, ...this.context.store.snapshot().filter((object) => !isShared(object))];
    const { errors } = this.deps.config.checkCandidate(candidate);
    if (errors.length > 0) throw badRequest(`snapshot refused: ${errors.length} problem(s): ${errors.slice(0, 5).join('; ')}`);
    const actor = `cluster peer ${peer.name}`;
    await this.context.apply.gate(candidate, { actor, what: `configuration sync from ${peer.name}` });
    this.receiving = true;
    let outcome;
    try {
      outcome = await this.deps.config.replaceAndApply(candidate, { actor, comment: `configuration sync from ${peer.name} (version ${head.seq} ${head.hash.slice(0, 12)}${force ? ', side chosen by the administrator' : ''})`, source: 'cluster-sync' });
    } catch (error) {
      this.state.updateState({ last_error: `applying the snapshot from ${peer.name} failed: ${(error as Error).message}` });
      throw error;
    } finally {
      this.receiving = false;
    }
    const holds = this.hashOf(this.requireApplied(), keys);
    if (holds !== head.hash) {
      const message = `the snapshot was applied as version ${outcome.record.version} but this node's shared configuration hashes to ${holds}, not ${head.hash}`;
      this.state.updateState({ last_error: message });
      throw conflict(message);
    }
    this.deps.config.audit.record({ action: 'config.cluster_sync', outcome: 'success', actor, details: `version ${head.seq} ${head.hash.slice(0, 12)} applied as version ${outcome.record.version}${force ? ' (side chosen by the administrator)' : ''}` });
    this.state.setChain(snapshot.chain);
    if (peer.awaiting_first_sync) this.state.setPeer({ ...peer, awaiting_first_sync: false });
    this.state.updateState({
      split_brain: null, relation: 'same', peer_head: head, last_error: null, reachable: true, last_seen: at,
      last_received: { at, seq: head.seq, hash: head.hash, version: outcome.record.version, forced: force },
    });
    this.context.events.emit(SYNC_TOPICS.synced, { peer: peer.name, seq: head.seq, hash: head.hash, version: outcome.record.version, received: true });
    return { applied: true, version: outcome.record.version, hash: holds, seq: head.seq, link: head.link, appliers: outcome.appliers };
  }

  /** Fetches the peer's snapshot and applies it here whatever the histories say (the administrator chose the peer). */
  async pull(): Promise<ReceiveAnswer> {
    const peer = this.requirePeer();
    const body = await peerRequest(this.context.store, this.target(peer), 'GET', '/api/v1/cluster/snapshot').catch((error: Error) => {
      throw error instanceof HttpError ? error : new HttpError(502, `fetching the peer's snapshot failed: ${error.message}`);
    });
    return this.take(peer, body, { force: true });
  }

  /** Split-brain resolved by the administrator: this node's configuration goes to the peer, or the peer's comes here. */
  async resolve(keep: 'local' | 'peer'): Promise<{ kept: 'local' | 'peer'; version: number | null; hash: string; seq: number | null }> {
    if (keep === 'peer') {
      const answer = await this.pull();
      return { kept: keep, version: answer.version, hash: answer.hash, seq: answer.seq };
    }
    const outcome = await this.push(true);
    if (!outcome.ok) throw new HttpError(502, `sending this node's configuration to the peer failed: ${outcome.error}`);
    return { kept: keep, version: outcome.peer_version, hash: outcome.hash!, seq: outcome.seq };
  }

  private recordSplitBrain(local: ChainEntry | null, peerHead: ChainEntry | null): void {
    const current = this.state.state().split_brain;
    if (current && current.local_head?.link === local?.link && current.peer_head?.link === peerHead?.link) return;
    const splitBrain = { detected_at: isoTime(this.context.clock.now()), local_head: local, peer_head: peerHead };
    this.state.updateState({ split_brain: splitBrain, relation: 'diverged' });
    this.context.log.error({ local: local?.seq, peer: peerHead?.seq }, 'cluster: split-brain — both nodes changed the configuration; nothing is synchronised until the administrator chooses a side');
    this.context.events.emit(SYNC_TOPICS.splitBrain, { local_head: local, peer_head: peerHead });
  }

  /** Compares both histories (every 10 s, and after a refused push): reachability, drift, split-brain; sends what the peer lacks. */
  async poll(): Promise<void> {
    const peer = this.state.peer();
    if (!peer) return;
    const at = isoTime(this.context.clock.now());
    const keys = this.keys(peer);
    if (keys.outbound !== 'ok') {
      this.state.updateState({ last_error: `not compared: ${keys.problem}` });
      return;
    }
    let remote: NodeSyncState;
    try {
      remote = await peerRequest(this.context.store, this.target(peer), 'GET', '/api/v1/cluster/sync/state') as NodeSyncState;
      if (!Array.isArray(remote?.chain) || !wellFormed(remote.chain)) throw new Error('the peer answered a history whose links do not follow');
    } catch (error) {
      this.state.updateState({ last_error: (error as Error).message, ...(error instanceof PeerAnswered ? { reachable: true, last_seen: at } : { reachable: false }) });
      this.noteRefusedKey(peer, error, at);
      return;
    }
    const local = this.currentChain(peer);
    const standing = relation(local, remote.chain);
    const before = this.state.state();
    if (before.relation !== standing) this.context.events.emit(SYNC_TOPICS.drift, { peer: peer.name, from: before.relation, to: standing, local_head: local.at(-1) ?? null, peer_head: remote.chain.at(-1) ?? null });
    this.state.updateState({
      reachable: true, last_seen: at, peer_role: remote.role, peer_software_version: remote.software_version, peer_head: remote.chain.at(-1) ?? null, relation: standing,
      ...(standing === 'diverged' ? {} : { split_brain: null }),
      ...(before.last_error && !before.last_push?.error ? { last_error: null } : {}),
    });
    if (standing === 'diverged') this.recordSplitBrain(local.at(-1) ?? null, remote.chain.at(-1) ?? null);
    else if (standing === 'local-ahead' && (await this.isSender())) await this.schedulePush();
  }

  /**
   * The sync state. `same` was recorded for the head of that moment: once a newer version is applied here (its push
   * still under way) the peer is behind, even if an earlier push has just recorded that the peer held the older head.
   */
  stateName(state: SyncState = this.state.state(), head: ChainEntry | null = this.localHead()): SyncStateName {
    const peer = this.state.peer();
    if (!peer) return 'unpaired';
    if (this.keys(peer).problem) return 'no_key';
    if (state.split_brain) return 'split_brain';
    if (state.reachable === false) return 'unreachable';
    if (state.relation === 'same' && head && state.peer_head?.link !== head.link) return 'peer_behind';
    const names: Record<Relation, SyncStateName> = { same: 'in_sync', 'local-ahead': 'peer_behind', 'remote-ahead': 'peer_ahead', diverged: 'split_brain' };
    return state.relation ? names[state.relation] : 'unknown';
  }

  /** This node's current head (what runs here), or null when unpaired or nothing was applied. */
  private localHead(): ChainEntry | null {
    const peer = this.state.peer();
    return peer ? this.currentChain(peer).at(-1) ?? null : null;
  }

  /** The `config_sync` part of GET /cluster/status. */
  status() {
    const peer = this.state.peer();
    const state = this.state.state();
    const head = this.localHead();
    return {
      state: this.stateName(state, head),
      peer: peer ? { id: peer.id, name: peer.name, address: peer.address, port: peer.port } : null,
      keys: peer ? this.keys(peer) : null,
      local: head ? { seq: head.seq, hash: head.hash, link: head.link, version: this.context.apply.versions.activeVersion() } : null,
      peer_head: state.peer_head, peer_reachable: state.reachable, last_seen: state.last_seen, split_brain: state.split_brain,
      last_push: state.last_push, last_received: state.last_received, last_cert_push: state.last_cert_push, last_error: state.last_error,
    };
  }

  /** A node of GET /cluster/nodes (wire-format §10's shape, with the pin and the sync state). */
  nodeView(peer: PeerRecord) {
    const state = this.state.state();
    return {
      id: peer.id, name: peer.name, address: peer.address, port: peer.port, fingerprint: peer.fingerprint,
      role: state.peer_role ?? 'unknown',
      health: state.reachable === null ? 'unknown' : state.reachable ? 'healthy' : 'unreachable',
      last_seen: state.last_seen, config_version: state.peer_head?.seq ?? null, config_hash: state.peer_head?.hash ?? null,
      software_version: state.peer_software_version, sync_state: this.stateName(state), keys: this.keys(peer),
      last_pushed_cert_at: state.last_cert_push?.ok ? state.last_cert_push.at : null, created_at: peer.created_at,
    };
  }

  start(): void {
    this.timer = setInterval(() => void this.poll().catch(() => undefined), SYNC_POLL_MS);
    this.timer.unref();
    void this.poll().catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pushing?.catch(() => undefined);
  }
}
