import type { EventHub } from './event-hub.js';
import { EVENT_TOPICS } from './events.js';

const RANK: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * The stream the API's logger writes to, in front of the one that writes standard output and logs/api.log: while
 * syslog's application category is forwarded it announces every line on the hub as `app.log`, and the logger's
 * level may then be lower than --log-level (app_min_level debug): lines below --log-level are announced but not
 * passed on, so standard output and the local file keep --log-level. Otherwise lines pass through untouched.
 * No hub listener may log through this logger for a line it is handed (syslog counts its failures instead).
 */
export class AppLogTap {
  private active = false;

  constructor(
    private readonly next: { write(chunk: string): unknown },
    private readonly configured: string,
    private readonly events: EventHub,
  ) {}

  write(chunk: string): boolean {
    if (!this.active) {
      this.next.write(chunk);
      return true;
    }
    let record: Record<string, unknown> | undefined;
    try {
      record = JSON.parse(chunk) as Record<string, unknown>;
    } catch {
      // not JSON: passed on, not announced
    }
    if (!record || Number(record.level) >= (RANK[this.configured] ?? 0)) this.next.write(chunk);
    if (record) this.events.emit(EVENT_TOPICS.appLog, record);
    return true;
  }

  /** Starts (a floor) or stops (null) announcing; answers the level the logger must have for the floor's lines. */
  levelFor(floor: string | null): string {
    this.active = floor !== null;
    return floor && RANK[floor] < RANK[this.configured] ? floor : this.configured;
  }
}
