/**
 * Readers of chronyc's CSV output (`chronyc -c`): `tracking` (one line) and `sources` (one line a source).
 */
import type { TimeSourceState, TimeTracking } from './daemons.js';

const SOURCE_STATES: Record<string, TimeSourceState['state']> = { '*': 'selected', '+': 'candidate', '-': 'candidate', '~': 'candidate', '?': 'unreachable', x: 'falseticker' };

/** Seconds (chronyc's unit) to milliseconds, rounded to the microsecond. */
const toMs = (seconds: string | undefined) => Math.round(Number(seconds ?? 0) * 1e6) / 1e3 || 0;

/**
 * `chronyc -c sources`: mode, state, name, stratum, poll, reach (octal, as printed), last sample age,
 * adjusted offset, measured offset, error.
 */
export function parseChronySources(text: string): TimeSourceState[] {
  return text
    .split('\n')
    .filter((line) => line.split(',').length >= 10)
    .map((line) => {
      const fields = line.split(',');
      return {
        address: fields[2],
        state: SOURCE_STATES[fields[1]] ?? 'unknown',
        stratum: Number(fields[3]) || 0,
        offset_ms: toMs(fields[7]),
        reach: Number(fields[5]) || 0,
      };
    });
}

/**
 * `chronyc -c tracking`: reference id, reference name, stratum, reference time, system time offset (positive:
 * the clock is fast), last offset, RMS offset, frequency, residual frequency, skew, root delay, root dispersion,
 * update interval, leap status.
 */
export function parseChronyTracking(text: string, sources: TimeSourceState[]): TimeTracking {
  const fields = text.trim().split(',');
  const leap = fields[13] ?? '';
  const referenceId = fields[0] ?? '';
  // A reference id of zero, or leap status "Not synchronised", means chronyd has no reference.
  const synchronized = fields.length >= 14 && !/^0+$/.test(referenceId) && !/not synchronised/i.test(leap);
  return {
    synchronized,
    reference: synchronized ? fields[1] || null : null,
    stratum: Number(fields[2]) || 0,
    offset_ms: toMs(fields[4]),
    sources,
  };
}
