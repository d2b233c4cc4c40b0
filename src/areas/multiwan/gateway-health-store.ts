/**
 * What the probes leave in the database per gateway: its live health (the state machine of health.ts fed one
 * sample at a time), its state changes (events, and the gateway-state topic), and per-minute SLA buckets.
 */
import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigObject } from '../../store/config-store.js';
import { applySample, initialHealth, type HealthState } from './health.js';
import type { GatewayView } from './compile.js';
import type { RoutingObject } from './applied-routing.js';

interface HealthRow {
  gateway_id: string; state: HealthState['state']; consec_ok: number; consec_fail: number; rtts: string;
  last_rtt_ms: number | null; last_jitter_ms: number | null; last_loss_pct: number | null; last_mos: number | null; last_probe_ts: string | null;
}

/** A gateway's health as its record and the metrics show it. */
export type HealthView = ReturnType<GatewayHealthStore['healthView']>;

/** One probe's outcome. */
export interface ProbeSample {
  success: boolean;
  rtt_ms: number | null;
  error: string | null;
}

const WINDOWS: Record<string, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export class GatewayHealthStore {
  constructor(private readonly context: AppContext, readonly gateways: CollectionModel) {}

  private get db() {
    return this.context.db;
  }

  private healthRow(gatewayId: string): HealthRow | undefined {
    return this.db.prepare('SELECT * FROM multiwan_gateway_health WHERE gateway_id = ?').get(gatewayId) as HealthRow | undefined;
  }

  healthView(gatewayId: string) {
    const row = this.healthRow(gatewayId);
    return {
      state: row?.state ?? 'unknown',
      last_rtt_ms: row?.last_rtt_ms ?? null,
      last_jitter_ms: row?.last_jitter_ms ?? null,
      last_loss_pct: row?.last_loss_pct ?? null,
      last_mos: row?.last_mos ?? null,
      last_probe_ts: row?.last_probe_ts ?? null,
    };
  }

  /** When the gateway was last probed (null: never). */
  lastProbe(gatewayId: string): string | null {
    return this.healthRow(gatewayId)?.last_probe_ts ?? null;
  }

  /** Gateway id → its configuration with its health now, as the compilers and the group selection take it. */
  gatewayViews(gateways: readonly RoutingObject[] = this.gateways.objects()): Map<string, GatewayView> {
    return new Map(gateways.map((o) => [o.id, { ...o.data, id: o.id, ...this.healthView(o.id) } as GatewayView]));
  }

  /** Deletes a gateway (409 while referenced) and its health. */
  deleteGateway(id: string): void {
    this.context.store.transaction(() => {
      const gateway = this.gateways.find(id);
      this.context.models.assertNotReferenced(gateway);
      this.context.store.remove('mw_gateway', id);
      this.db.prepare('DELETE FROM multiwan_gateway_health WHERE gateway_id = ?').run(id);
    });
  }

  /** Records one sample; answers whether the gateway's state changed. */
  recordSample(gateway: ConfigObject, sample: ProbeSample): boolean {
    const row = this.healthRow(gateway.id);
    const current: HealthState = row ? { ...row, rtts: JSON.parse(row.rtts) as number[] } : initialHealth();
    const limits = gateway.data as unknown as { consec_fail_down: number; consec_ok_up: number; loss_pct_down: number; loss_pct_up: number };
    const { next, changed } = applySample(current, sample, limits);
    const now = isoTime(this.context.clock.now());
    this.db.transaction(() => {
      this.db.prepare(`INSERT INTO multiwan_gateway_health (gateway_id, state, consec_ok, consec_fail, rtts, last_rtt_ms, last_jitter_ms, last_loss_pct, last_mos, last_probe_ts)
        VALUES (@gateway_id, @state, @consec_ok, @consec_fail, @rtts, @last_rtt_ms, @last_jitter_ms, @last_loss_pct, @last_mos, @last_probe_ts)
        ON CONFLICT (gateway_id) DO UPDATE SET state = excluded.state, consec_ok = excluded.consec_ok, consec_fail = excluded.consec_fail, rtts = excluded.rtts,
          last_rtt_ms = excluded.last_rtt_ms, last_jitter_ms = excluded.last_jitter_ms, last_loss_pct = excluded.last_loss_pct, last_mos = excluded.last_mos, last_probe_ts = excluded.last_probe_ts`)
        .run({ gateway_id: gateway.id, ...next, rtts: JSON.stringify(next.rtts), last_probe_ts: now });
      if (changed) {
        const snapshot = { rtt_ms: next.last_rtt_ms, jitter_ms: next.last_jitter_ms, loss_pct: next.last_loss_pct, mos: next.last_mos, consec_fail: next.consec_fail, consec_ok: next.consec_ok };
        this.db.prepare('INSERT INTO multiwan_gateway_events (gateway_id, ts, from_state, to_state, reason, probe_snapshot_json) VALUES (?, ?, ?, ?, ?, ?)')
          .run(gateway.id, now, current.state, next.state, sample.error, JSON.stringify(snapshot));
      }
      // One SLA bucket per minute.
      const bucket = isoTime(Math.floor(this.context.clock.now() / 60_000) * 60_000);
      const existing = this.db.prepare('SELECT rtts FROM multiwan_sla_samples WHERE gateway_id = ? AND bucket_ts = ?').get(gateway.id, bucket) as { rtts: string } | undefined;
      const rtts = existing ? (JSON.parse(existing.rtts) as number[]) : [];
      if (sample.success && sample.rtt_ms !== null) rtts.push(sample.rtt_ms);
      this.db.prepare(`INSERT INTO multiwan_sla_samples (gateway_id, bucket_ts, samples, rtts, jitter_sum, failures, mos_sum, mos_count, up_samples, interval_ms)
        VALUES (@g, @b, 1, @rtts, @jitter, @fail, @mos, @mosCount, @up, @interval)
        ON CONFLICT (gateway_id, bucket_ts) DO UPDATE SET samples = samples + 1, rtts = @rtts, jitter_sum = jitter_sum + @jitter, failures = failures + @fail,
          mos_sum = mos_sum + @mos, mos_count = mos_count + @mosCount, up_samples = up_samples + @up, interval_ms = @interval`)
        .run({
          g: gateway.id, b: bucket, rtts: JSON.stringify(rtts), jitter: next.last_jitter_ms ?? 0, fail: sample.success ? 0 : 1,
          mos: sample.success && next.last_mos !== null ? next.last_mos : 0, mosCount: sample.success && next.last_mos !== null ? 1 : 0,
          up: next.state === 'up' ? 1 : 0, interval: Number(gateway.data.interval_ms),
        });
    })();
    if (changed) {
      this.context.events.emit(EVENT_TOPICS.gatewayState, {
        gateway_id: gateway.id, name: String(gateway.data.name ?? gateway.id), interface: String(gateway.data.interface ?? ''),
        from: current.state, to: next.state, reason: sample.error,
      });
    }
    return changed;
  }

  events(id: string) {
    this.gateways.find(id);
    return this.db.prepare('SELECT * FROM multiwan_gateway_events WHERE gateway_id = ? ORDER BY id DESC LIMIT 100').all(id);
  }

  sla(id: string, window: string) {
    this.gateways.find(id);
    const since = isoTime(this.context.clock.now() - (WINDOWS[window] ?? WINDOWS['24h']));
    const rows = this.db.prepare('SELECT * FROM multiwan_sla_samples WHERE gateway_id = ? AND bucket_ts >= ? ORDER BY bucket_ts').all(id, since) as {
      gateway_id: string; bucket_ts: string; samples: number; rtts: string; jitter_sum: number; failures: number; mos_sum: number; mos_count: number; up_samples: number; interval_ms: number;
    }[];
    return rows.map((row) => {
      const rtts = (JSON.parse(row.rtts) as number[]).sort((a, b) => a - b);
      const secondsPerSample = Math.max(1, row.interval_ms / 1000);
      return {
        gateway_id: row.gateway_id,
        bucket_ts: row.bucket_ts,
        samples: row.samples,
        rtt_avg: rtts.length ? rtts.reduce((a, b) => a + b, 0) / rtts.length : null,
        rtt_p95: percentile(rtts, 95),
        rtt_p99: percentile(rtts, 99),
        jitter_avg: row.samples ? row.jitter_sum / row.samples : null,
        loss_pct: row.samples ? (row.failures / row.samples) * 100 : 0,
        mos_avg: row.mos_count ? row.mos_sum / row.mos_count : null,
        up_seconds: Math.min(60, Math.round(row.up_samples * secondsPerSample)),
      };
    });
  }
}
