/**
 * Producers elsewhere in the service publish live events here; the dashboard and the SSE streams consume them.
 * The IDS area publishes alerts; DNS `query`/`block` events arrive from the resolver's log. Nothing here is persisted.
 */
export interface DnsEvent {
  type: 'block' | 'query';
  data: Record<string, unknown>;
}

export class DnsFeed {
  private readonly listeners = new Set<(event: DnsEvent) => void>();
  private readonly recentBlocks: DnsEvent[] = [];

  publish(event: DnsEvent): void {
    if (event.type === 'block') {
      this.recentBlocks.push(event);
      if (this.recentBlocks.length > 50) this.recentBlocks.shift();
    }
    for (const listener of this.listeners) listener(event);
  }

  /** The last ≤50 block events (a new stream starts with them), then every live event. */
  subscribe(listener: (event: DnsEvent) => void): () => void {
    for (const event of this.recentBlocks) listener(event);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}

export interface IdsAlert {
  severity: number | string;
  signature_msg: string;
  src_ip: string;
  dst_ip: string;
  protocol: string;
  timestamp: string;
}

/** IDS alerts since the previous dashboard tick (the frame's alert delta) plus a running total. */
export class AlertFeed {
  private pending: IdsAlert[] = [];
  total = 0;

  publish(alert: IdsAlert): void {
    this.total++;
    this.pending.push(alert);
    if (this.pending.length > 200) this.pending.shift();
  }

  takeDelta(): { new_alerts: number; alerts_total: number; recent_alerts: IdsAlert[] } {
    const recent = this.pending;
    this.pending = [];
    return { new_alerts: recent.length, alerts_total: this.total, recent_alerts: recent.slice(-20) };
  }
}

/** An assertion whose last result says it does not hold (areas/assertions), as the dashboard shows it. */
export interface FailingAssertion {
  id: string;
  name: string;
  outcome: string;
  expect: string;
  decided_by: string;
  detail: string;
  checked_at: string;
}

export interface LiveFeeds {
  dns: DnsFeed;
  alerts: AlertFeed;
  /** The assertions failing now (the assertions area sets the source where areas are wired). */
  assertions: () => FailingAssertion[];
}

/** The feeds of one app: the producing areas and the dashboard are handed the same ones where areas are wired. */
export const newLiveFeeds = (): LiveFeeds => ({ dns: new DnsFeed(), alerts: new AlertFeed(), assertions: () => [] });
