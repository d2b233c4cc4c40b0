import type { Clock } from '../core/clock.js';

export interface LimitPolicy {
  maxAttempts: number;
  windowSeconds: number;
  /**
   * What reaching the maximum does: `block` refuses the key until its window ends; `slow` only marks it as
   * under attack (see slowed), for counters anyone can drive up, such as one username's from every address.
   */
  onLimit?: 'block' | 'slow';
}

interface Counter {
  failures: number;
  windowStart: number;
  /** The key's own window (keys may follow different policies), so pruning needs no policy lookup. */
  windowMs: number;
  blockedUntil: number;
  slowedUntil: number;
}

/**
 * Failure counters for credential endpoints, keyed e.g. `ip:10.0.0.1` and `user:alice`. A fixed window
 * starts at the first failure; reaching the maximum inside it blocks the key until the window ends, or, for a
 * `slow` key, marks it as slowed until then.
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

  /** The `slow` keys among these that reached their maximum inside their current window. */
  slowed(keys: readonly string[]): string[] {
    const now = this.clock.now();
    return keys.filter((key) => {
      const counter = this.counters.get(key);
      return counter !== undefined && counter.slowedUntil > now;
    });
  }

  /** Records a failure on every key; returns the keys that became blocked (or slowed) by it. */
  fail(keys: readonly string[]): string[] {
    const now = this.clock.now();
    const newlyBlocked: string[] = [];
    this.prune(now);
    for (const key of keys) {
      const { maxAttempts, windowSeconds, onLimit = 'block' } = this.policy(key);
      const windowMs = windowSeconds * 1000;
      let counter = this.counters.get(key);
      if (!counter || now - counter.windowStart >= windowMs) {
        counter = { failures: 0, windowStart: now, windowMs, blockedUntil: 0, slowedUntil: 0 };
        this.counters.set(key, counter);
      }
      counter.failures++;
      const until = onLimit === 'slow' ? 'slowedUntil' : 'blockedUntil';
      if (counter.failures >= maxAttempts && counter[until] <= now) {
        counter[until] = counter.windowStart + windowMs;
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
      if (now - counter.windowStart >= counter.windowMs && counter.blockedUntil <= now && counter.slowedUntil <= now) this.counters.delete(key);
    }
  }
}
