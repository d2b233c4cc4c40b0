/**
 * Dynamic DNS polling: every enabled record is resolved (and pushed when its address changed) every
 * `poll_interval_secs` of /ddns/config, on the service clock. Production ticks every few seconds; tests move the
 * injected clock and call tick(). A poll never overlaps the next one; records are updated one after another.
 */
import type { Clock } from '../../core/clock.js';
import type { ConfigObject } from '../../store/config-store.js';

const TICK_MS = 5_000;

export interface DdnsTarget {
  records(): readonly ConfigObject[];
  pollIntervalSecs(): number;
  updateRecord(id: string): Promise<{ ok: boolean; message: string }>;
}

export class DdnsPoller {
  private lastPoll: number;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<number> | undefined;

  constructor(private readonly clock: Clock, private readonly target: DdnsTarget) {
    // The first poll is one interval after start: an appliance that restarts does not hit the provider at once.
    this.lastPoll = clock.now();
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Polls when the interval has elapsed since the last poll; answers how many records were updated (0 when not due). */
  tick(): Promise<number> {
    this.polling ??= this.pollIfDue().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pollIfDue(): Promise<number> {
    const now = this.clock.now();
    if (now - this.lastPoll < this.target.pollIntervalSecs() * 1000) return 0;
    this.lastPoll = now;
    let polled = 0;
    for (const record of this.target.records()) {
      if (record.data.enabled === false) continue;
      // updateRecord records its own outcome (last_status, last_error); one failing record does not stop the others.
      await this.target.updateRecord(record.id).catch(() => undefined);
      polled++;
    }
    return polled;
  }
}
