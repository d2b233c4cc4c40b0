import { Cron } from 'croner';
import type { AppContext } from '../../context.js';
import type { BlocklistDownloads } from './blocklist-downloads.js';

/** The executor of the blocklist schedule: refreshes every enabled source on its cron and, if asked, at boot. */
export class ScheduledBlocklistRefresh {
  private timers: NodeJS.Timeout[] = [];
  private nextScheduledRun: number | null = null;

  constructor(
    private readonly context: AppContext,
    private readonly downloads: BlocklistDownloads,
  ) {}

  start(): void {
    const tick = () => {
      const schedule = this.downloads.schedule();
      if (!schedule.enabled) {
        this.nextScheduledRun = null;
        return;
      }
      const now = this.context.clock.now();
      if (this.nextScheduledRun === null) {
        this.nextScheduledRun = nextRun(schedule.cron, now);
        return;
      }
      if (now >= this.nextScheduledRun) {
        this.nextScheduledRun = nextRun(schedule.cron, now);
        this.downloads.refreshAll().catch((error) => this.context.log.warn({ err: error }, 'scheduled blocklist refresh failed'));
      }
    };
    const interval = setInterval(tick, 60_000);
    interval.unref();
    this.timers.push(interval);
    const boot = setTimeout(() => {
      const schedule = this.downloads.schedule();
      if (schedule.enabled && schedule.on_boot) this.downloads.refreshAll().catch((error) => this.context.log.warn({ err: error }, 'boot blocklist refresh failed'));
    }, 15_000);
    boot.unref();
    this.timers.push(boot);
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }
}

function nextRun(expression: string, now: number): number | null {
  try {
    return new Cron(expression, { paused: true }).nextRun(new Date(now))?.getTime() ?? null;
  } catch {
    return null;
  }
}
