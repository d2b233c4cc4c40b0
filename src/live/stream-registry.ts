/**
 * Every open long-lived stream (the dashboard WebSocket, the Server-Sent Events streams) with the credential
 * that opened it. A stream is authorised once, at its start; the registry checks it again whenever an account,
 * role, session or key changes (IdentityService calls recheck) and ends the streams whose credential no longer
 * holds the stream's permission, and it caps how many streams one account keeps open.
 */
import { tooManyRequests } from '../core/errors.js';
import type { Permission } from '../core/permissions.js';
import type { Identity } from '../http/access.js';

/** Open streams one account may hold at once, over every stream kind: a console tab holds two or three, so five or more tabs fit. */
export const MAX_STREAMS_PER_ACCOUNT = 16;

/** One open stream's place in the registry. */
export interface StreamLease {
  /** What ends the stream when its credential loses the right to it (called at once when already ended). */
  onEnd(end: (reason: string) => void): void;
  /** The stream closed: frees its place. Safe to call more than once. */
  release(): void;
}

interface Entry {
  identity: Identity;
  permission: Permission;
  end?: (reason: string) => void;
  endedWith?: string;
}

export class StreamRegistry {
  private readonly entries = new Set<Entry>();

  constructor(
    /** Whether the credential behind an identity still holds the permission now (live session or key, enabled account). */
    private readonly stillAllowed: (identity: Identity, permission: Permission) => boolean,
    readonly maxPerAccount = MAX_STREAMS_PER_ACCOUNT,
  ) {}

  /** Takes a place for a new stream, or throws 429 when the account already holds the maximum. */
  open(identity: Identity, permission: Permission): StreamLease {
    const held = [...this.entries].filter((entry) => entry.identity.userId === identity.userId).length;
    if (held >= this.maxPerAccount) {
      throw tooManyRequests(5, `too many open streams for this account (at most ${this.maxPerAccount}): close one before opening another`);
    }
    const entry: Entry = { identity, permission };
    this.entries.add(entry);
    return {
      onEnd: (end) => {
        if (entry.endedWith !== undefined) end(entry.endedWith);
        else entry.end = end;
      },
      release: () => {
        this.entries.delete(entry);
      },
    };
  }

  /** Streams open for one account (tests and /status read it). */
  countOf(userId: string): number {
    return [...this.entries].filter((entry) => entry.identity.userId === userId).length;
  }

  /** Ends every stream whose credential lost its permission (disabled, demoted, revoked, deleted). */
  recheck(): void {
    for (const entry of [...this.entries]) {
      if (this.stillAllowed(entry.identity, entry.permission)) continue;
      this.entries.delete(entry);
      entry.endedWith = 'access revoked: the account, its role, its session or its key changed';
      entry.end?.(entry.endedWith);
    }
  }
}
