/**
 * API request counts and latencies for the Prometheus endpoint, recorded by app.ts's onResponse hook. Keyed by
 * the route's template (`/api/v1/rules/{id}`), never the raw URL, so ids in paths cannot grow the label space;
 * requests no route matched share one key.
 */

/** Upper bounds of the latency buckets, in seconds. */
export const LATENCY_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
export const UNMATCHED_ROUTE = 'unmatched';

interface Latency {
  buckets: number[];
  sum: number;
  count: number;
}

export class RequestMetrics {
  /** `method route status` → count. */
  private readonly counts = new Map<string, { method: string; route: string; status: string; count: number }>();
  /** `method route` → latency histogram. */
  private readonly latencies = new Map<string, { method: string; route: string; latency: Latency }>();

  record(method: string, route: string | undefined, status: number, milliseconds: number): void {
    const template = route ?? UNMATCHED_ROUTE;
    const countKey = `${method} ${template} ${status}`;
    const counted = this.counts.get(countKey) ?? { method, route: template, status: String(status), count: 0 };
    counted.count++;
    this.counts.set(countKey, counted);
    const latencyKey = `${method} ${template}`;
    const timed = this.latencies.get(latencyKey) ?? { method, route: template, latency: { buckets: LATENCY_BOUNDS.map(() => 0), sum: 0, count: 0 } };
    const seconds = Math.max(0, milliseconds) / 1000;
    LATENCY_BOUNDS.forEach((bound, index) => {
      if (seconds <= bound) timed.latency.buckets[index]++;
    });
    timed.latency.sum += seconds;
    timed.latency.count++;
    this.latencies.set(latencyKey, timed);
  }

  requestCounts() {
    return [...this.counts.values()];
  }

  latencyHistograms() {
    return [...this.latencies.values()].map(({ method, route, latency }) => ({
      labels: { method, route }, bounds: LATENCY_BOUNDS, cumulative: latency.buckets, sum: latency.sum, count: latency.count,
    }));
  }
}
