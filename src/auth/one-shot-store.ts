import type { Clock } from '../core/clock.js';
import { randomHex } from '../core/crypto.js';

/**
 * Single-use, short-lived secrets held in process memory only: WebSocket tickets, TOTP login challenges,
 * SSO state nonces and TOTP tickets. take() consumes the entry whether or not it has expired.
 */
export class OneShotStore<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** Stores value under a fresh 256-bit hex token and returns the token. */
  issue(value: T): string {
    this.prune();
    const token = randomHex(32);
    this.entries.set(token, { value, expiresAt: this.clock.now() + this.ttlMs });
    return token;
  }

  take(token: string | undefined): T | undefined {
    if (!token || !/^[0-9a-f]{64}$/.test(token)) return undefined;
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    this.entries.delete(token);
    return entry.expiresAt > this.clock.now() ? entry.value : undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  private prune(): void {
    if (this.entries.size < this.maxEntries) return;
    const now = this.clock.now();
    for (const [token, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(token);
    // Still full of live entries: drop the oldest rather than grow without bound.
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
