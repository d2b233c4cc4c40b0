import { apiUrl, type ApiClient } from '../api/client';
import type { Pending } from '../api/types';
import { messageOf } from '../components/error-alert';

export interface PendingListener {
  report(pending: Pending): void;
  error(message: string | null): void;
  /** The commit-confirm status may have changed: a configuration event arrived, or a poll is due. */
  configMayHaveChanged(): void;
}

/** While the stream is down: how often the report is read, and when the stream is tried again. */
const POLL_MS = 10_000;
const RETRY_MS = [5_000, 15_000, 60_000];
/** Events the server sends on the same stream, named by topic (applied, saved, commit-confirm). */
const CONFIG_EVENTS = ['config.applied', 'config.saved', 'config.commit_confirm'];

/**
 * What is stored but not applied, live: `GET /pending/stream` (Server-Sent Events) sends the report at once and
 * whenever it changes. EventSource cannot send a header, so it authenticates with a single-use ticket
 * (`POST /auth/ws-ticket`); for the same reason its own reconnect (with the spent ticket) is not used: on any
 * error the stream is closed, the report is polled (`GET /pending`, every 10 s) and a new stream with a new
 * ticket is tried after 5 s, 15 s, then every minute.
 */
export class PendingFeed {
  private source: EventSource | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly api: ApiClient,
    private readonly listener: PendingListener,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.source?.close();
    this.source = null;
    this.stopPolling();
    if (this.retry) clearTimeout(this.retry);
  }

  /** After a write of this console: the stream reports it by itself; without one, read the report now. */
  writeMade(): void {
    // Stopped (signed out, or the server ended the stream): the credential would only be refused.
    if (!this.stopped && !this.live) void this.refresh();
  }

  private get live(): boolean {
    return this.source?.readyState === EventSource.OPEN;
  }

  private async connect(): Promise<void> {
    let ticket: string;
    try {
      ticket = await this.api.ticket();
    } catch {
      this.fallBack();
      return;
    }
    if (this.stopped) return;
    const source = new EventSource(apiUrl('/pending/stream', { ticket }));
    this.source = source;
    source.onopen = () => {
      this.failures = 0;
      this.stopPolling();
    };
    source.onmessage = (event: MessageEvent<string>) => {
      this.listener.report(JSON.parse(event.data) as Pending);
      this.listener.error(null);
    };
    for (const name of CONFIG_EVENTS) source.addEventListener(name, () => this.listener.configMayHaveChanged());
    // The server ends the stream when its credential lost the permission (signed out, disabled, demoted):
    // polling or reconnecting with that credential would only be refused.
    source.addEventListener('end', () => {
      if (this.source !== source) return;
      this.stop();
    });
    source.onerror = () => {
      if (this.source !== source) return;
      source.close();
      this.source = null;
      this.fallBack();
    };
  }

  private fallBack(): void {
    if (this.stopped) return;
    if (!this.poll) {
      const pollOnce = () => {
        void this.refresh();
        this.listener.configMayHaveChanged();
      };
      pollOnce();
      this.poll = setInterval(pollOnce, POLL_MS);
    }
    const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)];
    this.failures++;
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }

  private async refresh(): Promise<void> {
    try {
      const pending = await this.api.get<Pending>('/pending');
      if (this.stopped) return;
      this.listener.report(pending);
      this.listener.error(null);
    } catch (failure) {
      if (!this.stopped) this.listener.error(messageOf(failure));
    }
  }
}
