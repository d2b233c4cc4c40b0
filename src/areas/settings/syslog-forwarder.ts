import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import type { HubEvent } from '../../core/event-hub.js';
import type { ConfigData } from '../../store/config-store.js';
import { resolveGuardedHost } from '../../net/guarded-host.js';
import { formatSyslog, SyslogConnection, type SyslogTarget } from '../../net/syslog.js';
import { appLevelPasses, categoryOf, SYSLOG_CATEGORIES, syslogMessageOf, type SyslogCategory } from './syslog-messages.js';

export interface SyslogCounters {
  sent: number;
  dropped: number;
  errors: number;
  connected: boolean;
  last_error: string | null;
  updated_at: string;
}

const FLAG: Record<SyslogCategory, string> = { pf: 'pf_enabled', ids: 'ids_enabled', audit: 'audit_enabled', app: 'app_enabled', daemon: 'daemon_enabled' };
type CounterKey = SyslogCategory | 'test';

/**
 * Remote syslog: subscribes to every event on the hub and sends the ones of the enabled categories, one message
 * per event, over the configured transport (net/syslog.ts). Counters are kept per category and in total; a
 * change of /settings/syslog replaces the connection (its queue goes with the old one, counted as dropped).
 * Sending never logs through the app logger: that log is itself a category, and a failure would feed itself.
 */
export class SyslogForwarder {
  private connection: SyslogConnection | null = null;
  private settings: ConfigData = {};
  private readonly counters = new Map<CounterKey | 'all', SyslogCounters>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly context: AppContext, private readonly read: () => ConfigData) {
    for (const key of ['all', ...SYSLOG_CATEGORIES, 'test'] as const) this.counters.set(key, this.fresh());
  }

  start(): void {
    this.reconfigure();
    this.unsubscribe = this.context.events.on('*', (event) => this.forward(event));
  }

  stop(): void {
    this.unsubscribe?.();
    this.connection?.close();
    this.connection = null;
  }

  /** Reads the settings again and replaces the connection (called after every change of /settings/syslog). */
  reconfigure(): void {
    const previous = this.connection;
    this.connection = null;
    if (previous) {
      for (let i = previous.queued(); i > 0; i--) this.count('all', (c) => c.dropped++);
      previous.close();
    }
    this.settings = this.read();
    const appLog = Boolean(this.settings.enabled && this.settings.app_enabled);
    this.context.logFloor(appLog ? String(this.settings.app_min_level ?? 'info') : null);
    if (!this.settings.enabled || !String(this.settings.host ?? '').trim()) {
      for (const counters of this.counters.values()) counters.connected = false;
      return;
    }
    const target = this.settings as unknown as SyslogTarget & { allowed_addresses: string[]; queue_limit: number };
    // The category a message belongs to travels with it, so drops and sends are counted where they belong.
    this.connection = new SyslogConnection(target, async () => (await resolveGuardedHost(target.host, target.allowed_addresses ?? [])).address, Number(target.queue_limit ?? 10_000), {
      sent: (key) => this.count(key as CounterKey, (c) => c.sent++),
      dropped: (key) => this.count(key as CounterKey, (c) => c.dropped++),
      failed: (message) => this.countAll((c) => {
        c.errors++;
        c.last_error = message;
      }),
      connected: (connected) => this.countAll((c) => {
        c.connected = connected;
        if (connected) c.last_error = null;
      }),
    });
  }

  /** One event: forwarded when its category is enabled (and, for the app log, at or above app_min_level). */
  forward(event: HubEvent): void {
    const connection = this.connection;
    if (!connection) return;
    const category = categoryOf(event);
    if (!category || !this.settings[FLAG[category]]) return;
    if (category === 'app' && !appLevelPasses(Number(event.payload.level), String(this.settings.app_min_level ?? 'info') as 'info')) return;
    connection.send(category, formatSyslog(this.settings as unknown as SyslogTarget, syslogMessageOf(event, category)));
  }

  /** Counts a test message sent outside the long-lived connection. */
  countTest(outcome: { ok: true } | { ok: false; error: string }): void {
    if (outcome.ok) {
      this.count('test', (c) => {
        c.sent++;
        c.connected = true;
        c.last_error = null;
      });
    } else {
      this.count('test', (c) => {
        c.errors++;
        c.connected = false;
        c.last_error = outcome.error;
      });
    }
  }

  /** The status rows: the process total first (the reference's one row), then one row per category. */
  status(): ({ process: string; category: string; queued: number } & SyslogCounters)[] {
    return [...this.counters].map(([category, counters]) => ({
      process: 'bulwark-api', category, ...counters,
      updated_at: this.updatedAt.has(counters) ? isoTime(this.updatedAt.get(counters)!) : counters.updated_at,
      queued: this.connection?.queued(category === 'all' ? undefined : category) ?? 0,
    }));
  }

  private fresh(): SyslogCounters {
    return { sent: 0, dropped: 0, errors: 0, connected: false, last_error: null, updated_at: isoTime(this.context.clock.now()) };
  }

  private count(key: CounterKey | 'all', change: (counters: SyslogCounters) => void): void {
    // Called for every message: the time is formatted when the status is read, not here.
    const now = this.context.clock.now();
    for (const target of key === 'all' ? [this.counters.get('all')] : [this.counters.get(key), this.counters.get('all')]) {
      if (!target) continue;
      change(target);
      this.updatedAt.set(target, now);
    }
  }

  private readonly updatedAt = new WeakMap<SyslogCounters, number>();

  private countAll(change: (counters: SyslogCounters) => void): void {
    for (const [key, counters] of this.counters) {
      if (key === 'test') continue;
      change(counters);
      this.updatedAt.set(counters, this.context.clock.now());
    }
  }
}
