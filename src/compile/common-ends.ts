/**
 * How many leading and trailing items two lists share (compared with ===; the tail never overlaps the head). An
 * edit of a long list touches a few places, so only what lies between needs comparing.
 */
export function commonEnds<T>(before: readonly T[], after: readonly T[]): { head: number; tail: number } {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  return { head, tail };
}
