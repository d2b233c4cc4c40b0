import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { HubEvent } from '../../core/event-hub.js';
import { severityCode, type Severity } from '../../core/events.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { sendMail } from '../settings/smtp.js';
import { notificationOf, type Notification } from './notifications.js';
import { postWebhook, postWithRetries, withRetries } from './webhook.js';

export { RETRY_DELAYS_MS } from './webhook.js';

export interface NotifyRule {
  event: string;
  email: boolean;
  webhooks: string[];
  min_severity?: Severity;
  rate_limit_secs?: number;
}

export const DEFAULT_RATE_LIMIT_SECS = 300;

/** The channels one notification goes to. */
interface Channels {
  email: boolean;
  webhooks: Set<string>;
}

/** An open rate-limit window of one event key: what arrived after the notification that opened it. */
interface Window {
  suppressed: number;
  events: Set<string>;
  last: Notification;
  channels: Channels;
  seconds: number;
  /** When it closes, on the service clock (context.clock): tests move the clock instead of waiting. */
  closesAt: number;
}

/** How often open windows are checked for their end (the window itself is measured on the service clock). */
export const WINDOW_CHECK_MS = 1_000;

export interface NotifierSources {
  rules(): NotifyRule[];
  webhook(id: string): ConfigObject | undefined;
  webhookSecret(object: ConfigObject): string;
  smtp(): { settings: ConfigData; password: string | undefined };
}

/**
 * Notifications: every hub event that is a notification (notifications.ts) goes to the channels its rules name,
 * e-mail through the SMTP settings and signed webhooks. Per event key, the first notification goes out at once
 * and opens a window (rate_limit_secs); whatever follows with that key inside it is counted, and one summary
 * goes out when it closes (which opens the next window if there was something to summarise). A flapping
 * gateway therefore sends one notification and then at most one summary per window, not a storm. Windows are
 * measured on the service clock, so a test moves the clock across a window instead of racing the wall.
 */
export class Notifier {
  private readonly windows = new Map<string, Window>();
  private readonly deliveries = new Set<Promise<void>>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly context: AppContext, private readonly sources: NotifierSources) {}

  handle(event: HubEvent): void {
    if (this.stopped) return;
    const notification = notificationOf(event);
    if (!notification) return;
    const matching = this.sources.rules().filter((rule) => rule.event === notification.event
      && (!rule.min_severity || severityCode(notification.severity) <= severityCode(rule.min_severity)));
    if (matching.length === 0) return;
    const channels: Channels = { email: matching.some((rule) => rule.email), webhooks: new Set(matching.flatMap((rule) => rule.webhooks)) };
    const seconds = Math.max(...matching.map((rule) => rule.rate_limit_secs ?? DEFAULT_RATE_LIMIT_SECS));
    // A window whose end has passed is closed first (its summary out), whether or not the check has run yet.
    this.closeDueWindows();
    const open = this.windows.get(notification.key);
    if (open) {
      open.suppressed++;
      open.events.add(notification.event);
      open.last = notification;
      if (channels.email) open.channels.email = true;
      for (const id of channels.webhooks) open.channels.webhooks.add(id);
      return;
    }
    this.send(notification, channels, null);
    this.openWindow(notification, channels, seconds);
  }

  /** Sends one message to one webhook now (POST /notify/webhooks/{id}/test): answers the status, or throws. */
  async test(webhook: ConfigObject): Promise<number> {
    const body = JSON.stringify(this.body({ event: 'test' as never, key: 'test', severity: 'info', summary: 'Bulwark test notification', at: new Date(this.context.clock.now()).toISOString(), payload: {} }, null));
    return postWebhook(this.target(webhook), body, { 'x-bulwark-event': 'test', 'x-bulwark-delivery': randomUUID() });
  }

  /** Event keys inside a rate-limit window now. */
  openWindows(): number {
    return this.windows.size;
  }

  /** Deliveries still running (tests and shutdown wait on them). */
  async settled(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
  }

  /** Checks the windows every WINDOW_CHECK_MS. */
  start(): void {
    this.timer ??= setInterval(() => this.closeDueWindows(), WINDOW_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.windows.clear();
  }

  /** Closes every window whose end has come on the service clock (sending its summary); answers how many closed. */
  closeDueWindows(): number {
    const now = this.context.clock.now();
    const due = [...this.windows].filter(([, window]) => window.closesAt <= now).map(([key]) => key);
    for (const key of due) this.closeWindow(key);
    return due.length;
  }

  private openWindow(notification: Notification, channels: Channels, seconds: number): void {
    this.windows.set(notification.key, { suppressed: 0, events: new Set(), last: notification, channels: { email: false, webhooks: new Set() }, seconds, closesAt: this.context.clock.now() + seconds * 1000 });
  }

  private closeWindow(key: string): void {
    const window = this.windows.get(key);
    this.windows.delete(key);
    if (!window || window.suppressed === 0 || this.stopped) return;
    const summary = { count: window.suppressed, seconds: window.seconds, events: [...window.events] };
    this.send({ ...window.last, summary: `${window.suppressed} more ${[...window.events].join('/')} notification(s) for ${key} in ${window.seconds} s; latest: ${window.last.summary}` }, window.channels, summary);
    this.openWindow(window.last, window.channels, window.seconds);
  }

  private send(notification: Notification, channels: Channels, summary: { count: number; seconds: number; events: string[] } | null): void {
    if (channels.email) this.track(this.reportFailure(`e-mail for ${notification.event}`, () => withRetries(() => this.mail(notification, summary), () => this.stopped)));
    for (const id of channels.webhooks) {
      const webhook = this.sources.webhook(id);
      if (!webhook || webhook.data.enabled === false) continue;
      const body = JSON.stringify(this.body(notification, summary));
      const headers = { 'x-bulwark-event': notification.event, 'x-bulwark-delivery': randomUUID() };
      this.track(this.reportFailure(`webhook ${String(webhook.data.name)} for ${notification.event}`, () => postWithRetries(this.target(webhook), body, headers, () => this.stopped)));
    }
  }

  private body(notification: Notification, summary: { count: number; seconds: number; events: string[] } | null) {
    return {
      event: notification.event, key: notification.key, severity: notification.severity, summary: notification.summary,
      at: notification.at, appliance: hostname(), ...(summary ? { summarised: summary } : {}), payload: notification.payload,
    };
  }

  private target(webhook: ConfigObject) {
    return { url: String(webhook.data.url), secret: this.sources.webhookSecret(webhook), allowed_addresses: (webhook.data.allowed_addresses as string[] | undefined) ?? [] };
  }

  private async mail(notification: Notification, summary: { count: number } | null): Promise<void> {
    const { settings, password } = this.sources.smtp();
    if (!settings.enabled) return;
    const lines = [
      notification.summary, '',
      `Event: ${notification.event} (${notification.severity})`, `At: ${notification.at}`, `Appliance: ${hostname()}`,
      ...(summary ? [`Summarised: ${summary.count} further notification(s) with this key`] : []),
      '', JSON.stringify(notification.payload, null, 2),
    ];
    await sendMail(settings, password, { subject: `[Bulwark] ${notification.summary}`.slice(0, 200), text: lines.join('\n') });
  }

  /** The delivery with its retries (webhook.ts); what was not delivered in the end is logged. */
  private async reportFailure(what: string, attempt: () => Promise<string | null>): Promise<void> {
    const failure = await attempt();
    if (failure !== null) this.context.log.warn({ err: failure }, `notification not delivered: ${what}`);
  }

  private track(delivery: Promise<void>): void {
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
  }
}
