/**
 * At most `limit` items per wall-clock second; the rest are counted as dropped. Bounds the events read from a
 * daemon's log (a resolver can log thousands of queries a second) before they reach live streams.
 */
export class PerSecondBudget {
  private second = -1;
  private used = 0;
  /** Items refused since this budget was created. */
  dropped = 0;

  constructor(
    private readonly limit: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when one more item fits into the current second. */
  take(): boolean {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.used = 0;
    }
    if (this.used >= this.limit) {
      this.dropped++;
      return false;
    }
    this.used++;
    return true;
  }
}
