/**
 * Hit counters over time: the packet filter's per-rule counters (nftables counters, pf labels), read only
 * through the driver's counters(), folded into totals per rule that survive reloads and restarts (kept in
 * service_state), into a series per rule in the metrics store (`rule.<id>.packets` and `rule.<id>.bytes`, per
 * sample), and into the time of the last hit. Read when asked (at most HIT_FRESH_MS old) and every minute; around
 * every load (LoadCounting) so that a load, which starts the counters of what it replaces from zero, loses nothing.
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
/** Counters that are not per chain (pf labels, the simulation), and a total kept before counters were per chain. */
const NO_CHAIN = '';

interface RuleHits {
  packets: number;
  bytes: number;
  /** ms since the epoch; null until a hit is seen. */
  lastHitAt: number | null;
  /**
   * The kernel's counters at the last reading, per chain holding the rule's lines: a load that replaces a chain
   * starts its counters from zero, and only that chain's reading is forgotten then.
   */
  raw?: Record<string, [packets: number, bytes: number]>;
  /** Before counters were kept per chain: the sum at the last sample (read once, then replaced by raw). */
  rawPackets?: number;
  rawBytes?: number;
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
 * What a load does to the counters (kernel-sync.ts calls these around every load): a full load starts every
 * counter from zero, so the totals take a sample just before it; a delta replaces some chains, whose counters
 * the driver reads just before the delta's commit and the totals fold in once it succeeded.
 */
export interface LoadCounting {
  beforeFullLoad(): Promise<void>;
  /** A load is under way: a sample that overlaps it is dropped (the next one counts the same packets). */
  loadStarted(): void;
  /** `replaced`: the chains the delta emptied, with `counted`, what they counted just before it. */
  loadEnded(outcome: { ok: false } | { ok: true; mode: 'full' } | { ok: true; mode: 'delta'; replaced: readonly string[]; counted: readonly RuleCounter[] }): void;
}

const sumOf = (chains: ReadonlyMap<string, [number, number]>): [number, number] =>
  [...chains.values()].reduce<[number, number]>((sum, [p, b]) => [sum[0] + p, sum[1] + b], [0, 0]);

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
  /** What deltas folded into the totals since the last sample, for the next sample's series point. */
  private readonly unsampled = new Map<string, [number, number]>();
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

  /** Totals that include every packet counted HIT_FRESH_MS ago: a sample first when the last is older. */
  async fresh(): Promise<void> {
    // Twice at most: a sample a load overlapped counts nothing, the one after it does.
    for (let tries = 0; tries < 2 && this.context.clock.now() - this.sampledAt > HIT_FRESH_MS; tries++) {
      await this.sample();
    }
  }

  async beforeFullLoad(): Promise<void> {
    await this.sampling; // one that began earlier leaves the packets counted since it read
    await this.sample();
  }

  loadStarted(): void {
    this.loading = true;
    this.generation++;
  }

  loadEnded(outcome: Parameters<LoadCounting['loadEnded']>[0]): void {
    this.loading = false;
    this.generation++;
    if (!outcome.ok) return;
    if (outcome.mode === 'full') {
      // Every counter starts from zero: the sample before the load took what they held.
      for (const hits of Object.values(this.current.rules)) hits.raw = {};
      this.state.set(STATE_NAME, this.current);
      return;
    }
    if (outcome.replaced.length === 0) return;
    const replaced = new Set(outcome.replaced);
    const readings = this.readings(outcome.counted.filter((c) => c.chain !== undefined && replaced.has(c.chain)));
    // The replaced chains' counters start from zero now: their last reading is forgotten once folded in.
    const holding = Object.entries(this.current.rules).filter(([, hits]) => Object.keys(hits.raw ?? {}).some((chain) => replaced.has(chain)));
    const ids = [...new Set([...readings.keys(), ...holding.map(([id]) => id)])];
    this.fold(readings, ids, (raw) => {
      for (const chain of replaced) delete raw[chain];
    }, false);
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
    // A load began or ended while the kernel was read: what it read may predate a reset the totals know of.
    if (this.loading || generation !== this.generation) return;
    this.sampledAt = startedAt;
    const readings = this.readings(counters);
    this.fold(readings, this.context.store.list(RULE_KIND).map((o) => o.id), () => undefined, true);
  }

  /** Counters by rule id and chain: pf expands one rule into several alike, nftables splits one over chains. */
  private readings(counters: readonly RuleCounter[]): Map<string, Map<string, [number, number]>> {
    const ids = new Set(this.context.store.list(RULE_KIND).map((o) => o.id));
    const readings = new Map<string, Map<string, [number, number]>>();
    for (const counter of counters) {
      const id = ruleOfCounter(counter.name, ids);
      if (id === undefined) continue;
      const chains = readings.get(id) ?? new Map<string, [number, number]>();
      const chain = counter.chain ?? NO_CHAIN;
      const sum = chains.get(chain) ?? [0, 0];
      chains.set(chain, [sum[0] + counter.packets, sum[1] + counter.bytes]);
      readings.set(id, chains);
    }
    return readings;
  }

  /**
   * Adds what each reading counted since the last one to the totals. A counter below its last reading was reset
   * (a chain replaced behind Bulwark's back): all of it is new. `complete`: the readings cover every counter (a
   * sample), so a chain without a reading holds none of the rule's lines any more, and the interval's counts go to
   * the series (with those a delta folded in since the last sample).
   */
  private fold(readings: Map<string, Map<string, [number, number]>>, ids: readonly string[], forget: (raw: Record<string, [number, number]>) => void, complete: boolean): void {
    const now = this.context.clock.now();
    const samples: Record<string, number> = {};
    let changed = false;
    let rawChanged = false;
    const rules: Record<string, RuleHits> = complete ? {} : this.current.rules;
    for (const id of ids) {
      const before = this.current.rules[id] ?? { packets: 0, bytes: 0, lastHitAt: null };
      const chains = readings.get(id) ?? new Map<string, [number, number]>();
      // Kept before counters were per chain: the rule's sum read then stands for all of its chains.
      const legacy = before.raw === undefined && before.rawPackets !== undefined;
      const last: Record<string, [number, number]> = legacy ? { [NO_CHAIN]: [before.rawPackets!, before.rawBytes ?? 0] } : (before.raw ?? {});
      const read = legacy ? new Map([[NO_CHAIN, sumOf(chains)]]) : chains;
      const raw: Record<string, [number, number]> = complete ? {} : { ...last };
      let packets = 0;
      let bytes = 0;
      for (const [chain, [p, b]] of read) {
        const [lastP, lastB] = last[chain] ?? [0, 0];
        const counting = p >= lastP;
        packets += counting ? p - lastP : p;
        bytes += counting ? Math.max(0, b - lastB) : b;
        raw[chain] = [p, b];
      }
      if (legacy) Object.assign(raw, Object.fromEntries(chains));
      if (legacy) delete raw[NO_CHAIN];
      forget(raw);
      if (JSON.stringify(raw) !== JSON.stringify(last)) rawChanged = true;
      if (packets > 0 || bytes > 0) changed = true;
      rules[id] = { packets: before.packets + packets, bytes: before.bytes + bytes, lastHitAt: packets > 0 ? now : before.lastHitAt, raw };
      const unsampled = this.unsampled.get(id) ?? [0, 0];
      if (!complete) {
        this.unsampled.set(id, [unsampled[0] + packets, unsampled[1] + bytes]);
      } else if (chains.size || unsampled[0] || unsampled[1]) {
        const names = ruleSeriesNames(id);
        samples[names.packets] = packets + unsampled[0];
        samples[names.bytes] = bytes + unsampled[1];
      }
    }
    if (complete) this.unsampled.clear();
    const moved = changed || this.current.since === null || (complete && ids.length !== Object.keys(this.current.rules).length);
    this.current = { since: complete ? this.current.since ?? now : this.current.since, rules };
    if (moved) this.version++;
    // Written only when something changed: an idle appliance does not rewrite every rule's row at each sample.
    if (moved || rawChanged) this.state.set(STATE_NAME, this.current);
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
