/**
 * The hash chain of synchronised configuration versions. Each entry is one applied shared configuration: its
 * number, its content hash and its link, sha256(previous link, content hash). Two nodes whose chains hold the
 * same link share every version up to it, so each can tell whether the other's history extends its own.
 */
import { sha256Hex } from '../../core/crypto.js';

export interface ChainEntry {
  seq: number;
  /** The shared configuration's content hash (src/areas/cluster/sync-snapshot.ts). */
  hash: string;
  /** sha256 over the previous entry's link and this hash: the whole history up to here. */
  link: string;
}

/** Entries kept per node (older ones are dropped; a peer further behind than this is told to resolve by hand). */
export const CHAIN_KEPT = 256;
/** Entries a node sends of its chain (the peer finds its own head among them). */
export const CHAIN_SENT = 64;

export const linkOf = (previous: ChainEntry | undefined, hash: string): string => sha256Hex(`${previous?.link ?? 'genesis'}\n${hash}`);

/** The chain with `hash` appended, unless it is already the head's. */
export function extend(chain: readonly ChainEntry[], hash: string): ChainEntry[] {
  const head = chain.at(-1);
  if (head?.hash === hash) return [...chain];
  return [...chain, { seq: (head?.seq ?? 0) + 1, hash, link: linkOf(head, hash) }].slice(-CHAIN_KEPT);
}

/** Every link follows from the one before it (a received chain is checked before it is believed). */
export function wellFormed(chain: readonly ChainEntry[]): boolean {
  return chain.every((entry, index) => index === 0 || (entry.seq === chain[index - 1].seq + 1 && entry.link === linkOf(chain[index - 1], entry.hash)));
}

/**
 * How `remote` stands to `local`:
 * - `same`: the same head;
 * - `remote-ahead`: remote extends local (local's head is in remote's history), or local has no history yet;
 * - `local-ahead`: local extends remote;
 * - `diverged`: each changed since the last version both hold (split-brain), or too far apart to tell.
 */
export type Relation = 'same' | 'remote-ahead' | 'local-ahead' | 'diverged';

export function relation(local: readonly ChainEntry[], remote: readonly ChainEntry[]): Relation {
  const localHead = local.at(-1);
  const remoteHead = remote.at(-1);
  if (!localHead && !remoteHead) return 'same';
  if (!localHead) return 'remote-ahead';
  if (!remoteHead) return 'local-ahead';
  if (localHead.link === remoteHead.link) return 'same';
  if (remote.some((entry) => entry.link === localHead.link)) return 'remote-ahead';
  if (local.some((entry) => entry.link === remoteHead.link)) return 'local-ahead';
  return 'diverged';
}
