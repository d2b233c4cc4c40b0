/**
 * The per-account limit of diagnostics runs: at most `concurrent` at a time and `perWindow` started within a
 * sliding `windowMs`, per user (an API key counts as its owner, so many keys do not multiply it). Beyond either,
 * 429 with Retry-After; a run refused before it starts (400, 503) never takes a slot.
 */
import { tooManyRequests } from '../../core/errors.js';

export interface RunLimits {
  concurrent: number;
  perWindow: number;
  windowMs: number;
}

export const DEFAULT_RUN_LIMITS: RunLimits = { concurrent: 2, perWindow: 20, windowMs: 60_000 };

export class RunLimiter {
  private readonly running = new Map<string, number>();
  private readonly started = new Map<string, number[]>();

  constructor(
    private readonly limits: RunLimits = DEFAULT_RUN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a slot for `account` or throws 429; the returned function gives the slot back (once). */
  take(account: string): () => void {
    const now = this.now();
    const recent = (this.started.get(account) ?? []).filter((at) => now - at < this.limits.windowMs);
    const running = this.running.get(account) ?? 0;
    if (running >= this.limits.concurrent) {
      throw tooManyRequests(5, `at most ${this.limits.concurrent} diagnostics may run at a time per account: wait for one to end`);
    }
    if (recent.length >= this.limits.perWindow) {
      throw tooManyRequests((recent[0] + this.limits.windowMs - now) / 1000, `at most ${this.limits.perWindow} diagnostics per ${this.limits.windowMs / 1000} s per account`);
    }
    recent.push(now);
    this.started.set(account, recent);
    this.running.set(account, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.running.get(account) ?? 1) - 1;
      if (left > 0) this.running.set(account, left);
      else this.running.delete(account);
    };
  }
}
