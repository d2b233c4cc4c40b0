/**
 * Watches this node's live role: keepalived's notify hook writes each VRRP transition into its state file, read
 * here every second (no process is asked). A change is recorded in the failover history and announced as a
 * `role_changed` cluster frame per virtual address; while state sync runs, a `metrics` frame follows every 5 s
 * (wire-format §5.1).
 */
import type { HaEngine, HaStatus } from '../../platform/ha.js';
import type { FailoverHistory, LiveRole } from './failover-history.js';

export type ClusterFrame =
  | { type: 'role_changed'; from: LiveRole; to: LiveRole; vhid: number }
  | { type: 'health_changed'; check: string; healthy: boolean; detail: string | null }
  | { type: 'metrics'; pfsync_in: number | null; pfsync_out: number | null; state_count: number | null; ts_ms: number };

const WATCH_MS = 1000;
const METRICS_MS = 5000;

export const liveRoleOf = (state: HaStatus['vrrp_state']): LiveRole => (state === null ? 'standalone' : state === 'master' ? 'primary' : 'secondary');

export class RoleWatch {
  private timers: NodeJS.Timeout[] = [];
  private last: LiveRole | null = null;

  constructor(private readonly deps: {
    ha: HaEngine;
    history: FailoverHistory;
    vhids: () => number[];
    emit: (frame: ClusterFrame) => void;
    /** Whether anyone listens for frames (the metrics ask conntrackd, so they are read only then). */
    listening: () => boolean;
    now: () => number;
  }) {}

  /** Compares the live role with the last one seen; records and announces a change. */
  check(): void {
    const state = this.deps.ha.vrrpState();
    const now = liveRoleOf(state);
    const last = this.last ?? this.deps.history.lastRole();
    this.last = now;
    if (last === null) return this.deps.history.saw(now);
    if (now === last) return;
    const detail = state === null ? 'keepalived runs no VRRP instance' : `keepalived reports ${state.toUpperCase()}`;
    this.deps.history.record({ from_role: last, to_role: now, cause: 'vrrp', detail }, now);
    for (const vhid of this.deps.vhids()) this.deps.emit({ type: 'role_changed', from: last, to: now, vhid });
  }

  private async metrics(): Promise<void> {
    if (!this.deps.listening()) return;
    const sync = (await this.deps.ha.status()).state_sync;
    if (!sync) return;
    this.deps.emit({ type: 'metrics', pfsync_in: sync.bytes_received, pfsync_out: sync.bytes_sent, state_count: sync.internal_entries, ts_ms: this.deps.now() });
  }

  start(): void {
    this.stop();
    this.check();
    const every = (ms: number, fn: () => unknown) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(WATCH_MS, () => this.check());
    every(METRICS_MS, () => void this.metrics().catch(() => undefined));
  }

  stop(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }
}
