/** Live health of one gateway, updated by every probe sample (wire-format §4.2). */
export interface HealthState {
  state: 'up' | 'warning' | 'down' | 'unknown';
  consec_ok: number;
  consec_fail: number;
  rtts: number[];
  last_rtt_ms: number | null;
  last_jitter_ms: number | null;
  last_loss_pct: number | null;
  last_mos: number | null;
}

export interface HealthThresholds {
  consec_fail_down: number;
  consec_ok_up: number;
  loss_pct_down: number;
  loss_pct_up: number;
}

export const initialHealth = (): HealthState => ({
  state: 'unknown', consec_ok: 0, consec_fail: 0, rtts: [], last_rtt_ms: null, last_jitter_ms: null, last_loss_pct: null, last_mos: null,
});

/** ITU-T G.107 E-model estimate from latency and jitter (loss term 0), as the reference computes it. */
export function meanOpinionScore(rttMs: number, jitterMs: number): number {
  const r = Math.min(100, Math.max(0, 93.2 - (rttMs + 2 * jitterMs) / 40));
  if (r < 6.5) return 1;
  return 1 + 0.035 * r + 7e-6 * r * (r - 60) * (100 - r);
}

const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Applies one probe sample; returns the new state and whether the state changed. */
export function applySample(current: HealthState, sample: { success: boolean; rtt_ms: number | null }, limits: HealthThresholds): { next: HealthState; changed: boolean } {
  const next: HealthState = { ...current, rtts: [...current.rtts] };
  if (sample.success) {
    next.consec_ok += 1;
    next.consec_fail = 0;
    if (sample.rtt_ms !== null) {
      next.rtts.push(sample.rtt_ms);
      if (next.rtts.length > 20) next.rtts.shift();
      next.last_rtt_ms = sample.rtt_ms;
    }
  } else {
    next.consec_fail += 1;
    next.consec_ok = 0;
  }
  const loss = (next.consec_fail / (next.consec_fail + next.consec_ok)) * 100;
  next.last_loss_pct = round(loss);
  if (next.rtts.length >= 2) {
    let sum = 0;
    for (let i = 1; i < next.rtts.length; i++) sum += Math.abs(next.rtts[i] - next.rtts[i - 1]);
    next.last_jitter_ms = round(sum / (next.rtts.length - 1));
  } else if (next.rtts.length === 1) {
    next.last_jitter_ms = 0;
  }
  if (next.last_rtt_ms !== null) next.last_mos = round(meanOpinionScore(next.last_rtt_ms, next.last_jitter_ms ?? 0));
  let state = current.state;
  if (next.consec_fail >= limits.consec_fail_down) state = 'down';
  else if (next.consec_ok >= limits.consec_ok_up) state = loss > limits.loss_pct_up ? 'warning' : 'up';
  else if (loss > limits.loss_pct_down) state = 'warning';
  next.state = state;
  return { next, changed: state !== current.state };
}
