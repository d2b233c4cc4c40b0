/**
 * Assertions at work: transit ones judged against a candidate configuration before it is applied (the pre-apply
 * gate: 409 naming each broken one and the rule that decides it, unless forced, which is audited) and against
 * what the kernel holds after an apply; probe ones run by the box itself (the platform's gateway probes, bounded
 * in time), after an apply and on a schedule. Each assertion's last result is kept; a change of it is an event.
 */
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { HttpError } from '../../core/errors.js';
import type { ApplyGate, GateRequest } from '../../core/apply.js';
import { buildModel, CompileError, type FirewallModel } from '../../compile/firewall-model.js';
import { parseIp } from '../../compile/addresses.js';
import type { ProbeTarget } from '../../platform/routing.js';
import { adminAllowList } from '../../net/admin-allow-list.js';
import { scratchStore } from '../../store/scratch-store.js';
import type { ConfigObject, ConfigStore } from '../../store/config-store.js';
import { hostAddresses } from '../packet-filter/simulate.js';
import type { PacketFilterService } from '../packet-filter/service.js';
import { INTERFACE_ROLE_KIND, type FilterSnapshot } from '../packet-filter/snapshot.js';
import { auditPacketFilter } from '../packet-filter/audit.js';
import { ASSERTION_KIND, type AssertionData } from './schema.js';
import { interfaceOf, judgeTransit, type NetFacts, type TransitVerdict } from './transit.js';

export const ASSERTION_TOPIC = 'assertions.result';
/** A probe gets its own timeout plus this much for the tool to start and stop before it counts as failed. */
const PROBE_GRACE_MS = 1500;
/** The continuous check looks for due probe assertions this often; at most this many probes run at once. */
const SCHEDULER_TICK_MS = 1000;
const PROBE_CONCURRENCY = 8;

export interface AssertionResult {
  holds: boolean;
  /** What was observed: the packet passed or was blocked (the probe succeeded or failed), or it could not be judged. */
  outcome: 'pass' | 'block' | 'error';
  expect: 'pass' | 'block';
  decided_by: string;
  rule_id: string | null;
  detail: string;
  /** What it was judged against: the stored (pending) configuration, a candidate (restore, import), what the kernel holds, or a probe. */
  against: 'stored' | 'candidate' | 'kernel' | 'probe';
  checked_at: string;
  ms: number;
}

export interface JudgedAssertion {
  id: string;
  name: string;
  kind: 'transit' | 'probe';
  result: AssertionResult;
}

type Candidate = 'stored' | readonly ConfigObject[];

export class AssertionService implements ApplyGate {
  private facts: NetFacts = { host: { loopback: 'lo', byInterface: new Map() }, interfaces: [], roles: new Map() };
  private readonly results = new Map<string, AssertionResult>();
  private readonly lastRun = new Map<string, number>();
  private pendingCache: { key: string; broken: JudgedAssertion[] } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly context: AppContext,
    private readonly pf: PacketFilterService,
  ) {}

  /** Enabled assertions of a store, in stored order. */
  private enabled(store: ConfigStore, kind?: 'transit' | 'probe'): { id: string; data: AssertionData }[] {
    return store.list(ASSERTION_KIND)
      .map((o) => ({ id: o.id, data: o.data as unknown as AssertionData }))
      .filter((a) => a.data.enabled && (kind === undefined || a.data.kind === kind));
  }

  /** Reads the box's interfaces and addresses (asynchronous), for the synchronous judgements that follow. */
  async prepare(): Promise<void> {
    const [interfaces, host] = await Promise.all([this.context.platform.network.interfaces().catch(() => []), hostAddresses(this.context)]);
    this.facts = { host, interfaces, roles: this.facts.roles };
  }

  private factsFor(store: ConfigStore): NetFacts {
    const roles = new Map(store.list(INTERFACE_ROLE_KIND).map((o) => [String(o.data.role).toLowerCase(), String(o.data.name)]));
    return { ...this.facts, roles };
  }

  /** Every enabled transit assertion judged against one packet-filter snapshot. */
  private judgeAll(snapshot: FilterSnapshot, store: ConfigStore, against: AssertionResult['against'], assertions = this.enabled(store, 'transit')): JudgedAssertion[] {
    if (assertions.length === 0) return [];
    const started = performance.now();
    const facts = this.factsFor(store);
    let model: FirewallModel | undefined;
    let compileError: string | undefined;
    try {
      model = buildModel(this.pf.configFor(snapshot));
    } catch (error) {
      if (!(error instanceof CompileError)) throw error;
      compileError = `the configuration does not compile: ${error.message}`;
    }
    const checkedAt = isoTime(this.context.clock.now());
    return assertions.map(({ id, data }) => {
      const verdict: TransitVerdict = model ? judgeTransit(data, model, facts) : { outcome: 'error', decided_by: compileError!, rule_id: null, decision: null, detail: compileError! };
      const result: AssertionResult = {
        holds: verdict.outcome === data.expect, outcome: verdict.outcome, expect: data.expect, decided_by: verdict.decided_by, rule_id: verdict.rule_id,
        detail: verdict.detail, against, checked_at: checkedAt, ms: Math.round((performance.now() - started) * 1000) / 1000,
      };
      return { id, name: data.name, kind: 'transit' as const, result };
    });
  }

  /** The transit assertions a candidate would break (the stored configuration, or the objects of a restore or import). */
  brokenBy(candidate: Candidate): JudgedAssertion[] {
    if (candidate === 'stored') return this.pendingBroken();
    const scratch = scratchStore(candidate, this.context.clock);
    try {
      return this.judgeAll(this.pf.snapshotOf(scratch.store), scratch.store, 'candidate').filter((j) => !j.result.holds);
    } finally {
      scratch.close();
    }
  }

  /** ApplyGate: refuses a candidate that breaks a transit assertion (409 naming each and its deciding rule) unless forced. */
  findings(candidate: Candidate): string[] {
    return this.brokenBy(candidate).map((b) => b.id);
  }

  check(candidate: Candidate, request: GateRequest): void {
    const broken = this.brokenBy(candidate).filter((b) => !request.ignore?.has(b.id));
    if (broken.length === 0) return;
    const named = broken.map((b) => `"${b.name}" (expects ${b.result.expect}, ${b.result.outcome === 'error' ? `cannot be judged: ${b.result.decided_by}` : `${b.result.outcome} by ${b.result.decided_by}`}; ${b.result.detail})`);
    if (!request.force) {
      throw new HttpError(409, `${request.what} refused: it would break ${broken.length} assertion(s): ${named.slice(0, 10).join('; ')}${broken.length > 10 ? `; and ${broken.length - 10} more` : ''}. GET /api/v1/pending lists them; force=true applies anyway (audited)`);
    }
    auditPacketFilter(this.context, {
      action: 'assertions.forced', actor: request.actor, ip: request.clientIp ?? null, outcome: 'success',
      details: `${request.what} forced past ${broken.length} broken assertion(s): ${named.slice(0, 20).join('; ')}`.slice(0, 4000),
    });
  }

  /**
   * The stored configuration's broken assertions (GET /pending, the gate of a reload): judged again only when the
   * configuration, the assertions, the box's interfaces or the minute (schedules) changed.
   */
  pendingBroken(): JudgedAssertion[] {
    const { store } = this.context;
    const key = ['rule', 'alias', 'schedule', 'nat', 'pf_settings', INTERFACE_ROLE_KIND, ASSERTION_KIND].map((k) => store.generation(k)).join('/')
      + `@${Math.floor(this.context.clock.now() / 60_000)}#${this.factsKey()}`;
    if (this.pendingCache?.key !== key) this.pendingCache = { key, broken: this.judgeAll(this.pf.storedSnapshot(), store, 'stored').filter((j) => !j.result.holds) };
    return this.pendingCache.broken;
  }

  private factsKey(): string {
    return this.facts.interfaces.map((i) => `${i.name}=${i.ipv4}/${i.ipv4_prefix}`).join(',');
  }

  /** Runs one probe assertion now, bounded by its timeout (plus a grace for the tool itself). */
  async runProbe(id: string, data: AssertionData): Promise<JudgedAssertion> {
    const started = performance.now();
    const facts = this.factsFor(this.context.store);
    const source = data.source_interface!;
    const address = parseIp(source) ? source : undefined;
    const iface = address
      ? (this.facts.interfaces.find((i) => i.ipv4 === address || i.ipv6 === address || i.addresses?.includes(address))?.name ?? '')
      : interfaceOf(source, facts);
    // Probes reach special (loopback, private) addresses only where the administrator's outbound allow-list names them.
    const target: ProbeTarget = { kind: data.probe!, target: data.target!, port: data.port, expect: data.query, timeout_ms: data.timeout_ms, interface: iface, allow_list: adminAllowList(this.context.store) };
    let outcome: AssertionResult['outcome'];
    let detail: string;
    if (address && iface === '') {
      outcome = 'error';
      detail = `no interface holds the source address ${address}`;
    } else {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<{ success: false; error: string }>((resolve) => {
        timer = setTimeout(() => resolve({ success: false, error: `no answer within ${data.timeout_ms + PROBE_GRACE_MS} ms` }), data.timeout_ms + PROBE_GRACE_MS);
      });
      const probed = await Promise.race([
        this.context.platform.routing.probe(target).catch((error: unknown) => ({ success: false as const, error: (error as Error).message })),
        deadline,
      ]);
      clearTimeout(timer);
      outcome = probed.success ? 'pass' : 'block';
      detail = probed.success ? `${data.probe} ${data.target} answered from ${iface}` : `${data.probe} ${data.target} from ${iface}: ${probed.error ?? 'failed'}`;
    }
    const result: AssertionResult = {
      holds: outcome === data.expect, outcome, expect: data.expect, decided_by: `a ${data.probe} probe from ${iface || source}`, rule_id: null, detail,
      against: 'probe', checked_at: isoTime(this.context.clock.now()), ms: Math.round(performance.now() - started),
    };
    return { id, name: data.name, kind: 'probe', result };
  }

  /**
   * After an apply: the kernel is read back (a drift check against the state recorded after the load), the transit
   * assertions judged against the configuration the kernel then holds, and every probe assertion run at once.
   * `onProbe` hears each probe as it finishes, so a failing one can end the wait early.
   */
  async verifyApplied(onResult?: (judged: JudgedAssertion) => void): Promise<JudgedAssertion[]> {
    await this.prepare();
    const store = this.context.store;
    const probes = this.enabled(store, 'probe').map(async ({ id, data }) => {
      const judged = await this.runProbe(id, data);
      this.record(judged);
      onResult?.(judged);
      return judged;
    });
    const transit = (async () => {
      await this.pf.checkDrift();
      const drift = this.pf.drift();
      const applied = this.pf.applied.read();
      let judged: JudgedAssertion[];
      if (drift.drift || drift.drift_check.error || applied.appliedAt === null) {
        const why = applied.appliedAt === null ? 'nothing is applied' : drift.drift ? `the kernel no longer holds the applied ruleset: ${drift.drift_check.differences.join('; ')}` : `the kernel could not be read back: ${drift.drift_check.error}`;
        judged = this.enabled(store, 'transit').map(({ id, data }) => ({
          id, name: data.name, kind: 'transit' as const,
          result: { holds: false, outcome: 'error' as const, expect: data.expect, decided_by: why, rule_id: null, detail: why, against: 'kernel' as const, checked_at: isoTime(this.context.clock.now()), ms: 0 },
        }));
      } else {
        judged = this.judgeAll(applied.snapshot, store, 'kernel');
      }
      for (const j of judged) {
        this.record(j);
        onResult?.(j);
      }
      return judged;
    })();
    const all = await Promise.all([transit, ...probes]);
    return all.flat();
  }

  /** Judges every enabled assertion now (transit against the stored configuration, probes run) and records the results. */
  async runAll(): Promise<JudgedAssertion[]> {
    await this.prepare();
    const transit = this.judgeAll(this.pf.storedSnapshot(), this.context.store, 'stored');
    const probes = await Promise.all(this.enabled(this.context.store, 'probe').map(({ id, data }) => this.runProbe(id, data)));
    for (const judged of [...transit, ...probes]) this.record(judged);
    return [...transit, ...probes];
  }

  last(id: string): AssertionResult | null {
    return this.results.get(id) ?? null;
  }

  /** Failing assertions (last result), for the dashboard. */
  failing(): { id: string; name: string; result: AssertionResult }[] {
    const names = new Map(this.context.store.list(ASSERTION_KIND).map((o) => [o.id, String(o.data.name)]));
    return [...this.results].filter(([id, r]) => names.has(id) && !r.holds).map(([id, result]) => ({ id, name: names.get(id)!, result }));
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Keeps the result; a change of holding (or a first failure) is an event on the hub. */
  private record(judged: JudgedAssertion): void {
    const before = this.results.get(judged.id);
    this.results.set(judged.id, judged.result);
    if (before?.holds !== judged.result.holds && (before !== undefined || !judged.result.holds)) {
      this.context.events.emit(ASSERTION_TOPIC, {
        event: judged.result.holds ? 'holds_again' : 'failed', id: judged.id, name: judged.name, kind: judged.kind,
        outcome: judged.result.outcome, expect: judged.result.expect, decided_by: judged.result.decided_by, detail: judged.result.detail, against: judged.result.against,
      });
      if (!judged.result.holds) this.context.log.warn({ assertion: judged.name, ...judged.result }, 'an assertion does not hold');
    }
    for (const listener of this.listeners) listener();
  }

  /** The continuous check: every enabled probe assertion runs every interval_seconds, a few at a time. */
  startSchedule(): void {
    this.stopSchedule();
    this.timer = setInterval(() => this.runDue(), SCHEDULER_TICK_MS);
    this.timer.unref();
    this.prepare().catch((error: unknown) => this.context.log.warn({ err: error }, 'could not read the interfaces for the assertions'));
  }

  stopSchedule(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Due probe assertions, started now; the promise settles when they have finished (tests await it). */
  runDue(): Promise<void> {
    const now = this.context.clock.now();
    const due = this.enabled(this.context.store, 'probe')
      .filter(({ id, data }) => !this.running.has(id) && now - (this.lastRun.get(id) ?? -Infinity) >= data.interval_seconds * 1000)
      .slice(0, Math.max(0, PROBE_CONCURRENCY - this.running.size));
    if (due.length === 0) return Promise.resolve();
    return (async () => {
      await this.prepare().catch(() => undefined);
      await Promise.all(due.map(async ({ id, data }) => {
        this.running.add(id);
        this.lastRun.set(id, now);
        try {
          this.record(await this.runProbe(id, data));
        } catch (error) {
          this.context.log.error({ err: error, assertion: data.name }, 'probe assertion failed to run');
        } finally {
          this.running.delete(id);
        }
      }));
    })();
  }

  /** Forgets the results of assertions that no longer exist. */
  retainOnly(ids: ReadonlySet<string>): void {
    for (const id of [...this.results.keys(), ...this.lastRun.keys()]) {
      if (ids.has(id)) continue;
      this.results.delete(id);
      this.lastRun.delete(id);
    }
  }
}
