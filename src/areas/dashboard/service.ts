import { cpus, freemem, hostname, totalmem, uptime } from 'node:os';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { AppContext } from '../../context.js';
import type { ConnectionTable, Flow, InterfaceCounters } from '../../platform/connections.js';
import { DashboardBroadcaster, type TickInput } from '../../live/dashboard-broadcaster.js';
import type { LiveFeeds } from '../../live/feeds.js';
import { EventStreamSet } from '../../live/event-stream.js';
import { MetricsEngine } from '../../metrics/metrics-engine.js';
import { RedisMetricsStore, type StoreStatus } from '../../metrics/redis-store.js';
import type { Point } from '../../metrics/ring-buffer.js';
import { TIERS, type TierName } from '../../metrics/tiers.js';
import { DashboardHistorySettings, MetricsStoreSettings, retentionOf } from './settings.js';

export interface DashboardOptions {
  /** Tests drive ticks with the injected clock (`service.broadcaster.poll()`); production runs timers. */
  manualTicks?: boolean;
  /** Key namespace in the external store (tests isolate themselves with their own). */
  metricsKeyPrefix?: string;
  persistIntervalMs?: number;
  externalFlushMs?: number;
  maxSockets?: number;
}

/** Entries of the history batch sent to a new socket. */
export const HISTORY_BATCH_ENTRIES = 600;
const DNS_PORTS = new Set([53, 853]);

/** A connection-table read shared by the tick and GET /connections, at most one in flight. */
class TableCache {
  private value: { at: number; table: ConnectionTable } | null = null;
  private inflight: Promise<ConnectionTable> | null = null;
  constructor(private readonly read: () => Promise<ConnectionTable>, private readonly now: () => number) {}
  async get(maxAgeMs: number): Promise<ConnectionTable> {
    if (this.value && this.now() - this.value.at <= maxAgeMs) return this.value.table;
    this.inflight ??= this.read().then(
      (table) => {
        this.value = { at: this.now(), table };
        this.inflight = null;
        return table;
      },
      (error: unknown) => {
        this.inflight = null;
        throw error;
      },
    );
    return this.inflight;
  }
}

interface TrafficTotals {
  bytes_in: number;
  bytes_out: number;
  packets_in: number;
  packets_out: number;
}

/**
 * One pass over the whole state table: protocol and state counts, top talkers, DNS traffic, fresh flows. At
 * 100,000 states per tick it allocates nothing per flow: talkers are slots in growing number arrays (not an
 * object each), and the ten largest are picked in one scan instead of sorting every talker.
 */
export function summariseTable(flows: readonly Flow[], total: number, newWithinSeconds: number) {
  const byProtocol = { tcp: 0, udp: 0, icmp: 0, other: 0 };
  const states = new Map<string, number>();
  const slots = new Map<string, number>();
  const addrs: string[] = [];
  const bytesIn: number[] = [];
  const bytesOut: number[] = [];
  const counts: number[] = [];
  const dns = { flows: 0, bytes_in: 0, bytes_out: 0 };
  let fresh = 0;
  for (const flow of flows) {
    const protocol = flow.protocol === 'tcp' || flow.protocol === 'udp' ? flow.protocol : flow.protocol.startsWith('icmp') ? 'icmp' : 'other';
    byProtocol[protocol]++;
    states.set(flow.state, (states.get(flow.state) ?? 0) + 1);
    let slot = slots.get(flow.src_addr);
    if (slot === undefined) {
      slot = addrs.length;
      slots.set(flow.src_addr, slot);
      addrs.push(flow.src_addr);
      bytesIn.push(0);
      bytesOut.push(0);
      counts.push(0);
    }
    bytesIn[slot] += flow.bytes_in;
    bytesOut[slot] += flow.bytes_out;
    counts[slot]++;
    if (DNS_PORTS.has(flow.dst_port)) {
      dns.flows++;
      dns.bytes_in += flow.bytes_in;
      dns.bytes_out += flow.bytes_out;
    }
    if (flow.age_secs < newWithinSeconds) fresh++;
  }
  // Most bytes first, then address: the ten best kept in order while scanning.
  const before = (a: number, b: number) => bytesIn[a] + bytesOut[a] - (bytesIn[b] + bytesOut[b]) || (addrs[a] < addrs[b] ? 1 : -1);
  const best: number[] = [];
  for (let slot = 0; slot < addrs.length; slot++) {
    if (best.length === 10 && before(slot, best[9]) <= 0) continue;
    let at = best.length === 10 ? 9 : best.length;
    while (at > 0 && before(slot, best[at - 1]) > 0) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = slot;
    if (best.length > 10) best.length = 10;
  }
  const topTalkers = best.map((slot) => ({ addr: addrs[slot], bytes_in: bytesIn[slot], bytes_out: bytesOut[slot], flows: counts[slot], bytes: bytesIn[slot] + bytesOut[slot] }));
  return { summary: { total, listed: flows.length, ...byProtocol, by_state: Object.fromEntries(states) }, topTalkers, dns, fresh };
}

/**
 * The dashboard's engine room: reads the platform each tick, records metrics, builds the frame fields for the
 * broadcaster, keeps the history rings persisted and mirrors them to the external store when configured.
 */
export class DashboardService {
  readonly engine: MetricsEngine;
  readonly broadcaster: DashboardBroadcaster;
  readonly history: DashboardHistorySettings;
  readonly storeSettings: MetricsStoreSettings;
  readonly dnsStreams = new EventStreamSet();
  readonly tables: TableCache;
  store: RedisMetricsStore | null = null;
  private previous: { at: number; totals: TrafficTotals; interfaces: Map<string, InterfaceCounters>; cpu: { idle: number; total: number } } | null = null;
  private historyCache: { seq: number; bytes: Buffer } | null = null;
  private lastDns = { flows: 0, bytes_in: 0, bytes_out: 0 };
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  private timers: NodeJS.Timeout[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly context: AppContext,
    readonly feeds: LiveFeeds,
    private readonly options: DashboardOptions = {},
  ) {
    this.history = new DashboardHistorySettings(
      context,
      () => ({ currentEntries: this.engine.secondEntries(), capacityBytes: this.engine.capacityBytes() }),
      (retention) => this.engine.setRetention(retention),
    );
    this.storeSettings = new MetricsStoreSettings(context, () => this.storeState(), () => this.configureStore());
    this.engine = new MetricsEngine(context.db, retentionOf(this.history.values()));
    this.tables = new TableCache(() => context.platform.traffic.connections(), () => context.clock.now());
    this.broadcaster = new DashboardBroadcaster({
      clock: context.clock,
      collect: () => this.collect(),
      history: () => this.historyBatch(),
      maxSockets: options.maxSockets,
      onError: (error) => context.log.warn({ err: error }, 'dashboard tick failed'),
    });
  }

  private nowSeconds(): number {
    return Math.floor(this.context.clock.now() / 1000);
  }

  // ---------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    const { context } = this;
    this.engine.load(this.nowSeconds());
    this.loopDelay.enable();
    await context.platform.traffic.open({ dataDir: context.config.dataDir }).catch((error: Error) => context.log.warn({ err: error }, 'blocked-packet reader did not start'));
    await this.configureStore();
    if (this.options.manualTicks) return;
    this.broadcaster.start();
    const every = (ms: number, fn: () => unknown) => {
      const timer = setInterval(fn, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.persistIntervalMs ?? 60_000, () => this.persist());
    every(this.options.externalFlushMs ?? 5_000, () => void this.flushExternal());
    every(1_000, () => void this.pushDnsStats());
  }

  /** Ends streams and sockets before the HTTP server stops accepting, so shutdown never waits on them. */
  async beforeClose(): Promise<void> {
    this.dnsStreams.closeAll();
    await this.broadcaster.stop((socket) => (socket as unknown as { close(code: number, reason: string): void; terminate(): void }).terminate());
  }

  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.loopDelay.disable();
    await this.beforeClose();
    this.persist(true);
    await this.flushExternal();
    await this.store?.close();
    this.store = null;
  }

  persist(includeOpen = false): void {
    try {
      this.engine.persist(this.nowSeconds(), includeOpen);
    } catch (error) {
      this.context.log.warn({ err: error }, 'metrics persistence failed');
    }
  }

  // ---------------------------------------------------------------- external store

  private storeState(): { status: StoreStatus; error?: string } {
    if (!this.storeSettings.values().enabled) return { status: 'disabled' };
    if (!this.store) return { status: 'disconnected' };
    return { status: this.store.status, ...(this.store.lastError ? { error: this.store.lastError } : {}) };
  }

  /** (Re)connects according to /settings/metrics-store. */
  async configureStore(): Promise<void> {
    const settings = this.storeSettings.values();
    const previous = this.store;
    this.store = null;
    await previous?.close();
    if (!settings.enabled) return;
    this.store = new RedisMetricsStore({
      url: settings.url,
      password: this.storeSettings.password(),
      retentionMinutes: settings.retention_minutes,
      prefix: this.options.metricsKeyPrefix,
    });
    await this.store.ready(2000);
  }

  /** Sends the queued points in one batch; on failure they go back to the queue (bounded). */
  flushExternal(): Promise<void> {
    this.flushing ??= (async () => {
      const store = this.store;
      if (!store || store.status !== 'connected') return;
      const points = this.engine.takeOutbox();
      try {
        await store.write(points, this.nowSeconds());
      } catch (error) {
        this.engine.requeue(points);
        store.lastError = (error as Error).message;
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Points for /metrics/series and the history batch: from the external store when it serves the tier. */
  async points(series: string, tier: TierName, from: number, to: number): Promise<{ points: Point[]; source: 'memory' | 'metrics-store' }> {
    const store = this.store;
    if (store && store.status === 'connected' && (tier === 'second' || tier === 'minute')) {
      try {
        const points = await store.range(series, tier, from, to);
        // the newest (still open) bucket is only in memory
        const local = this.engine.query(series, tier, from, to);
        const newest = points.length ? points[points.length - 1].t : -Infinity;
        return { points: [...points, ...local.filter((p) => p.t > newest)], source: 'metrics-store' };
      } catch {
        // fall back to memory below
      }
    }
    return { points: this.engine.query(series, tier, from, to), source: 'memory' };
  }

  async seriesNames(): Promise<string[]> {
    const names = new Set(this.engine.names());
    if (this.store?.status === 'connected') for (const name of await this.store.seriesNames().catch(() => [])) names.add(name);
    return [...names].sort();
  }

  // ---------------------------------------------------------------- ticks

  private ruleCounts() {
    const rules = this.context.store.list('rule');
    const active = rules.filter((rule) => (rule.data as { status?: string }).status !== 'disabled').length;
    return { rules_total: rules.length, rules_active: active, nat_rules: this.context.store.list('nat').length };
  }

  private cpuSample(): { idle: number; total: number } {
    let idle = 0;
    let total = 0;
    for (const cpu of cpus()) {
      const t = cpu.times;
      idle += t.idle;
      total += t.user + t.nice + t.sys + t.irq + t.idle;
    }
    return { idle, total };
  }

  /** Reads every source once and builds the frame fields (the broadcaster adds seq, ts and the connections). */
  async collect(): Promise<TickInput> {
    const { platform } = this.context;
    const nowMs = this.context.clock.now();
    const [table, interfaces, pf, blocked] = await Promise.all([
      this.tables.get(0), // fresh every tick; GET /connections may reuse it for a second
      platform.traffic.interfaces().catch(() => [] as InterfaceCounters[]),
      platform.packetFilter.status(),
      platform.traffic.blocked(50).catch(() => []),
    ]);
    const cpu = this.cpuSample();
    const external = interfaces.filter((i) => i.name !== 'lo');
    const totals: TrafficTotals = { bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0 };
    for (const i of external) {
      totals.bytes_in += i.bytes_in;
      totals.bytes_out += i.bytes_out;
      totals.packets_in += i.packets_in;
      totals.packets_out += i.packets_out;
    }
    const previous = this.previous;
    const elapsed = previous ? Math.max(0.001, (nowMs - previous.at) / 1000) : 0;
    const rate = (now: number, before: number | undefined) => (previous && before !== undefined && now >= before ? (now - before) / elapsed : 0);
    const traffic = {
      ...totals,
      bps_in: Math.round(rate(totals.bytes_in, previous?.totals.bytes_in) * 8),
      bps_out: Math.round(rate(totals.bytes_out, previous?.totals.bytes_out) * 8),
      pps_in: Math.round(rate(totals.packets_in, previous?.totals.packets_in)),
      pps_out: Math.round(rate(totals.packets_out, previous?.totals.packets_out)),
    };
    const interfaceRows = external.map((i) => {
      const before = previous?.interfaces.get(i.name);
      return { ...i, bps_in: Math.round(rate(i.bytes_in, before?.bytes_in) * 8), bps_out: Math.round(rate(i.bytes_out, before?.bytes_out) * 8) };
    });
    const cpuUsage = previous && cpu.total > previous.cpu.total ? 100 * (1 - (cpu.idle - previous.cpu.idle) / (cpu.total - previous.cpu.total)) : 0;
    this.previous = { at: nowMs, totals, interfaces: new Map(interfaces.map((i) => [i.name, i])), cpu };

    const intervalSeconds = this.broadcaster.intervalMs / 1000;
    const { summary, topTalkers, dns, fresh } = summariseTable(table.flows, table.total, intervalSeconds);
    this.lastDns = dns;
    const counts = this.ruleCounts();
    const memoryTotal = totalmem();
    const memoryUsed = memoryTotal - freemem();
    const status = {
      pf_running: pf.running, pf_states: table.total, pf_rules: pf.rules, ...counts,
      packets_in: pf.packets_in, packets_out: pf.packets_out, bytes_in: pf.bytes_in, bytes_out: pf.bytes_out,
    };
    const system = {
      cpu_usage: Math.round(cpuUsage * 10) / 10, cpu_cores: cpus().length, memory_total: memoryTotal, memory_used: memoryUsed,
      memory_pct: Math.round((memoryUsed / memoryTotal) * 1000) / 10, uptime_secs: Math.floor(uptime()), hostname: hostname(),
    };
    const heap = process.memoryUsage();
    this.engine.record(nowMs / 1000, {
      'pf.states': table.total, 'pf.running': pf.running ? 1 : 0, 'pf.rules_count': pf.rules,
      'pf.packets_in': pf.packets_in, 'pf.packets_out': pf.packets_out, 'pf.bytes_in': pf.bytes_in, 'pf.bytes_out': pf.bytes_out,
      'conn.total': table.total, 'conn.tcp': summary.tcp, 'conn.udp': summary.udp, 'conn.icmp': summary.icmp, 'conn.new_rate': fresh / intervalSeconds,
      'traffic.bps_in': traffic.bps_in, 'traffic.bps_out': traffic.bps_out, 'traffic.pps_in': traffic.pps_in, 'traffic.pps_out': traffic.pps_out,
      'system.rules_active': counts.rules_active, 'system.nat_rules': counts.nat_rules, 'system.cpu_usage': system.cpu_usage, 'system.memory_used': memoryUsed,
      'runtime.event_loop_delay_ms': this.loopDelay.mean / 1e6 || 0, 'runtime.heap_used': heap.heapUsed, 'runtime.rss': heap.rss,
      'dashboard.sockets': this.broadcaster.socketCount, 'dns.flows': dns.flows,
    });
    this.loopDelay.reset();
    return {
      table,
      fields: {
        simulated: platform.simulated,
        status,
        system,
        interfaces: interfaceRows,
        traffic,
        top_talkers: topTalkers,
        ids_alerts: this.feeds.alerts.takeDelta(),
        failing_assertions: this.feeds.assertions(),
        connection_summary: summary,
        blocked,
        ...(table.error ? { connections_error: table.error } : {}),
      },
    };
  }

  /** `{"type":"history","data":[...]}`: the last ≤600 one-second entries, rebuilt from the metric rings. */
  async historyBatch(): Promise<Buffer> {
    const seq = this.broadcaster.lastStats?.seq ?? 0;
    if (this.historyCache && this.historyCache.seq === seq) return this.historyCache.bytes;
    const to = this.nowSeconds();
    const from = to - HISTORY_BATCH_ENTRIES;
    const series = ['pf.running', 'pf.states', 'pf.rules_count', 'pf.packets_in', 'pf.packets_out', 'pf.bytes_in', 'pf.bytes_out',
      'traffic.bps_in', 'traffic.bps_out', 'traffic.pps_in', 'traffic.pps_out', 'conn.total', 'conn.tcp', 'conn.udp', 'conn.icmp',
      'system.cpu_usage', 'system.memory_used'] as const;
    const columns = new Map<string, Map<number, number>>();
    const times = new Set<number>();
    for (const name of series) {
      const { points } = await this.points(name, 'second', from, to);
      columns.set(name, new Map(points.map((p) => [p.t, p.v])));
      for (const p of points) times.add(p.t);
    }
    const value = (name: string, t: number) => columns.get(name)?.get(t) ?? 0;
    const entries = [...times].sort((a, b) => a - b).slice(-HISTORY_BATCH_ENTRIES).map((t) => ({
      type: 'status_update',
      ts: t * 1000,
      status: {
        pf_running: value('pf.running', t) > 0, pf_states: value('pf.states', t), pf_rules: value('pf.rules_count', t),
        packets_in: value('pf.packets_in', t), packets_out: value('pf.packets_out', t), bytes_in: value('pf.bytes_in', t), bytes_out: value('pf.bytes_out', t),
      },
      traffic: { bps_in: value('traffic.bps_in', t), bps_out: value('traffic.bps_out', t), pps_in: value('traffic.pps_in', t), pps_out: value('traffic.pps_out', t) },
      connection_summary: { total: value('conn.total', t), tcp: value('conn.tcp', t), udp: value('conn.udp', t), icmp: value('conn.icmp', t) },
      system: { cpu_usage: value('system.cpu_usage', t), memory_used: value('system.memory_used', t) },
    }));
    const bytes = Buffer.from(JSON.stringify({ type: 'history', data: entries }));
    this.historyCache = { seq, bytes };
    return bytes;
  }

  // ---------------------------------------------------------------- DNS stream

  /** Live DNS metrics: the resolver's own statistics (through the platform) and DNS flows seen in the state table. */
  async dnsStats(): Promise<Record<string, unknown>> {
    const resolver = await this.context.platform.daemons.dnsStats().catch((error: Error) => ({ error: error.message }));
    return { ts: this.context.clock.now(), ...resolver, dns_traffic: { ...this.lastDns } };
  }

  /** One stats event per second, computed once and written to every open DNS stream. */
  async pushDnsStats(): Promise<void> {
    if (this.dnsStreams.size === 0) return;
    const data = await this.dnsStats();
    this.dnsStreams.broadcast({ type: 'stats', data });
  }

  runtime() {
    const heap = process.memoryUsage();
    const resources = process.getActiveResourcesInfo();
    return {
      event_loop_delay_ms: { mean: round2(this.loopDelay.mean / 1e6 || 0), p99: round2(this.loopDelay.percentile(99) / 1e6 || 0), max: round2(this.loopDelay.max / 1e6 || 0) },
      heap_used: heap.heapUsed,
      heap_total: heap.heapTotal,
      rss: heap.rss,
      external: heap.external,
      active_handles: resources.length,
      active_resources: countBy(resources),
      worker_threads: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
      dashboard_sockets: this.broadcaster.socketCount,
      dns_streams: this.dnsStreams.size,
      metrics_outbox_depth: this.engine.outboxDepth,
      uptime_seconds: Math.floor(process.uptime()),
    };
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;
function countBy(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[item] = (out[item] ?? 0) + 1;
  return out;
}

export const tierFor = (name: string): TierName | undefined => {
  const aliases: Record<string, TierName> = { '1s': 'second', '1m': 'minute', '1h': 'hour', '1d': 'day' };
  return (TIERS.find((t) => t.name === name)?.name ?? aliases[name]) as TierName | undefined;
};
