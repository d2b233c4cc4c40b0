/**
 * The failover history of this node (GET /cluster/failover-history, wire-format §10): every role change seen
 * (keepalived's notify hook reporting a VRRP transition) and every promote, demote and role setting, with time,
 * from/to and cause. Kept in the service state table, so it survives a restart; the last 24 hours are served.
 */
import { newId } from '../../core/ids.js';
import type { Db } from '../../store/database.js';
import { isoTime, type Clock } from '../../core/clock.js';
import { ServiceState } from '../common/service-state.js';

export type LiveRole = 'primary' | 'secondary' | 'standalone';
export type FailoverCause = 'vrrp' | 'promote' | 'demote' | 'role_set';

export interface FailoverEntry {
  id: string;
  ts: string;
  from_role: LiveRole;
  to_role: LiveRole;
  cause: FailoverCause;
  detail: string | null;
}

const KEY = 'cluster_failover_history';
const SERVED_MS = 24 * 3600_000;
/** Kept at most (a flapping link must not grow the state row without bound). */
const KEPT = 1000;

interface Stored {
  entries: FailoverEntry[];
  /** The live role last seen, so a change while the API was down is recorded at the next start. */
  last_role: LiveRole | null;
}

export class FailoverHistory {
  private readonly state: ServiceState;

  constructor(db: Db, private readonly clock: Clock) {
    this.state = new ServiceState(db, clock);
  }

  private read(): Stored {
    return this.state.get<Stored>(KEY, { entries: [], last_role: null });
  }

  lastRole(): LiveRole | null {
    return this.read().last_role;
  }

  record(entry: Omit<FailoverEntry, 'id' | 'ts'>, seen: LiveRole | null = null): FailoverEntry {
    const stored = this.read();
    const recorded: FailoverEntry = { id: newId(), ts: isoTime(this.clock.now()), ...entry };
    this.state.set<Stored>(KEY, { entries: [...stored.entries, recorded].slice(-KEPT), last_role: seen ?? stored.last_role });
    return recorded;
  }

  /** Remembers the live role without a change to record (the first one seen). */
  saw(role: LiveRole): void {
    this.state.patch<Stored>(KEY, { entries: [], last_role: null }, { last_role: role });
  }

  /** The entries of the last 24 hours, oldest first. */
  recent(): FailoverEntry[] {
    const since = this.clock.now() - SERVED_MS;
    return this.read().entries.filter((entry) => Date.parse(entry.ts) >= since);
  }
}
