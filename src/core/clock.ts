/** Every TTL reads this clock so tests can move time instead of waiting for it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

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
}

export const isoTime = (milliseconds: number): string => new Date(milliseconds).toISOString();
