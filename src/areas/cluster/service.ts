/**
 * High availability on this node: the virtual addresses of /cluster/carp run as keepalived VRRP instances, the
 * state sync of /cluster/pfsync as conntrackd, and the health checks of /cluster/health lower the priority while
 * they fail. Promote and demote move the priority (keepalived's track file), persisted so a restart keeps them.
 */
import { isIP, Socket } from 'node:net';
import type { AppContext } from '../../context.js';
import { badRequest, conflict } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import type { ValidateContext } from '../../model/declarations.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { notKept, revertWrites, snapshotKinds, writesSince } from '../../model/revert-writes.js';
import type { ModelChange } from '../../model/declarations.js';
import { CONNTRACKD_PORT } from '../../render/conntrackd/conntrackd.js';
import { DEMOTED, PROMOTED } from '../../render/keepalived/keepalived.js';
import { runCommand } from '../../platform/exec.js';
import { findProgram } from '../../platform/daemon-tools.js';
import type { HaSpec, HaStatus } from '../../platform/ha.js';
import { httpAnswers, httpCheckUrl, PROCESS_NAME_PATTERN, processRunning } from './health-probes.js';
import { FailoverHistory, type FailoverCause, type LiveRole } from './failover-history.js';
import { RoleWatch, liveRoleOf, type ClusterFrame } from './role-watch.js';
import { CLUSTER_KINDS, CarpEntry, ClusterLocal, HealthCheck, PfsyncConfig, RUNNABLE_CHECK_TYPES } from './schema.js';

const WRITE = 'ha:manage' as const;
/** The kinds keepalived and conntrackd run from: a write of any of them is applied at once. */
const APPLIED_KINDS = [CLUSTER_KINDS.carp, CLUSTER_KINDS.pfsync, CLUSTER_KINDS.local];

/** `address:port` or `[v6]:port` → its parts, or null. */
export function splitTarget(target: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(target);
  if (!match) return null;
  const host = match[1] ?? match[2];
  const port = Number(match[3]);
  return isIP(host) && port >= 1 && port <= 65535 ? { host, port } : null;
}

function validateCarp(data: ConfigData, context: ValidateContext): void {
  const ip = String(data.virtual_ip);
  const family = isIP(ip);
  if (family === 0) throw badRequest('body.virtual_ip must be an IP address');
  if (Number(data.prefix) > (family === 4 ? 32 : 128)) throw badRequest(`body.prefix must be at most ${family === 4 ? 32 : 128} for an IPv${family} address`);
  for (const other of context.store.list(CLUSTER_KINDS.carp)) {
    if (other.id === context.existing?.id) continue;
    if (other.data.vhid === data.vhid) throw conflict(`body.vhid ${String(data.vhid)} is already used by another virtual address`);
    if (other.data.virtual_ip === ip) throw conflict('body.virtual_ip is already a virtual address');
  }
}

function validateHealth(data: ConfigData): void {
  const type = String(data.check_type);
  if (!RUNNABLE_CHECK_TYPES.includes(type)) throw badRequest(`body.check_type ${type} is not supported yet (supported: ${RUNNABLE_CHECK_TYPES.join(', ')})`);
  const target = String(data.target ?? '');
  if (type === 'ping' && !isIP(target)) throw badRequest('body.target must be an IP address for a ping check');
  if (type === 'tcp_port' && !splitTarget(target)) throw badRequest('body.target must be address:port ([v6]:port) for a tcp_port check');
  if (type === 'pf_status' && target !== '') throw badRequest('body.target must be empty for a pf_status check');
  if (type === 'http_get' && !httpCheckUrl(target)) throw badRequest('body.target must be an http:// or https:// URL whose host is an IP address for an http_get check');
  if (type === 'process_running' && !PROCESS_NAME_PATTERN.test(target)) throw badRequest('body.target must be a process name (1-15 letters, digits or ._+:-) for a process_running check');
  if (Number(data.timeout_secs) > Number(data.interval_secs)) throw badRequest('body.timeout_secs must not exceed interval_secs');
}

function validatePfsync(data: ConfigData): void {
  // A patch is merged into the stored settings; with none stored, the interface must come with it.
  if (typeof data.sync_interface !== 'string') throw badRequest('body.sync_interface is required: conntrackd needs the sync link\'s interface');
  const peer = data.sync_peer;
  if (peer !== undefined && peer !== null && isIP(String(peer)) === 0) throw badRequest('body.sync_peer must be an IP address');
  if (data.enabled !== false && (peer === undefined || peer === null)) throw badRequest('body.sync_peer is required while state sync is enabled (conntrackd syncs to the peer by unicast)');
}

interface CheckState { failures: number; down: boolean; detail: string | null; timer: NodeJS.Timeout | null }

export class ClusterService {
  readonly carp: CollectionModel;
  readonly health: CollectionModel;
  readonly pfsync: SingletonModel;
  readonly local: SingletonModel;
  /** Priority adjustment, node-local: kept in the store of this node only (kind cluster_local). */
  private readonly checks = new Map<string, CheckState>();
  private started = false;
  /** The configuration sync's part of the status (sync-service.ts), once that area is wired. */
  private configSync: (() => ConfigData) | null = null;
  /** The stored objects of APPLIED_KINDS the daemons last ran from: a refused write goes back to them. */
  private inForce: ConfigObject[];
  /** Role changes, persisted (GET /cluster/failover-history); the watch records the VRRP transitions. */
  readonly history: FailoverHistory;
  private readonly watch: RoleWatch;
  private readonly frameListeners = new Map<(frame: ClusterFrame) => void, () => boolean>();
  /** The cluster node registry's peers without a key (configuration sync); none until it is wired. */
  peersWithoutKey: () => string[] = () => [];

  constructor(private readonly context: AppContext) {
    const { models } = context;
    this.carp = models.collection({ kind: CLUSTER_KINDS.carp, noun: 'virtual address', writeAccess: WRITE, schema: CarpEntry, writeOnly: ['password'], unique: ['vhid'], validate: validateCarp });
    this.health = models.collection({ kind: CLUSTER_KINDS.health, noun: 'health check', writeAccess: WRITE, schema: HealthCheck, unique: ['name'], validate: (data) => validateHealth(data) });
    this.pfsync = models.singleton({ kind: CLUSTER_KINDS.pfsync, noun: 'state sync', writeAccess: WRITE, schema: PfsyncConfig, validate: (data) => validatePfsync(data) });
    this.local = models.singleton({ kind: CLUSTER_KINDS.local, noun: 'cluster role', writeAccess: WRITE, schema: ClusterLocal });
    this.inForce = snapshotKinds(context.store, APPLIED_KINDS);
    this.history = new FailoverHistory(context.db, context.clock);
    this.watch = new RoleWatch({
      ha: context.platform.ha, history: this.history, vhids: () => this.carp.objects().map((entry) => Number(entry.data.vhid)),
      emit: (frame) => this.emitFrame(frame), listening: () => [...this.frameListeners.values()].some((wanted) => wanted()), now: () => context.clock.now(),
    });
    models.onChanged(APPLIED_KINDS, (change) => this.followChange(change.cause));
    models.onChanged([CLUSTER_KINDS.health], () => this.restartChecks());
  }

  useConfigSync(status: () => ConfigData): void {
    this.configSync = status;
  }

  role(): 'standalone' | 'primary' | 'secondary' {
    return (this.local.read() as { role: 'standalone' | 'primary' | 'secondary' }).role;
  }

  private demotion(): number {
    return Number((this.local.read() as { demotion?: number }).demotion ?? 0);
  }

  pfsyncView(): ConfigData | null {
    const data = this.pfsync.read() as ConfigData;
    return typeof data.sync_interface === 'string' ? { id: 'pfsync', ...data } : null;
  }

  failingChecks(): string[] {
    return this.health.objects().filter((check) => this.checks.get(check.id)?.down).map((check) => String(check.data.name));
  }

  spec(): HaSpec | null {
    const role = this.role();
    if (role === 'standalone') return null;
    const addresses = this.carp.objects().map((entry: ConfigObject) => ({
      vhid: Number(entry.data.vhid), virtualIp: String(entry.data.virtual_ip), prefix: Number(entry.data.prefix),
      interface: String(entry.data.interface), password: this.carp.secret(entry, 'password') ?? '',
    }));
    const sync = this.pfsyncView();
    return {
      role, addresses,
      stateSync: sync && sync.enabled !== false && typeof sync.sync_peer === 'string' ? { syncInterface: String(sync.sync_interface), syncPeer: sync.sync_peer } : null,
      demotion: this.demotion(), failingChecks: this.failingChecks().length, runtime: this.context.config,
    };
  }

  /** The interfaces the packet filter's system rules open for VRRP and the sync link. */
  systemInterfaces(): { vrrpInterfaces: string[]; syncInterface: string | null; syncPort: number } | null {
    const spec = this.spec();
    if (!spec || spec.addresses.length === 0) return null;
    return { vrrpInterfaces: [...new Set(spec.addresses.map((a) => a.interface))], syncInterface: spec.stateSync?.syncInterface ?? null, syncPort: CONNTRACKD_PORT };
  }

  async apply(): Promise<HaStatus> {
    const status = await this.context.platform.ha.apply(this.spec());
    this.inForce = snapshotKinds(this.context.store, APPLIED_KINDS);
    return status;
  }

  /**
   * Applies a write at once. When keepalived or conntrackd refuse it, the stored objects go back to the ones in
   * force (raw store calls fire no hook), the daemons are applied from them again, and the refusal answers (409).
   */
  private async followChange(cause: ModelChange['cause']): Promise<void> {
    const previous = this.inForce.find((object) => object.kind === CLUSTER_KINDS.local)?.data ?? {};
    const liveBefore = liveRoleOf(this.context.platform.ha.vrrpState());
    try {
      await this.apply();
      this.recordOperatorChange(previous, liveBefore);
      if (this.started) this.watch.check();
    } catch (error) {
      if (cause !== 'write') throw error;
      const { store, log } = this.context;
      revertWrites(store, writesSince(store, APPLIED_KINDS, this.inForce));
      await this.apply().catch((again: Error) => log.error({ err: again.message }, 'high availability: the previous configuration could not be put back'));
      throw notKept(error);
    }
  }

  /** Promote, demote and a role setting are recorded as they are applied (the VRRP transition they cause follows). */
  private recordOperatorChange(previous: ConfigData, from: LiveRole): void {
    const current = this.local.read() as { role: string; demotion?: number };
    const [wasRole, wasDemotion] = [String(previous.role ?? 'standalone'), Number(previous.demotion ?? 0)];
    const demotion = Number(current.demotion ?? 0);
    const record = (cause: FailoverCause, to: 'primary' | 'secondary' | 'standalone', detail: string) => this.history.record({ from_role: from, to_role: to, cause, detail });
    if (current.role !== wasRole) record('role_set', current.role as 'primary', `configured role ${wasRole} → ${current.role}`);
    else if (demotion > wasDemotion) record('demote', 'secondary', `priority adjustment ${wasDemotion} → ${demotion}`);
    else if (demotion < wasDemotion) record('promote', 'primary', `priority adjustment ${wasDemotion} → ${demotion}`);
  }

  /** Listens for the cluster frames of the dashboard WebSocket (wire-format §5.1); `wanted`: whether anyone reads them now. */
  onFrame(listener: (frame: ClusterFrame) => void, wanted: () => boolean = () => true): () => void {
    this.frameListeners.set(listener, wanted);
    return () => this.frameListeners.delete(listener);
  }

  private emitFrame(frame: ClusterFrame): void {
    for (const listener of this.frameListeners.keys()) {
      try {
        listener(frame);
      } catch (error) {
        this.context.log.warn({ err: (error as Error).message }, 'cluster frame listener failed');
      }
    }
  }

  async setDemotion(value: 0 | typeof DEMOTED | typeof PROMOTED): Promise<void> {
    // The change hook applies it: keepalived's configuration is unchanged, only its demotion track file is rewritten.
    this.local.write({ demotion: value });
  }

  async status(): Promise<ConfigData> {
    const live = await this.context.platform.ha.status();
    const configured = this.role();
    const role = configured === 'standalone' || live.vrrp_state === null ? configured : live.vrrp_state === 'master' ? 'primary' : 'secondary';
    const sync = this.pfsyncView();
    const peer = typeof sync?.sync_peer === 'string' ? sync.sync_peer : null;
    const configSync = this.configSync?.() ?? null;
    return {
      role, configured_role: configured, peer_reachable: peer ? await this.reachable(peer, 1) : null,
      pfsync_state_count: live.state_sync?.external_entries ?? null, last_snapshot_hash: (configSync?.local as { hash?: string } | null)?.hash ?? null,
      vrrp_state: live.vrrp_state, priority_adjustment: this.demotion(), failing_checks: this.failingChecks(),
      engine: live.engine, running: live.running, state_sync: live.state_sync, last_error: live.last_error,
      ...(configSync ? { config_sync: configSync } : {}),
    };
  }

  private async reachable(address: string, timeoutSecs: number): Promise<boolean> {
    if (this.context.platform.simulated) return false;
    const ping = findProgram('ping');
    if (!ping) return false;
    const result = await runCommand(ping, ['-n', '-q', '-c', '1', '-W', String(timeoutSecs), address], { timeoutMs: (timeoutSecs + 2) * 1000 });
    return result.code === 0;
  }

  private tcpOpen(host: string, port: number, timeoutSecs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = new Socket();
      const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
      socket.setTimeout(timeoutSecs * 1000, () => done(false));
      socket.once('error', () => done(false));
      socket.connect(port, host, () => done(true));
    });
  }

  /** Runs one check once: true when it passes. */
  async runCheck(check: ConfigObject): Promise<boolean> {
    const { check_type: type, target, timeout_secs: timeout } = check.data as { check_type: string; target: string; timeout_secs: number };
    if (type === 'ping') return this.reachable(target, timeout);
    if (type === 'tcp_port') {
      const parts = splitTarget(target);
      return parts ? this.tcpOpen(parts.host, parts.port, timeout) : false;
    }
    if (type === 'http_get') return httpAnswers(target, timeout).catch(() => false);
    if (type === 'process_running') return processRunning(target);
    if (type === 'pf_status') {
      const status = await this.context.platform.packetFilter.status().catch(() => null);
      return !!status?.running && status.rules > 0;
    }
    return false;
  }

  private async tick(check: ConfigObject): Promise<void> {
    const state = this.checks.get(check.id);
    if (!state) return;
    const ok = await this.runCheck(check).catch(() => false);
    const wasDown = state.down;
    state.failures = ok ? 0 : state.failures + 1;
    state.down = state.failures >= Number(check.data.failures_before_down);
    state.detail = ok ? null : `${String(check.data.check_type)} ${String(check.data.target)} failed ${state.failures} time(s) in a row`.replace('  ', ' ');
    if (state.down !== wasDown) {
      this.context.log.warn({ check: check.data.name, healthy: !state.down }, 'cluster health check changed');
      this.emitFrame({ type: 'health_changed', check: String(check.data.name), healthy: !state.down, detail: state.detail });
      await this.context.platform.ha.adjust(this.demotion(), this.failingChecks().length).catch(() => undefined);
    }
  }

  /** Runs every enabled check on its interval (only on a node in a pair). */
  restartChecks(): void {
    for (const state of this.checks.values()) if (state.timer) clearInterval(state.timer);
    this.checks.clear();
    if (!this.started) return;
    // A removed or changed check no longer lowers the priority (each one starts healthy again).
    void this.context.platform.ha.adjust(this.demotion(), 0).catch(() => undefined);
    if (this.role() === 'standalone') return;
    for (const check of this.health.objects()) {
      if (check.data.enabled === false) continue;
      const state: CheckState = { failures: 0, down: false, detail: null, timer: null };
      this.checks.set(check.id, state);
      state.timer = setInterval(() => void this.tick(check), Number(check.data.interval_secs) * 1000);
      state.timer.unref();
      void this.tick(check);
    }
  }

  /** Each health check as it last ran (a check not running, disabled or on a standalone node, has no outcome). */
  checkOutcomes(): { id: string; name: string; check_type: string; enabled: boolean; healthy: boolean | null; failures: number; detail: string | null }[] {
    return this.health.objects().map((check) => {
      const state = this.checks.get(check.id);
      return {
        id: check.id, name: String(check.data.name), check_type: String(check.data.check_type), enabled: check.data.enabled !== false,
        healthy: state ? !state.down : null, failures: state?.failures ?? 0, detail: state?.detail ?? null,
      };
    });
  }

  async start(): Promise<void> {
    this.started = true;
    this.restartChecks();
    try {
      await this.apply();
    } finally {
      this.watch.start();
    }
  }

  stop(): void {
    this.watch.stop();
    this.started = false;
    this.restartChecks();
  }
}
