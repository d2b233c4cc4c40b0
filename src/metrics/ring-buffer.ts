/** One aggregated sample: bucket start (unix seconds), mean, minimum and maximum. */
export interface Point {
  t: number;
  v: number;
  min: number;
  max: number;
}

/** Arrays start this small and double as points arrive, up to the capacity. */
const FIRST_ROOM = 8;

/**
 * Fixed-capacity ring of points in time order, on typed arrays (32 bytes a point, no per-point objects). The
 * arrays grow with the points held rather than being allocated at capacity: a series sampled once a minute
 * (a rule's hit counter) never fills its second tier, and 20,000 such series at full capacity took 3.9 GB.
 */
export class PointRing {
  private t = new Float64Array(0);
  private v = new Float64Array(0);
  private lo = new Float64Array(0);
  private hi = new Float64Array(0);
  /** Points the arrays hold room for; the ring wraps only once this is the capacity. */
  private room = 0;
  private head = 0; // index of the oldest point
  size = 0;

  constructor(public capacity: number) {}

  push(point: Point): void {
    if (this.capacity === 0) return;
    // a point for the same bucket as the newest replaces it (e.g. reloaded from persistence)
    if (this.size > 0 && this.t[this.index(this.size - 1)] === point.t) {
      this.write(this.index(this.size - 1), point);
      return;
    }
    if (this.size > 0 && point.t < this.t[this.index(this.size - 1)]) return; // out of order: ignore
    if (this.size < this.capacity) {
      if (this.size === this.room) this.grow();
      this.write(this.index(this.size), point);
      this.size++;
    } else {
      this.write(this.head, point);
      this.head = (this.head + 1) % this.room;
    }
  }

  /** Doubles the room (head is 0 until the ring is full, so the points are a prefix). */
  private grow(): void {
    const room = Math.min(this.capacity, Math.max(FIRST_ROOM, this.room * 2));
    const larger = (old: Float64Array) => {
      const next = new Float64Array(room);
      next.set(old.subarray(0, this.size));
      return next;
    };
    this.t = larger(this.t);
    this.v = larger(this.v);
    this.lo = larger(this.lo);
    this.hi = larger(this.hi);
    this.room = room;
  }

  /** Points with from <= t <= to, oldest first. */
  range(from: number, to: number): Point[] {
    const out: Point[] = [];
    for (let i = 0; i < this.size; i++) {
      const at = this.index(i);
      const t = this.t[at];
      if (t >= from && t <= to) out.push({ t, v: this.v[at], min: this.lo[at], max: this.hi[at] });
    }
    return out;
  }

  last(count: number): Point[] {
    const out: Point[] = [];
    for (let i = Math.max(0, this.size - count); i < this.size; i++) {
      const at = this.index(i);
      out.push({ t: this.t[at], v: this.v[at], min: this.lo[at], max: this.hi[at] });
    }
    return out;
  }

  /** Changes capacity, keeping the newest points. */
  resize(capacity: number): void {
    if (capacity === this.capacity) return;
    const kept = this.last(capacity);
    this.capacity = capacity;
    this.t = new Float64Array(0);
    this.v = new Float64Array(0);
    this.lo = new Float64Array(0);
    this.hi = new Float64Array(0);
    this.room = 0;
    this.head = 0;
    this.size = 0;
    for (const point of kept) this.push(point);
  }

  private index(i: number): number {
    return (this.head + i) % this.room;
  }

  private write(at: number, point: Point): void {
    this.t[at] = point.t;
    this.v[at] = point.v;
    this.lo[at] = point.min;
    this.hi[at] = point.max;
  }
}
