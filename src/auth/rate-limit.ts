import type { Clock } from '../core/clock.js';

export interface LimitPolicy {
  maxAttempts: number;
  windowSeconds: number;
}

interface Counter {
  failures: number;
  windowStart: number;
  /** The key's own window (keys may follow different policies), so pruning needs no policy lookup. */
  windowMs: number;
  blockedUntil: number;
}

/**
 * Failure counters for credential endpoints, keyed e.g. `ip:10.0.0.1` and `user:alice`. A fixed window
 * starts at the first failure; reaching the maximum inside it blocks the key until the window ends.
 */
export class FailureLimiter {
  private readonly counters = new Map<string, Counter>();

  constructor(
    private readonly clock: Clock,
    /** The policy of one key (different keys may allow different numbers of failures). */
    private readonly policy: (key: string) => LimitPolicy,
  ) {}

  /** Seconds until the first blocked key unblocks, or 0 when none of the keys is blocked. */
  blockedFor(keys: readonly string[]): number {
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const counter = this.counters.get(key);
      if (counter && counter.blockedUntil > now) wait = Math.max(wait, (counter.blockedUntil - now) / 1000);
    }
    return wait;
  }

  /** Records a failure on every key; returns the keys that became blocked by it. */
  fail(keys: readonly string[]): string[] {
    const now = this.clock.now();
    const newlyBlocked: string[] = [];
    this.prune(now);
    for (const key of keys) {
      const { maxAttempts, windowSeconds } = this.policy(key);
      const windowMs = windowSeconds * 1000;
      let counter = this.counters.get(key);
      if (!counter || now - counter.windowStart >= windowMs) {
        counter = { failures: 0, windowStart: now, windowMs, blockedUntil: 0 };
        this.counters.set(key, counter);
      }
      counter.failures++;
      if (counter.failures >= maxAttempts && counter.blockedUntil <= now) {
        counter.blockedUntil = counter.windowStart + windowMs;
        newlyBlocked.push(key);
      }
    }
    return newlyBlocked;
  }

  succeed(keys: readonly string[]): void {
    for (const key of keys) this.counters.delete(key);
  }

  private prune(now: number): void {
    if (this.counters.size < 50_000) return;
    for (const [key, counter] of this.counters) {
      if (now - counter.windowStart >= counter.windowMs && counter.blockedUntil <= now) this.counters.delete(key);
    }
  }
}
