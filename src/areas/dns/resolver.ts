import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { HttpError } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { Semaphore } from '../../core/semaphore.js';
import { isDomainName } from '../../core/ip.js';
import { renderUnbound, ROOT_TRUST_ANCHORS, type UnboundResolver } from '../../render/unbound/unbound.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile, writeDaemonStateFile } from '../../platform/daemon-runtime.js';
import { isRegularFileNoFollow } from '../../platform/nofollow-files.js';
import { publicCheck, renderOr409 } from '../common/checker-refusal.js';
import { DaemonRecord, type DaemonReport } from '../common/daemon-record.js';
import { installAndRun, requirePassedCheck, stopDaemon } from '../common/daemon-install.js';
import type { ServiceState } from '../common/service-state.js';
import type { CheckResult, DaemonStatus } from '../../platform/daemons.js';
import type { PendingFlags } from '../../live/pending-flags.js';
import type { DnsFeed } from '../../live/feeds.js';
import type { BlocklistFilter } from './blocklist-filter.js';

interface ResolverState {
  pending: boolean;
  last_switch_at: string | null;
  last_switch_result: string | null;
  backend: string | null;
}
const INITIAL_STATE: ResolverState = { pending: false, last_switch_at: null, last_switch_result: null, backend: null };

/** The resolver (Unbound): rendering its configuration, applying it, its pending flag, status and query events. */
export class DnsResolver {
  /** Whether this process last left the daemon running (appliers skip a disabled service that is not). */
  active = false;
  readonly record: DaemonRecord;
  private readonly unsubscribers: (() => void)[] = [];
  private readonly serial = new Semaphore(1);

  constructor(
    private readonly context: AppContext,
    private readonly parts: { hosts: CollectionModel; domains: CollectionModel; acls: CollectionModel; resolver: SingletonModel },
    private readonly state: ServiceState,
    private readonly filter: BlocklistFilter,
    /** Where the resolver's pending flag is announced (GET /pending reports it as `dns`), and its events go. */
    private readonly outlets: { flags: PendingFlags; events: DnsFeed },
  ) {
    this.record = new DaemonRecord(context, 'unbound', (running) => { this.active = running; });
  }

  // ---- pending flag ----

  resolverState(): ResolverState {
    return this.state.get('dns.resolver', INITIAL_STATE);
  }

  markPending(): void {
    this.state.patch('dns.resolver', INITIAL_STATE, { pending: true });
    this.outlets.flags.announce('dns', true);
  }

  /** A resolver that is off and not running has nothing unapplied: it renders the stored configuration when it starts. */
  clearPending(): void {
    if (!this.resolverState().pending) return;
    this.state.patch('dns.resolver', INITIAL_STATE, { pending: false });
    this.outlets.flags.announce('dns', false);
  }

  /** The runtime directory Unbound reads its files from (outside the private data directory). */
  private runtime() {
    return daemonRuntime(this.context.config, 'unbound', this.context.platform.simulated);
  }

  /** Writes the filter and a candidate unbound.conf into the runtime dir. Pure rendering lives in render/unbound/. */
  async render(): Promise<{ file: string; text: string; counts: Record<string, number> }> {
    const runtime = this.runtime();
    prepareDaemonRuntime(runtime);
    const resolver = this.parts.resolver.read();
    const hosts = this.parts.hosts.objects().map((o) => o.data);
    const domains = this.parts.domains.objects().map((o) => o.data);
    const filter = this.filter.render(runtime);
    const trustAnchorFile = join(runtime.stateDir, 'root.key');
    // Unbound rewrites the trust anchor itself (RFC 5011), so it lives in the state directory it may write.
    // Anything but a regular file there (a link the unbound user planted, even to a file) is replaced.
    if (!isRegularFileNoFollow(trustAnchorFile)) writeDaemonStateFile(runtime, 'root.key', `${ROOT_TRUST_ANCHORS}\n`);
    const reservations = resolver.register_dhcp ? this.context.store.list('dhcp_reservation').map((o) => o.data).filter((r) => r.hostname) : [];
    const text = renderOr409('Unbound', () => renderUnbound({
      resolver: resolver as unknown as UnboundResolver,
      hosts: hosts as never,
      domains: domains as never,
      acls: this.parts.acls.objects().map((o) => o.data) as never,
      dhcpNames: reservations.map((r) => ({ hostname: String(r.hostname), ip: String(r.ip_address) })).filter((r) => isDomainName(r.hostname)),
      systemNameservers: readHostNameservers(),
      blocklistFilter: filter.script,
      paths: {
        directory: runtime.dir,
        pidfile: join(runtime.stateDir, 'unbound.pid'),
        controlSocket: join(runtime.stateDir, 'unbound.ctl'),
        trustAnchorFile,
        logfile: '',
      },
    }));
    return { file: writeDaemonFile(runtime, ['unbound.conf.new'], text), text, counts: filter.counts };
  }

  /** Running, pid, version, the configuration it runs and the last apply's result (for GET /dns/resolver/status). */
  async report(): Promise<DaemonReport> {
    return this.record.report(await this.context.platform.daemons.status('unbound'));
  }

  /**
   * Renders, checks with unbound-checkconf, installs the file and (re)starts or stops Unbound. 503 when Unbound
   * (or what its configuration needs) is not installed; 409 when the checker refuses, or when Unbound does not
   * come up (after the previous configuration has been restored and restarted).
   */
  apply(mode: 'apply' | 'start' | 'stop' | 'restart'): Promise<ApplyReportValue> {
    // One apply at a time: a scheduled refresh must not restart Unbound in the middle of an operator's apply.
    return this.serial.run(() => this.applyNow(mode));
  }

  private async applyNow(mode: 'apply' | 'start' | 'stop' | 'restart'): Promise<ApplyReportValue> {
    const resolver = this.parts.resolver.read();
    const enabled = mode === 'start' || mode === 'restart' ? true : mode === 'stop' ? false : Boolean(resolver.enabled);
    const previousState = this.resolverState();
    const runtime = this.runtime();
    const configFile = join(runtime.dir, 'unbound.conf');
    const base = { backend: 'unbound', enabled, previous: previousState.backend, rolled_back: false, config_file: configFile, simulated: this.context.platform.simulated };
    if (!enabled) {
      const status = await stopDaemon(this.context, this.record);
      this.active = status.running;
      this.recordSwitch('ok_disabled', false);
      const check: CheckResult = { checked: false, ok: true, checker: null, output: 'not rendered: the resolver is stopped' };
      return { ...base, running: status.running, probe_udp: status.running, probe_tcp: status.running, message: 'DNS resolver stopped', check };
    }
    let candidate: Awaited<ReturnType<DnsResolver['render']>>;
    try {
      candidate = await this.render();
    } catch (error) {
      if (error instanceof HttpError) this.recordSwitch('failed: a stored value cannot be rendered', true);
      throw error;
    }
    const check = await this.context.platform.daemons.check('unbound', candidate.file);
    rmSync(candidate.file, { force: true });
    try {
      requirePassedCheck(this.context, this.record, 'Unbound', check, candidate.text);
    } catch (error) {
      this.recordSwitch(`failed: ${check.missing ? 'not installed' : `${check.checker?.split(' ')[0] ?? 'the checker'} refused the configuration`}`, true);
      throw error;
    }
    let status: DaemonStatus;
    try {
      status = await installAndRun(this.context, this.record, { label: 'Unbound', runtime, fileName: 'unbound.conf', text: candidate.text, mode: mode === 'start' ? 'start' : 'restart' });
    } catch (error) {
      this.active = (await this.context.platform.daemons.status('unbound')).running;
      this.recordSwitch(this.record.get().last_apply_result ?? 'failed', true);
      throw error;
    }
    this.active = true;
    this.filter.installed(candidate.counts);
    this.filter.removeUnused(runtime);
    this.recordSwitch('ok', false);
    return {
      ...base,
      running: true,
      probe_udp: true,
      probe_tcp: true,
      message: `DNS resolver ${mode === 'apply' ? 'applied' : mode === 'start' ? 'started' : 'restarted'}${status.simulated ? ' (simulated)' : ''}`,
      check: publicCheck(check),
    };
  }

  /** After list changes: re-render and restart only when the resolver is running (nothing starts by surprise). */
  async reloadIfRunning(): Promise<void> {
    if (!(await this.context.platform.daemons.status('unbound')).running) return;
    try {
      await this.apply('restart');
    } catch (error) {
      this.context.log.warn({ err: error }, 'DNS reload after a list change failed');
    }
  }

  private recordSwitch(result: string, pending: boolean): void {
    this.state.patch('dns.resolver', INITIAL_STATE, { last_switch_at: isoTime(this.context.clock.now()), last_switch_result: result, backend: 'unbound', pending });
    this.outlets.flags.announce('dns', pending);
  }

  start(): void {
    // Query and block events read from the resolver go to /dns/stream (the platform bounds their rate).
    // Blocks are also announced on the event hub (plugins' dns_query hook; the platform bounds their rate).
    const unsubscribe = this.context.platform.daemons.dnsEvents((event) => {
      this.outlets.events.publish(event);
      if (event.type === 'block') this.context.events.emit(EVENT_TOPICS.dnsBlock, { ...event.data });
    });
    this.unsubscribers.push(unsubscribe);
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
  }
}

export type ApplyReportValue = {
  backend: string;
  enabled: boolean;
  running: boolean;
  probe_udp: boolean;
  probe_tcp: boolean;
  rolled_back: boolean;
  previous: string | null;
  message: string;
  config_file: string | null;
  check: CheckResult;
  simulated: boolean;
};

/** The `nameserver` lines of the host's resolv.conf. */
export function readHostNameservers(file = '/etc/resolv.conf'): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
      .filter((value): value is string => !!value && isIP(value) !== 0);
  } catch {
    return [];
  }
}
