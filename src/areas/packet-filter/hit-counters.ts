/**
 * Hit counters over time: the packet filter's per-rule counters (nftables counter objects, pf labels), read only
 * through the driver's counters(), folded into totals per rule that survive reloads and restarts (kept in
 * service_state), into a series per rule in the metrics store (`rule.<id>.packets` and `rule.<id>.bytes`, per
 * sample), and into the time of the last hit. Read when asked (at most HIT_FRESH_MS old) and every minute, and
 * around every load (LoadCounting): a load that starts the counters from zero (pf's) is sampled just before it.
 */
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { ServiceState } from '../common/service-state.js';
import type { RuleCounter } from '../../platform/packet-filter.js';
import { RULE_KIND } from './rules.js';
import type { UnusedRuleEntry } from './analysis.js';

const STATE_NAME = 'rule_hits';
/** The metric series' interval: a sample at least this often, read or not. */
export const HIT_SAMPLE_MS = 60_000;
/** GET /rules (and the unused analysis) answer totals from a sample no older than this. */
export const HIT_FRESH_MS = 4_000;
const DAY_MS = 86_400_000;

interface RuleHits {
  packets: number;
  bytes: number;
  /** ms since the epoch; null until a hit is seen. */
  lastHitAt: number | null;
  /** The kernel counter at the last sample, to tell a new count from a reset. */
  rawPackets: number;
  rawBytes: number;
}

interface HitState {
  /** When sampling began (ms): a rule cannot be known unused for longer than this. */
  since: number | null;
  rules: Record<string, RuleHits>;
}

/** Where a sample goes besides the totals: the metrics store's series. */
export interface SeriesSink {
  record(seconds: number, values: Record<string, number>): void;
}

export const ruleSeriesNames = (id: string) => ({ packets: `rule.${id}.packets`, bytes: `rule.${id}.bytes` });

/**
 * The rule a counter belongs to: nftables names its counters `rule_<id>` (or tags them `rule <id>`), pf labels
 * its rules with the id itself. Other counters (NAT) belong to no rule.
 */
export function ruleOfCounter(name: string, ids: ReadonlySet<string>): string | undefined {
  if (ids.has(name)) return name;
  const id = /^rule[_ ](.+)$/.exec(name)?.[1];
  return id !== undefined && ids.has(id) ? id : undefined;
}

/**
 * What a load does to the counters (kernel-sync.ts calls these around every load). nftables keeps them: a delta
 * and a full load alike leave the counter objects of the rules still loaded, and what they counted. A load that
 * replaces them (every pf load; an nftables full load whose table could not be listed) starts every counter from
 * zero: the totals take a sample just before it, and forget the readings after it.
 */
export interface LoadCounting {
  beforeFullLoad(): Promise<void>;
  /** A load is under way: a sample that overlaps it is dropped (the next one reads the same packets). */
  loadStarted(): void;
  loadEnded(outcome: { ok: boolean; countersKept: boolean }): void;
}

export class RuleHitCounters implements LoadCounting {
  private readonly state: ServiceState;
  private current: HitState;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  /** When the last sample that counted began (clock ms). */
  private sampledAt = Number.NEGATIVE_INFINITY;
  /** Bumped when a load starts and ends: a sample whose read overlapped either is dropped. */
  private generation = 0;
  private loading = false;
  /** Changes with every sample that changed a total: list answers with hits are cached per version. */
  version = 0;

  constructor(private readonly context: AppContext, private readonly series?: SeriesSink) {
    this.state = new ServiceState(context.db, context.clock);
    this.current = this.state.get<HitState>(STATE_NAME, { since: null, rules: {} });
  }

  /** Reads the counters once and folds them into the totals (one sample at a time). */
  sample(): Promise<void> {
    this.sampling ??= this.sampleNow().finally(() => {
      this.sampling = undefined;
    });
    return this.sampling;
  }

  /** Whether the last sample that counted is older than HIT_FRESH_MS. */
  stale(): boolean {
    return this.context.clock.now() - this.sampledAt > HIT_FRESH_MS;
  }

  /** Totals that include every packet counted HIT_FRESH_MS ago: a sample first when the last is older. */
  async fresh(): Promise<void> {
    // Twice at most: a sample a load overlapped counts nothing, the one after it does.
    for (let tries = 0; tries < 2 && this.stale(); tries++) await this.sample();
  }

  async beforeFullLoad(): Promise<void> {
    await this.sampling; // one that began earlier leaves the packets counted since it read
    await this.sample();
  }

  loadStarted(): void {
    this.loading = true;
    this.generation++;
  }

  loadEnded(outcome: { ok: boolean; countersKept: boolean }): void {
    this.loading = false;
    this.generation++;
    if (!outcome.ok || outcome.countersKept) return;
    // Every counter starts from zero: the sample before the load took what they held.
    for (const hits of Object.values(this.current.rules)) Object.assign(hits, { rawPackets: 0, rawBytes: 0 });
    this.state.set(STATE_NAME, this.current);
  }

  private async sampleNow(): Promise<void> {
    const generation = this.generation;
    const startedAt = this.context.clock.now();
    if (this.loading) return;
    let counters: RuleCounter[];
    try {
      counters = await this.context.platform.packetFilter.counters();
    } catch (error) {
      this.context.log.warn({ err: error }, 'rule counters could not be read');
      return;
    }
    // A load began or ended while the kernel was read: what was read may predate a reset the totals know of.
    if (this.loading || generation !== this.generation) return;
    this.sampledAt = startedAt;
    const now = this.context.clock.now();
    const ids = new Set(this.context.store.list(RULE_KIND).map((o) => o.id));
    // pf expands one rule into several, each labelled alike; nftables may split one rule over families.
    const raw = new Map<string, { packets: number; bytes: number }>();
    for (const counter of counters) {
      const id = ruleOfCounter(counter.name, ids);
      if (id === undefined) continue;
      const sum = raw.get(id) ?? { packets: 0, bytes: 0 };
      sum.packets += counter.packets;
      sum.bytes += counter.bytes;
      raw.set(id, sum);
    }
    const samples: Record<string, number> = {};
    let changed = false;
    const rules: Record<string, RuleHits> = {};
    for (const id of ids) {
      const before = this.current.rules[id] ?? { packets: 0, bytes: 0, lastHitAt: null, rawPackets: 0, rawBytes: 0 };
      const counted = raw.get(id);
      if (!counted) {
        rules[id] = { ...before, rawPackets: 0, rawBytes: 0 };
        continue;
      }
      // A counter below its last reading was reset behind Bulwark's back (a table flushed by hand): all of it is new.
      const packets = counted.packets >= before.rawPackets ? counted.packets - before.rawPackets : counted.packets;
      const bytes = counted.bytes >= before.rawBytes ? counted.bytes - before.rawBytes : counted.bytes;
      if (packets > 0 || bytes > 0) changed = true;
      rules[id] = {
        packets: before.packets + packets, bytes: before.bytes + bytes,
        lastHitAt: packets > 0 ? now : before.lastHitAt,
        rawPackets: counted.packets, rawBytes: counted.bytes,
      };
      const names = ruleSeriesNames(id);
      samples[names.packets] = packets;
      samples[names.bytes] = bytes;
    }
    const moved = changed || this.current.since === null || Object.keys(rules).length !== Object.keys(this.current.rules).length;
    // A counter reset without traffic changes no total but must be remembered across a restart.
    const reset = Object.entries(rules).some(([id, hits]) => hits.rawPackets !== this.current.rules[id]?.rawPackets);
    this.current = { since: this.current.since ?? now, rules };
    if (moved) this.version++;
    // Written only when something moved: an idle appliance does not rewrite every rule's row each minute.
    if (moved || reset) this.state.set(STATE_NAME, this.current);
    if (Object.keys(samples).length) this.series?.record(now / 1000, samples);
  }

  /** `hits` and `last_hit_at` of one rule, as GET /rules answers them. */
  of(id: string): { hits: { packets: number; bytes: number }; last_hit_at: string | null } {
    const hits = this.current.rules[id];
    return { hits: { packets: hits?.packets ?? 0, bytes: hits?.bytes ?? 0 }, last_hit_at: hits?.lastHitAt ? isoTime(hits.lastHitAt) : null };
  }

  /**
   * Active rules without a hit in the last `days` days: only those counted for at least that long (sampling
   * running and the rule existing), so a rule is never called unused for a time nobody watched it.
   */
  unused(days: number): UnusedRuleEntry[] {
    const now = this.context.clock.now();
    const cutoff = now - days * DAY_MS;
    const since = this.current.since;
    if (since === null || since > cutoff) return [];
    const found: UnusedRuleEntry[] = [];
    for (const object of this.context.store.list(RULE_KIND)) {
      if (object.data.status !== 'active' || Date.parse(object.created_at) > cutoff) continue;
      const last = this.current.rules[object.id]?.lastHitAt ?? null;
      if (last !== null && last > cutoff) continue;
      found.push({
        rule_id: object.id,
        last_hit_at: last === null ? null : isoTime(last),
        detail: last === null ? `no hit since counting began (${isoTime(since)})` : `last hit ${isoTime(last)}, more than ${days} days ago`,
      });
    }
    return found;
  }

  start(intervalMs = HIT_SAMPLE_MS): void {
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
