/**
 * Reload (compile the stored configuration and apply it atomically), pending (stored vs last applied), and
 * schedule re-application: the logic between the routes and the platform.
 */
import { ALIAS_KIND, SYSTEM_PLUGIN_ALIAS_PREFIX } from './aliases.js';
import { PluginFindings } from './plugin-findings.js';
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { compileNftables } from '../../compile/nftables.js';
import { compilePf } from '../../compile/pf.js';
import type { CompiledRuleset } from '../../compile/compiled.js';
import { CompileError, localTime } from '../../compile/firewall-model.js';
import { scheduleEdge } from '../../compile/schedule-edges.js';
import type { AliasData, FirewallConfig, NatData, RuleData, ScheduleData, SystemInput, WithId } from '../../compile/firewall-types.js';
import { NO_GEOIP, type CompiledGeoIp } from '../../compile/geoip-sets.js';
import { outboundFetch } from '../../net/outbound.js';
import { BLOCKED_NFLOG_GROUP } from '../../platform/packet-filter.js';
import { parseAddress } from '../../compile/firewall-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { AppliedStore, appliedRuleset, INTERFACE_ROLE_KIND, WAN_POLICY_KIND, pendingReport, SETTINGS_KIND, takeSnapshot, type FilterSnapshot, type PendingReport } from './snapshot.js';
import type { LoadCounting } from './hit-counters.js';
import type { ConfigStore } from '../../store/config-store.js';
import { DRIFT_TOPIC, KernelSync, type ApplyMode, type DriftReport, type LoadOutcome } from './kernel-sync.js';
import { auditPacketFilter } from './audit.js';
import { LastCompile } from '../../compile/last-compile.js';
import { whenQuiet, type QuietWork } from '../../store/when-quiet.js';
import { BootRuleset } from './boot-ruleset.js';


const SCHEDULE_CHECK_MS = 60_000;
/** Writes paused this long: the stored configuration is compiled ahead of the reload that will want it. */
const COMPILE_WHEN_QUIET_MS = 20;

/** Resolves on the next turn of the event loop, after the microtasks queued before it. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Who refused a ruleset, in words for the 409 (or 503) a client gets. */
export function applyFailureWho(stage: 'check' | 'apply' | 'setup' | 'unavailable', dialect: string): string {
  switch (stage) {
    case 'check': return `${dialect} refused the ruleset`;
    // The load is its own check: the tool's parser or the kernel's commit, the message says which.
    case 'apply': return `${dialect} or the kernel refused the ruleset`;
    case 'setup': return 'the packet filter is not set up to use it';
    case 'unavailable': return 'the packet filter could not be reached';
  }
}

export type ReloadOutcome =
  | { ok: true; applied_at: string; dialect: string; rules: number; nat_rules: number; apply_mode: ApplyMode }
  | { ok: false; status: 409 | 503; error: string };

export class PacketFilterService {
  readonly applied: AppliedStore;
  /** Findings plugins add to GET /rules/analysis, about the stored rules. */
  readonly pluginFindings = new PluginFindings(() => new Set(this.storedSnapshot().objects.rule.map((rule) => rule.id)));
  private readonly listeners = new Set<(report: PendingReport) => void>();
  private report: PendingReport | undefined;
  private reportText = '';
  private recomputeQueued = false;
  private serial: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private driftTimer: NodeJS.Timeout | undefined;
  private readonly kernel: KernelSync;
  private unsubscribe: (() => void) | undefined;
  private compilingAhead: QuietWork | undefined;
  private readonly lastCompile = new LastCompile();
  /** The loaded ruleset and the fallback, kept on disk for the boot step. */
  private readonly boot: BootRuleset;
  /** Last successfully fetched url_table contents, used when a source cannot be reached. */
  private readonly urlTables = new Map<string, string[]>();
  /** Plugins whose blocklist is a system rule (ip-reputation while enabled): plugin name → its system alias. */
  private readonly pluginBlocks = new Map<string, string>();
  /** Live inputs of the system rules that other areas own (the VPN area's enabled tunnels). */
  private wireguardTunnels: () => NonNullable<SystemInput['wireguard']> = () => [];
  private clusterInterfaces: () => SystemInput['cluster'] | null = () => null;

  constructor(
    private readonly context: AppContext,
    private readonly blockLogging: SingletonModel,
    /** The WAN default block (on: inbound traffic on WAN-role interfaces is blocked unless a rule passes it). */
    private readonly wanPolicy: SingletonModel,
    /** The geo-IP area's compiled country sets (none when the area is not part of this app). */
    private readonly geoip: () => CompiledGeoIp = () => NO_GEOIP,
  ) {
    this.applied = new AppliedStore(context.db);
    // Management stays reachable on every listener the API has: plain HTTP and, when on, HTTPS (docs/https.md).
    const apiPorts = [context.config.port, ...(context.config.tlsListen ? [context.config.tlsListen.port] : [])];
    this.boot = new BootRuleset(context, () => ({ apiPorts, lanInterfaces: this.lanInterfaces() }));
    this.kernel = new KernelSync(context, (differences) => {
      const summary = differences.join('; ');
      this.context.log.warn({ differences }, 'the kernel ruleset no longer matches the applied one (drift); POST /reload repairs it');
      this.context.events.emit(DRIFT_TOPIC, { drift: true, differences });
      auditPacketFilter(this.context, { action: 'drift', actor: null, ip: null, outcome: 'failure', details: `the kernel ruleset differs from the applied one: ${summary}` });
    });
  }

  /** The rule hit counters: told around every load, so a reload never loses what the kernel counted. */
  countWith(counting: LoadCounting): void {
    this.kernel.counting = counting;
  }

  /** Whether the kernel still holds what was applied (GET /status). */
  drift(): DriftReport {
    return this.kernel.report(this.context.config.driftCheckSeconds);
  }

  /** Reads the kernel back and compares it with what was applied, after the reloads queued before it. */
  checkDrift(): Promise<void> {
    return this.serialised(() => this.kernel.check());
  }

  /**
   * The periodic check: aside from reloads, so a reload that arrives meanwhile does not wait for a whole-table
   * read (1.3 s at 10,000 rules); a check that a load overlapped is dropped (KernelSync.check). One at a time.
   */
  private checking: Promise<void> | undefined;
  checkDriftAside(): Promise<void> {
    return (this.checking ??= this.kernel.check().finally(() => (this.checking = undefined)));
  }

  /** Runs `work` after every reload, schedule re-application and check queued before it. */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work);
    // Follow-ups start on the next turn of the event loop: the caller's continuation (a reload's version record and
    // HTTP answer) runs in microtasks first, instead of behind a read-back's fork and its 4 MB of output.
    this.serial = run.catch(() => undefined).then(nextTurn).then(() => this.runFollowUps());
    return run;
  }

  /** Work a load leaves for after its caller has its answer, before the next serialised work starts. */
  private followUps: (() => Promise<void>)[] = [];
  private async runFollowUps(): Promise<void> {
    const queued = this.followUps;
    this.followUps = [];
    for (const work of queued) await work().catch((error: unknown) => this.context.log.error({ err: error }, 'could not read the loaded ruleset back'));
  }

  /** Loads a compiled ruleset; after a success the kernel is read back (off the caller's path). */
  private async load(compiled: CompiledRuleset): Promise<LoadOutcome> {
    const outcome = await this.kernel.load(compiled);
    if (outcome.ok) {
      // The full text even after a delta: the compile the delta led to is the table the kernel now holds. Written
      // off the caller's path, before the next serialised work, so the file follows the loads in their order.
      this.followUps.push(async () => this.boot.keep(compiled.text));
      this.followUps.push(() => this.kernel.recordLoaded());
    }
    return outcome;
  }

  settings(): Record<string, unknown> {
    return {
      block_logging: this.blockLogging.read().enabled as boolean,
      anti_lockout_interfaces: this.lanInterfaces(),
      wan_default_block_interfaces: this.wanPolicy.read().enabled === true ? this.interfacesWithRole('wan') : [],
    };
  }

  /** Interfaces whose role is `role` (any case), sorted. */
  interfacesWithRole(role: string): string[] {
    return this.context.store.list(INTERFACE_ROLE_KIND)
      .filter((o) => String(o.data.role).toLowerCase() === role)
      .map((o) => String(o.data.name))
      .sort();
  }

  /** Interfaces whose role is LAN (any case), sorted; empty while none is set, meaning every interface. */
  lanInterfaces(): string[] {
    return this.interfacesWithRole('lan');
  }

  storedSnapshot(): FilterSnapshot {
    return takeSnapshot(this.context.store, this.settings());
  }

  /** The packet-filter part of a candidate configuration (a restore, an import) held in a store of its own. */
  snapshotOf(store: ConfigStore): FilterSnapshot {
    const lan = store.list(INTERFACE_ROLE_KIND).filter((o) => String(o.data.role).toLowerCase() === 'lan').map((o) => String(o.data.name)).sort();
    return takeSnapshot(store, { block_logging: store.getSingleton(SETTINGS_KIND)?.enabled !== false, anti_lockout_interfaces: lan });
  }

  configFor(snapshot: FilterSnapshot, now = this.context.clock.now()): FirewallConfig {
    // A snapshot object is `{ id, data }` as the compilers take it: its list is handed over as it is (the same
    // array while the kind is unchanged, which the compile's memo tells by identity).
    const cast = <T>(kind: keyof FilterSnapshot['objects']) => snapshot.objects[kind] as unknown as readonly WithId<T>[];
    const systemAliases = [...this.pluginBlocks].map(([plugin, name]) => ({ id: `system-${name}`, data: { name, alias_type: 'plugin' as const, entries: [plugin], description: null, enabled: true } }));
    return {
      rules: cast<RuleData>('rule'),
      aliases: systemAliases.length ? [...cast<AliasData>('alias'), ...systemAliases] : cast<AliasData>('alias'),
      schedules: cast<ScheduleData>('schedule'),
      nat: cast<NatData>('nat'),
      settings: { block_logging: snapshot.settings.block_logging !== false },
      system: {
        api: { host: this.context.config.host, port: this.context.config.port },
        apiTls: this.context.config.tlsListen,
        antiLockoutInterfaces: (snapshot.settings.anti_lockout_interfaces as string[] | undefined) ?? [],
        wanDefaultBlock: (snapshot.settings.wan_default_block_interfaces as string[] | undefined) ?? [],
        nflogGroup: BLOCKED_NFLOG_GROUP,
        wireguard: this.wireguardTunnels(),
        pluginBlocks: [...this.pluginBlocks].map(([plugin, alias]) => ({ plugin, alias })),
        cluster: this.clusterInterfaces() ?? undefined,
      },
      time: localTime(now),
      urlTables: Object.fromEntries(this.urlTables),
      geoip: this.geoip(),
    };
  }

  compile(snapshot: FilterSnapshot, dialect = this.context.platform.packetFilter.dialect): CompiledRuleset {
    return this.lastCompile.compile(this.configFor(snapshot), dialect, dialect === 'pf' ? compilePf : compileNftables);
  }

  /** Compiles the stored configuration and applies it in one transaction; one reload at a time. */
  reload(): Promise<ReloadOutcome> {
    return this.serialised(() => this.reloadNow());
  }

  private async reloadNow(): Promise<ReloadOutcome> {
    const snapshot = this.storedSnapshot();
    await this.fetchUrlTables(snapshot);
    let compiled: CompiledRuleset;
    try {
      compiled = this.compile(snapshot);
    } catch (error) {
      if (!(error instanceof CompileError)) throw error;
      return { ok: false, status: 409, error: `reload failed: the configuration does not compile (${error.message}); the previous ruleset stays in force` };
    }
    const loading = this.load(compiled);
    // The digest is needed only after a success, and computed while the kernel takes the ruleset.
    const digestWhileLoading = setImmediate(() => compiled.digest);
    const result = await loading;
    clearImmediate(digestWhileLoading);
    if (!result.ok) {
      if (result.detail) this.context.log.warn({ stage: result.stage, output: result.detail }, 'the packet filter refused the ruleset');
      const who = applyFailureWho(result.stage, compiled.dialect);
      return {
        ok: false,
        status: result.stage === 'unavailable' ? 503 : 409,
        error: `reload failed: ${who}; the previous ruleset stays in force: ${result.message}`,
      };
    }
    const appliedAt = isoTime(this.context.clock.now());
    this.applied.write(snapshot, appliedAt, compiled.dialect, appliedRuleset(compiled.digest, compiled.scheduledInForce));
    this.queueRecompute();
    return { ok: true, applied_at: appliedAt, dialect: compiled.dialect, rules: compiled.ruleCount, nat_rules: compiled.natCount, apply_mode: result.mode };
  }

  /** Fetches url_table sources through the outbound guard; keeps the last good copy when one fails. */
  private async fetchUrlTables(snapshot: FilterSnapshot): Promise<void> {
    for (const { data } of snapshot.objects.alias) {
      const alias = data as unknown as AliasData;
      if (alias.alias_type !== 'url_table' || !alias.enabled) continue;
      const addresses: string[] = [];
      let failed = false;
      for (const url of alias.entries) {
        try {
          const response = await outboundFetch(url, {}, { timeoutMs: 30_000 });
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          for (const line of (await response.text()).split('\n')) {
            const entry = line.replace(/[#;].*$/, '').trim();
            const parsed = entry ? parseAddress(entry) : undefined;
            if (parsed && (parsed.kind === 'block' || parsed.kind === 'range')) addresses.push(entry);
          }
        } catch (error) {
          failed = true;
          this.context.log.warn({ alias: alias.name, url, err: (error as Error).message }, 'url_table source could not be fetched; keeping the last good copy');
        }
      }
      if (!failed || !this.urlTables.has(alias.name)) this.urlTables.set(alias.name, addresses);
    }
  }

  /** What is stored but not applied, per kind. */
  pending(): PendingReport {
    if (!this.report || this.recomputeQueued) this.recompute();
    return this.report!;
  }

  subscribe(listener: (report: PendingReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private recompute(): void {
    this.recomputeQueued = false;
    const { snapshot, appliedAt } = this.applied.read();
    const report = pendingReport(this.storedSnapshot(), snapshot, appliedAt);
    const text = JSON.stringify(report);
    const changed = text !== this.reportText;
    this.report = report;
    this.reportText = text;
    if (changed) for (const listener of this.listeners) listener(report);
  }

  /** Store writes come in bursts (a reorder touches every rule): recompute once, after the burst. */
  private queueRecompute(): void {
    if (this.recomputeQueued) return;
    this.recomputeQueued = true;
    setImmediate(() => {
      if (this.recomputeQueued) this.recompute();
    });
  }

  /**
   * Schedules are enforced by re-application: the applied configuration is recompiled for the current local
   * time, and loaded again when that changes which scheduled rules are in force (compared with the list kept
   * at the last load, by content).
   */
  async applySchedules(): Promise<boolean> {
    const { snapshot, ruleset } = this.applied.read();
    if (ruleset === null || !snapshot.objects.rule.some((r) => r.data.schedule_id)) return false;
    return this.serialised(async () => {
      const current = this.applied.read();
      if (current.ruleset === null) return false;
      const now = this.context.clock.now();
      const compiled = this.compile(current.snapshot);
      const before = new Set(current.ruleset.scheduled_in_force);
      const after = new Set(compiled.scheduledInForce);
      if (before.size === after.size && [...after].every((id) => before.has(id))) return false;
      const result = await this.load(compiled);
      if (!result.ok) {
        this.context.log.error({ message: result.message }, 'schedule re-application refused; the previous ruleset stays in force');
        return false;
      }
      this.applied.write(current.snapshot, current.appliedAt ?? isoTime(now), compiled.dialect, appliedRuleset(compiled.digest, compiled.scheduledInForce));
      // States outlive a reload: cut those of rules that left their window, and those a block rule now stops.
      const edge = scheduleEdge(this.configFor(current.snapshot, now), before);
      if (edge.ended.length + edge.started.length) {
        await this.context.platform.packetFilter.killStates(edge).catch((error: unknown) => this.context.log.error({ err: error }, 'could not kill the states of a schedule edge'));
      }
      return true;
    });
  }

  /** Where the system rules find the enabled WireGuard tunnels (the VPN area registers it). */
  useWireguardTunnels(source: () => NonNullable<SystemInput['wireguard']>): void {
    this.wireguardTunnels = source;
  }

  /** Where the system rules find the VRRP and state-sync interfaces (the cluster area registers it). */
  useClusterInterfaces(source: () => SystemInput['cluster'] | null): void {
    this.clusterInterfaces = source;
  }

  /**
   * The system rules follow live state (a tunnel started or stopped): the applied configuration is compiled
   * again and loaded when its text changed, so no pending user change is applied with it. Nothing happens while
   * no ruleset was ever applied. Answers the refusal when the packet filter refused the new text.
   */
  reapplySystemRules(): Promise<ReloadOutcome | null> {
    return this.serialised(async (): Promise<ReloadOutcome | null> => {
      const current = this.applied.read();
      if (current.ruleset === null) return null;
      const compiled = this.compile(current.snapshot);
      const loaded = appliedRuleset(compiled.digest, compiled.scheduledInForce);
      if (loaded.text_sha256 === current.ruleset.text_sha256) return null;
      const result = await this.load(compiled);
      if (!result.ok) {
        if (result.detail) this.context.log.warn({ stage: result.stage, output: result.detail }, 'the packet filter refused the system rules');
        return { ok: false, status: result.stage === 'unavailable' ? 503 : 409, error: `${applyFailureWho(result.stage, compiled.dialect)}; the previous ruleset stays in force: ${result.message}` };
      }
      const appliedAt = current.appliedAt ?? isoTime(this.context.clock.now());
      this.applied.write(current.snapshot, appliedAt, compiled.dialect, loaded);
      return { ok: true, applied_at: appliedAt, dialect: compiled.dialect, rules: compiled.ruleCount, nat_rules: compiled.natCount, apply_mode: result.mode };
    });
  }

  /**
   * A plugin's addresses for the `plugin` aliases naming it: kept like url_table contents (in memory; the plugin
   * feeds them again when it is started) and loaded at once into the applied ruleset's sets (reapplySystemRules).
   */
  async feedPluginAliases(plugin: string, entries: string[]): Promise<{ aliases: string[]; outcome: ReloadOutcome | null }> {
    const aliases = this.context.store
      .list(ALIAS_KIND)
      .filter((alias) => alias.data.alias_type === 'plugin' && (alias.data.entries as string[])[0] === plugin)
      .map((alias) => alias.data.name as string);
    const system = this.pluginBlocks.get(plugin);
    if (system) aliases.push(system);
    for (const name of aliases) this.urlTables.set(name, entries);
    return { aliases, outcome: aliases.length ? await this.reapplySystemRules() : null };
  }

  /**
   * Turns a plugin's system blocklist on or off: a system alias `sysplugin_<name>` the plugin feeds, and a system
   * rule dropping what enters from it (GET /rules/system). The applied ruleset follows at once.
   */
  async usePluginBlocklist(plugin: string, on: boolean): Promise<ReloadOutcome | null> {
    const alias = `${SYSTEM_PLUGIN_ALIAS_PREFIX}${plugin.replace(/-/g, '_')}`.slice(0, 31);
    if (on) this.pluginBlocks.set(plugin, alias);
    else {
      this.pluginBlocks.delete(plugin);
      this.urlTables.delete(alias);
    }
    return this.reapplySystemRules();
  }

  /** Resolves once the stored configuration's compile ahead is done (at once when none is pending). */
  compiledAhead(): Promise<void> {
    return this.compilingAhead?.settled() ?? Promise.resolve();
  }

  start(): void {
    try {
      this.boot.writeFallback();
    } catch (error) {
      this.context.log.error({ err: error }, 'could not write the boot fallback ruleset');
    }
    this.unsubscribe = this.context.store.onChange((change) => {
      if (change.kind === '*' || change.kind === 'pf_settings' || change.kind === WAN_POLICY_KIND || change.kind === INTERFACE_ROLE_KIND || change.kind in { rule: 1, alias: 1, schedule: 1, nat: 1 }) this.queueRecompute();
    });
    // The compile is remembered (LastCompile): the reload that follows an edit finds it done.
    this.compilingAhead = whenQuiet(this.context.store, COMPILE_WHEN_QUIET_MS, () => this.compile(this.storedSnapshot()));
    this.timer = setInterval(() => {
      this.applySchedules().catch((error: unknown) => this.context.log.error({ err: error }, 'schedule re-application failed'));
    }, SCHEDULE_CHECK_MS);
    this.timer.unref();
    const driftSeconds = this.context.config.driftCheckSeconds;
    if (driftSeconds > 0) {
      this.driftTimer = setInterval(() => {
        this.checkDriftAside().catch((error: unknown) => this.context.log.error({ err: error }, 'drift check failed'));
      }, driftSeconds * 1000);
      this.driftTimer.unref();
    }
  }

  /**
   * After a restart (a reboot, or a kernel flushed behind Bulwark's back) the kernel may hold nothing: the last
   * applied configuration is loaded in full, and read back, before the API serves.
   */
  /** Whether a ruleset was ever applied (then it is loaded again at start). */
  hasApplied(): boolean {
    return this.applied.read().ruleset !== null;
  }

  async restoreApplied(): Promise<void> {
    const { snapshot, ruleset } = this.applied.read();
    if (ruleset === null) return;
    const run = this.serialised(async () => {
      await this.fetchUrlTables(snapshot);
      const compiled = this.compile(snapshot);
      const result = await this.load(compiled);
      if (!result.ok) this.context.log.error({ message: result.message }, 'could not load the last applied ruleset at start');
    });
    await run.catch((error: unknown) => this.context.log.error({ err: error }, 'could not load the last applied ruleset at start'));
    await this.serial;
  }

  /** Resolves when the ruleset last loaded is on disk for the boot step. */
  bootRulesetSettled(): Promise<void> {
    return this.boot.settled();
  }

  stop(): void {
    this.unsubscribe?.();
    this.compilingAhead?.stop();
    this.recomputeQueued = false; // a recompute queued by the last write must not run against a closed store
    clearInterval(this.timer);
    clearInterval(this.driftTimer);
    this.listeners.clear();
  }
}
