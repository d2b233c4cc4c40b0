/** Every TTL reads this clock so tests can move time instead of waiting for it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits; a test clock moves its time forward instead of waiting (see pause). */
  sleep?(milliseconds: number): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Waits `milliseconds` on the given clock: real time, or a test clock's own time when it has a sleep. */
export function pause(clock: Clock, milliseconds: number): Promise<void> {
  if (clock.sleep) return clock.sleep(milliseconds);
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** A clock that only moves when a test moves it. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(milliseconds: number): void {
    this.current += milliseconds;
  }
  set(milliseconds: number): void {
    this.current = milliseconds;
  }
  /** Time passes at once: a test sees the wait on the clock without spending it. */
  async sleep(milliseconds: number): Promise<void> {
    this.current += milliseconds;
  }
}

export const isoTime = (milliseconds: number): string => new Date(milliseconds).toISOString();
