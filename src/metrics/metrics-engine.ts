import type { Db } from '../store/database.js';
import { PointRing, type Point } from './ring-buffer.js';
import { TIERS, type Retention, type TierName } from './tiers.js';

export interface StoredPoint extends Point {
  series: string;
  tier: TierName;
}

interface Bucket {
  t: number;
  sum: number;
  n: number;
  min: number;
  max: number;
}

interface Series {
  rings: PointRing[];
  open: (Bucket | null)[];
}

/** Tiers written to the external store (its retention is minutes, so hour and day stay local). */
const EXTERNAL_TIERS: ReadonlySet<TierName> = new Set(['second', 'minute']);
const OUTBOX_LIMIT = 50_000;
const BYTES_PER_POINT = 32;

/**
 * Ring buffers at 1 s, 1 min, 1 h and 1 day per series. A sample lands in the open bucket of every tier; when
 * a bucket's period ends it is closed into its ring (mean, min, max), queued for SQLite and, for the short
 * tiers, for the external store. Periodic `persist()` writes closed points so a restart keeps history.
 */
export class MetricsEngine {
  private readonly series = new Map<string, Series>();
  private dirty: StoredPoint[] = [];
  private outbox: StoredPoint[] = [];
  droppedFromOutbox = 0;

  constructor(
    private readonly db: Db,
    private retention: Retention,
  ) {}

  names(): string[] {
    return [...this.series.keys()].sort();
  }

  has(name: string): boolean {
    return this.series.has(name);
  }

  getRetention(): Retention {
    return { ...this.retention };
  }

  setRetention(retention: Retention): void {
    this.retention = retention;
    for (const entry of this.series.values()) TIERS.forEach((tier, i) => entry.rings[i].resize(retention[tier.name]));
  }

  private entry(name: string): Series {
    let entry = this.series.get(name);
    if (!entry) {
      entry = { rings: TIERS.map((tier) => new PointRing(this.retention[tier.name])), open: TIERS.map(() => null) };
      this.series.set(name, entry);
    }
    return entry;
  }

  /** Records one sample per series at `seconds` (unix). */
  record(seconds: number, values: Record<string, number>): void {
    const t = Math.floor(seconds);
    for (const [name, raw] of Object.entries(values)) {
      if (!Number.isFinite(raw)) continue;
      const entry = this.entry(name);
      TIERS.forEach((tier, i) => {
        const bucketStart = t - (t % tier.seconds);
        let bucket = entry.open[i];
        if (bucket && bucket.t !== bucketStart) {
          this.close(name, tier.name, entry.rings[i], bucket);
          bucket = null;
        }
        if (!bucket) entry.open[i] = { t: bucketStart, sum: raw, n: 1, min: raw, max: raw };
        else {
          bucket.sum += raw;
          bucket.n++;
          if (raw < bucket.min) bucket.min = raw;
          if (raw > bucket.max) bucket.max = raw;
        }
      });
    }
  }

  private close(series: string, tier: TierName, ring: PointRing, bucket: Bucket): void {
    const point: StoredPoint = { series, tier, t: bucket.t, v: bucket.sum / bucket.n, min: bucket.min, max: bucket.max };
    ring.push(point);
    this.dirty.push(point);
    if (EXTERNAL_TIERS.has(tier)) {
      this.outbox.push(point);
      if (this.outbox.length > OUTBOX_LIMIT) {
        const excess = this.outbox.length - OUTBOX_LIMIT;
        this.outbox.splice(0, excess);
        this.droppedFromOutbox += excess;
      }
    }
  }

  private openPoint(entry: Series, tierIndex: number): Point | null {
    const bucket = entry.open[tierIndex];
    return bucket ? { t: bucket.t, v: bucket.sum / bucket.n, min: bucket.min, max: bucket.max } : null;
  }

  /** Points of one series and tier in [from, to] (unix seconds), including the still-open bucket. */
  query(name: string, tier: TierName, from: number, to: number): Point[] {
    const entry = this.series.get(name);
    if (!entry) return [];
    const index = TIERS.findIndex((t) => t.name === tier);
    const points = entry.rings[index].range(from, to);
    const open = this.openPoint(entry, index);
    if (open && open.t >= from && open.t <= to && (points.length === 0 || points[points.length - 1].t < open.t)) points.push(open);
    return points;
  }

  /** The newest value of a series (the open 1 s bucket), if any. */
  latest(name: string): number | undefined {
    const entry = this.series.get(name);
    return entry ? this.openPoint(entry, 0)?.v ?? entry.rings[0].last(1)[0]?.v : undefined;
  }

  /** Entries held in the 1 s tier (the longest series). */
  secondEntries(): number {
    let most = 0;
    for (const entry of this.series.values()) most = Math.max(most, entry.rings[0].size);
    return most;
  }

  /** Bytes the rings are sized for. */
  capacityBytes(): number {
    const perSeries = TIERS.reduce((sum, tier) => sum + this.retention[tier.name], 0) * BYTES_PER_POINT;
    return perSeries * Math.max(1, this.series.size);
  }

  /** Takes the queued points for the external store. */
  takeOutbox(): StoredPoint[] {
    const out = this.outbox;
    this.outbox = [];
    return out;
  }

  /** Puts points back at the head of the queue after a failed write (bounded like the queue itself). */
  requeue(points: StoredPoint[]): void {
    this.outbox = [...points, ...this.outbox].slice(-OUTBOX_LIMIT);
  }

  get outboxDepth(): number {
    return this.outbox.length;
  }

  /** Writes closed points (and, when `includeOpen`, the open buckets) to SQLite and drops expired rows. */
  persist(nowSeconds: number, includeOpen = false): number {
    const points = this.dirty;
    this.dirty = [];
    if (includeOpen) {
      for (const [name, entry] of this.series) {
        TIERS.forEach((tier, i) => {
          const open = this.openPoint(entry, i);
          if (open) points.push({ series: name, tier: tier.name, ...open });
        });
      }
    }
    const upsert = this.db.prepare('INSERT OR REPLACE INTO metric_points (series, tier, t, v, min, max) VALUES (?, ?, ?, ?, ?, ?)');
    const prune = this.db.prepare('DELETE FROM metric_points WHERE tier = ? AND t < ?');
    this.db.transaction(() => {
      for (const p of points) upsert.run(p.series, p.tier, p.t, p.v, p.min, p.max);
      for (const tier of TIERS) prune.run(tier.name, nowSeconds - this.retention[tier.name] * tier.seconds);
    })();
    return points.length;
  }

  /** Reloads persisted points newer than each tier's retention. */
  load(nowSeconds: number): number {
    const select = this.db.prepare('SELECT series, t, v, min, max FROM metric_points WHERE tier = ? AND t >= ? ORDER BY t');
    let loaded = 0;
    TIERS.forEach((tier, i) => {
      const rows = select.all(tier.name, nowSeconds - this.retention[tier.name] * tier.seconds) as (Point & { series: string })[];
      for (const row of rows) {
        this.entry(row.series).rings[i].push(row);
        loaded++;
      }
    });
    return loaded;
  }
}
