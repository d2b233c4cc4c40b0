import { statfs } from 'node:fs/promises';
import type { AppContext } from '../../context.js';
import { EVENT_TOPICS } from '../../core/events.js';

/** How full the data directory's file system may get before `disk.nearly_full` is announced, and how often it is looked at. */
export const DISK_THRESHOLD_PCT = 90;
/** Below this again, the next crossing of the threshold is announced anew (a file system hovering at 90 % does not flap). */
export const DISK_REARM_PCT = 85;
export const DISK_CHECK_MS = 5 * 60_000;

/**
 * Watches the data directory's file system: `disk.nearly_full` is announced once when its use reaches the
 * threshold, not at every check while it stays there; once it has fallen below DISK_REARM_PCT the next rise is
 * announced again. Checked at start and every DISK_CHECK_MS.
 */
export class DiskSpaceWatch {
  private announced = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly context: AppContext) {}

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), DISK_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look; answers the use in percent (null when the file system cannot be read). */
  async check(): Promise<number | null> {
    const path = this.context.config.dataDir;
    const stats = await statfs(path).catch(() => null);
    if (!stats || stats.blocks === 0) return null;
    const usedPct = Math.round((1 - stats.bavail / stats.blocks) * 1000) / 10;
    if (usedPct >= DISK_THRESHOLD_PCT && !this.announced) {
      this.announced = true;
      this.context.events.emit(EVENT_TOPICS.diskNearlyFull, { path, used_pct: usedPct, threshold_pct: DISK_THRESHOLD_PCT });
    } else if (usedPct < DISK_REARM_PCT) {
      this.announced = false;
    }
    return usedPct;
  }
}
