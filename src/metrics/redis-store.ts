import { Redis } from 'ioredis';
import type { Point } from './ring-buffer.js';
import type { StoredPoint } from './metrics-engine.js';
import type { TierName } from './tiers.js';

export type StoreStatus = 'connected' | 'disconnected' | 'disabled';

export interface RedisStoreOptions {
  url: string;
  password?: string;
  retentionMinutes: number;
  /** Key namespace; an HA pair shares one so either node serves the same history. */
  prefix?: string;
}

const member = (p: Point) => `${p.t}|${p.v}|${p.min}|${p.max}`;
function parseMember(text: string): Point | null {
  const [t, v, min, max] = text.split('|').map(Number);
  return Number.isFinite(t) && Number.isFinite(v) ? { t, v, min: Number.isFinite(min) ? min : v, max: Number.isFinite(max) ? max : v } : null;
}

/**
 * The external Redis-protocol metrics store (Valkey or Redis): one sorted set per series and tier, scored by
 * time, written in pipelined batches and trimmed to the retention on every batch.
 */
export class RedisMetricsStore {
  private readonly client: Redis;
  readonly prefix: string;
  private retentionSeconds: number;
  lastError: string | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? 'bulwark:metrics:';
    this.retentionSeconds = options.retentionMinutes * 60;
    this.client = new Redis(options.url, {
      ...(options.password ? { password: options.password } : {}),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 3000,
      retryStrategy: (attempt) => Math.min(attempt * 500, 5000),
      reconnectOnError: () => false,
    });
    // connection errors are reported through status; without a listener ioredis would log them itself
    this.client.on('error', (error: Error) => {
      this.lastError = error.message;
    });
    this.client.connect().catch((error: Error) => {
      this.lastError = error.message;
    });
  }

  get status(): StoreStatus {
    return this.client.status === 'ready' ? 'connected' : 'disconnected';
  }

  /** Waits until the connection is ready (or fails), for callers that need an answer now. */
  async ready(timeoutMs = 3000): Promise<boolean> {
    if (this.client.status === 'ready') return true;
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        resolve(value);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(this.client.status === 'ready'), timeoutMs);
      this.client.once('ready', onReady);
    });
  }

  key(series: string, tier: TierName): string {
    return `${this.prefix}${tier}:${series}`;
  }

  /** Writes a batch in one pipeline; each point replaces any earlier one at the same time. */
  async write(points: StoredPoint[], nowSeconds: number): Promise<void> {
    if (points.length === 0) return;
    const pipeline = this.client.pipeline();
    const keys = new Set<string>();
    const names = new Set<string>();
    for (const point of points) {
      const key = this.key(point.series, point.tier);
      keys.add(key);
      names.add(point.series);
      pipeline.zremrangebyscore(key, point.t, point.t);
      pipeline.zadd(key, point.t, member(point));
    }
    const cutoff = nowSeconds - this.retentionSeconds;
    for (const key of keys) {
      pipeline.zremrangebyscore(key, '-inf', `(${cutoff}`);
      pipeline.expire(key, this.retentionSeconds + 3600);
    }
    pipeline.sadd(`${this.prefix}series`, ...names);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
    this.lastError = undefined;
  }

  async range(series: string, tier: TierName, from: number, to: number): Promise<Point[]> {
    const members = await this.client.zrangebyscore(this.key(series, tier), from, to);
    return members.map(parseMember).filter((p): p is Point => p !== null);
  }

  async seriesNames(): Promise<string[]> {
    return (await this.client.smembers(`${this.prefix}series`)).sort();
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}
