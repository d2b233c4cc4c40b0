/** One aggregated sample: bucket start (unix seconds), mean, minimum and maximum. */
export interface Point {
  t: number;
  v: number;
  min: number;
  max: number;
}

/** Fixed-capacity ring of points in time order, on typed arrays (32 bytes a point, no per-point objects). */
export class PointRing {
  private t: Float64Array;
  private v: Float64Array;
  private lo: Float64Array;
  private hi: Float64Array;
  private head = 0; // index of the oldest point
  size = 0;

  constructor(public capacity: number) {
    this.t = new Float64Array(capacity);
    this.v = new Float64Array(capacity);
    this.lo = new Float64Array(capacity);
    this.hi = new Float64Array(capacity);
  }

  push(point: Point): void {
    // a point for the same bucket as the newest replaces it (e.g. reloaded from persistence)
    if (this.size > 0 && this.t[this.index(this.size - 1)] === point.t) {
      this.write(this.index(this.size - 1), point);
      return;
    }
    if (this.size > 0 && point.t < this.t[this.index(this.size - 1)]) return; // out of order: ignore
    if (this.size < this.capacity) {
      this.write(this.index(this.size), point);
      this.size++;
    } else {
      this.write(this.head, point);
      this.head = (this.head + 1) % this.capacity;
    }
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
    this.t = new Float64Array(capacity);
    this.v = new Float64Array(capacity);
    this.lo = new Float64Array(capacity);
    this.hi = new Float64Array(capacity);
    this.head = 0;
    this.size = 0;
    for (const point of kept) this.push(point);
  }

  private index(i: number): number {
    return (this.head + i) % this.capacity;
  }

  private write(at: number, point: Point): void {
    this.t[at] = point.t;
    this.v[at] = point.v;
    this.lo[at] = point.min;
    this.hi[at] = point.max;
  }
}
