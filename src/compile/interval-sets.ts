/**
 * Sets of integers as sorted, disjoint, non-adjacent closed intervals: intersection, difference, subset and
 * complement in linear time. Addresses are bigints (IPv6 needs 128 bits), ports numbers; one implementation
 * serves both.
 */
export type Bound = number | bigint;
export type Interval<T extends Bound> = readonly [T, T];
export type IntervalSet<T extends Bound> = readonly Interval<T>[];

const one = <T extends Bound>(sample: T): T => (typeof sample === 'bigint' ? 1n : 1) as T;
const plus = <T extends Bound>(a: T, b: T): T => ((a as number) + (b as number)) as T;
const minus = <T extends Bound>(a: T, b: T): T => ((a as number) - (b as number)) as T;

/** Sorts and merges overlapping or adjacent intervals. */
export function normalise<T extends Bound>(intervals: readonly Interval<T>[]): IntervalSet<T> {
  if (intervals.length <= 1) return intervals;
  const sorted = [...intervals].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: [T, T][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= plus(last[1], one(lo))) {
      if (hi > last[1]) last[1] = hi;
    } else out.push([lo, hi]);
  }
  return out;
}

export function intersect<T extends Bound>(a: IntervalSet<T>, b: IntervalSet<T>): IntervalSet<T> {
  const out: Interval<T>[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = a[i][0] > b[j][0] ? a[i][0] : b[j][0];
    const hi = a[i][1] < b[j][1] ? a[i][1] : b[j][1];
    if (lo <= hi) out.push([lo, hi]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

export function overlaps<T extends Bound>(a: IntervalSet<T>, b: IntervalSet<T>): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i][1] < b[j][0]) i++;
    else if (b[j][1] < a[i][0]) j++;
    else return true;
  }
  return false;
}

/** a \ b */
export function subtract<T extends Bound>(a: IntervalSet<T>, b: IntervalSet<T>): IntervalSet<T> {
  const out: Interval<T>[] = [];
  let j = 0;
  for (const [lo, hi] of a) {
    let start = lo;
    while (j < b.length && b[j][1] < start) j++;
    let k = j;
    let open = true;
    while (k < b.length && b[k][0] <= hi) {
      if (b[k][0] > start) out.push([start, minus(b[k][0], one(start))]);
      if (b[k][1] >= hi) { open = false; break; }
      start = plus(b[k][1], one(start));
      k++;
    }
    if (open && start <= hi) out.push([start, hi]);
  }
  return out;
}

/** Whether every element of a is in b. */
export function isSubset<T extends Bound>(a: IntervalSet<T>, b: IntervalSet<T>): boolean {
  return subtract(a, b).length === 0;
}

/** The complement of a within [first, last]. */
export function complement<T extends Bound>(a: IntervalSet<T>, first: T, last: T): IntervalSet<T> {
  return subtract([[first, last]], a);
}
