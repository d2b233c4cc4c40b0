/**
 * Which items' interval sets may overlap a given one, along one dimension, answered as a bitset over the items.
 * Intervals are grouped by size class (powers of two), each class sorted by its start, so a query visits only
 * intervals that can reach it; full-range intervals (`any`) are one precomputed bitset. Keys are numbers: IPv4
 * addresses and ports exactly, IPv6 addresses shifted to 53 bits (order-preserving, so an overlap is never
 * missed; a few extra candidates are sorted out by exact set arithmetic).
 */
export class Bitset {
  readonly words: Uint32Array;
  constructor(readonly size: number) {
    this.words = new Uint32Array(Math.ceil(size / 32));
  }
  add(index: number): void {
    this.words[index >>> 5] |= 1 << (index & 31);
  }
  or(other: Bitset): void {
    for (let i = 0; i < this.words.length; i++) this.words[i] |= other.words[i];
  }
  and(other: Bitset): void {
    for (let i = 0; i < this.words.length; i++) this.words[i] &= other.words[i];
  }
  *members(): Generator<number> {
    for (let w = 0; w < this.words.length; w++) {
      let word = this.words[w];
      while (word !== 0) {
        const bit = 31 - Math.clz32(word & -word);
        yield w * 32 + bit;
        word &= word - 1;
      }
    }
  }
}

interface SizeClass {
  starts: Float64Array;
  ends: Float64Array;
  items: Int32Array;
  /** Every interval of the class is at most this long. */
  span: number;
}

export class OverlapIndex {
  private readonly full: Bitset;
  private readonly classes: SizeClass[] = [];

  /** `intervals[item]`: that item's intervals as [start, end] keys; `fullRange` tells an interval covering everything. */
  constructor(private readonly size: number, intervals: readonly (readonly (readonly [number, number])[])[], fullRange: (start: number, end: number) => boolean) {
    this.full = new Bitset(size);
    const byClass = new Map<number, [number, number, number][]>();
    intervals.forEach((list, item) => {
      for (const [start, end] of list) {
        if (fullRange(start, end)) {
          this.full.add(item);
          continue;
        }
        const sizeClass = Math.ceil(Math.log2(end - start + 2));
        let entries = byClass.get(sizeClass);
        if (!entries) byClass.set(sizeClass, (entries = []));
        entries.push([start, end, item]);
      }
    });
    for (const [sizeClass, entries] of byClass) {
      entries.sort((a, b) => a[0] - b[0]);
      this.classes.push({
        starts: Float64Array.from(entries, (e) => e[0]),
        ends: Float64Array.from(entries, (e) => e[1]),
        items: Int32Array.from(entries, (e) => e[2]),
        span: 2 ** sizeClass,
      });
    }
  }

  private all: Bitset | undefined;

  /** Every item that has an interval at all (a fresh copy the caller may change). */
  everything(): Bitset {
    if (!this.all) {
      this.all = new Bitset(this.size);
      this.all.or(this.full);
      for (const sizeClass of this.classes) for (const item of sizeClass.items) this.all.add(item);
    }
    const copy = new Bitset(this.size);
    copy.or(this.all);
    return copy;
  }

  /** The items with an interval overlapping one of `query`'s. */
  overlapping(query: readonly (readonly [number, number])[]): Bitset {
    const found = new Bitset(this.size);
    found.or(this.full);
    for (const [start, end] of query) {
      for (const sizeClass of this.classes) {
        // Starts in [start - span, end] are the only ones whose interval can reach [start, end].
        let low = 0;
        let high = sizeClass.starts.length;
        const from = start - sizeClass.span;
        while (low < high) {
          const middle = (low + high) >>> 1;
          if (sizeClass.starts[middle] < from) low = middle + 1;
          else high = middle;
        }
        for (let i = low; i < sizeClass.starts.length && sizeClass.starts[i] <= end; i++) {
          if (sizeClass.ends[i] >= start) found.add(sizeClass.items[i]);
        }
      }
    }
    return found;
  }
}
