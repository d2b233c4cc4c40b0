/**
 * What Bulwark last did with a supervised daemon's configuration: the result of the last apply, and which
 * configuration the daemon runs (the installed file's hash, and the configuration version it was rendered from
 * when the stored configuration was a recorded version). Operational state: kept in `service_state`, not
 * versioned with the configuration.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import type { DaemonName, DaemonStatus, StartOptions } from '../../platform/daemons.js';
import { ServiceState } from './service-state.js';

export interface DaemonApplyRecord {
  last_apply_at: string | null;
  /** `ok`, `ok: stopped`, or `failed: …` / `rolled back: …` with the reason. */
  last_apply_result: string | null;
  /** sha256 of the configuration file the daemon was last started with. */
  config_sha256: string | null;
  /**
   * The configuration version that file was rendered from: the active version when the stored configuration
   * equalled it, or the version a coordinated apply (POST /reload, restore) recorded; null for a configuration
   * applied from changes not recorded as a version.
   */
  config_version: number | null;
  installed_at: string | null;
  /** Installed during a coordinated apply that has not yet recorded its version. */
  awaiting_version: boolean;
  /** The applied state has the daemon running (set when it was started with an installed file, cleared when stopped). */
  should_run: boolean;
  /** The installed configuration file it was started with: what a start of Bulwark brings back (never pending edits). */
  config_file: string | null;
  start_options: StartOptions;
}

const EMPTY: DaemonApplyRecord = {
  last_apply_at: null, last_apply_result: null, config_sha256: null, config_version: null, installed_at: null, awaiting_version: false,
  should_run: false, config_file: null, start_options: {},
};

/** The service each daemon serves, as /status names it. */
const SERVICE_OF: Record<DaemonName, string> = { unbound: 'dns', 'kea-dhcp4': 'dhcp', 'kea-dhcp-ddns': 'dhcp-ddns', chronyd: 'time' };

/** The fields every daemon's status answer carries besides its own. */
export interface DaemonReport {
  running: boolean;
  pid: number | null;
  version: string;
  config_version: number | null;
  config_sha256: string | null;
  last_apply_at: string | null;
  last_apply_result: string | null;
}

export class DaemonRecord {
  private readonly state: ServiceState;
  private readonly key: string;

  /**
   * `onRestored` tells the owning service whether its daemon runs after the start-up restore (its own flag of a
   * running daemon, which decides whether a later disable has something to stop).
   */
  constructor(
    private readonly context: AppContext,
    readonly daemon: DaemonName,
    onRestored: (running: boolean) => void = () => undefined,
  ) {
    this.state = new ServiceState(context.db, context.clock);
    this.key = `daemon.${daemon}`;
    context.restore.register({
      name: SERVICE_OF[daemon],
      daemon,
      enabled: () => this.get().should_run,
      running: async () => (await context.platform.daemons.status(daemon)).running,
      appliedVersion: () => this.get().config_version,
      restore: async () => {
        const status = await this.restore();
        onRestored(status.running);
        if (!status.running) throw new Error(status.last_error ?? `${daemon} did not start`);
      },
    });
    // A coordinated apply records its version after every applier ran: stamp it on what was installed during it.
    context.apply.onApplied((event) => {
      if (this.get().awaiting_version) this.patch({ config_version: event.version.version, awaiting_version: false });
    });
  }

  get(): DaemonApplyRecord {
    return this.state.get(this.key, EMPTY);
  }

  private patch(values: Partial<DaemonApplyRecord>): void {
    this.state.patch(this.key, EMPTY, values);
  }

  /**
   * Start of Bulwark: runs the daemon with the file it was last started with — adopted untouched when an earlier
   * API process left it running with exactly that file, started otherwise. Pending edits are not rendered.
   */
  private async restore(): Promise<DaemonStatus> {
    const { config_file: file, start_options: options } = this.get();
    if (!file || !existsSync(file)) throw new Error(`the applied configuration of ${this.daemon} (${file ?? 'no file'}) is missing: apply again`);
    return this.context.platform.daemons.start(this.daemon, file, options);
  }

  /** The daemon was started with this configuration text, installed as `file`. */
  installed(text: string, file: string, options: StartOptions = {}): void {
    this.patch({
      should_run: true,
      config_file: file,
      start_options: options,
      config_sha256: createHash('sha256').update(text).digest('hex'),
      config_version: this.context.apply.versions.activeIfCurrent()?.version ?? null,
      installed_at: isoTime(this.context.clock.now()),
      awaiting_version: true,
    });
  }

  /** The daemon was stopped: it runs no configuration. */
  stopped(): void {
    this.patch({ awaiting_version: false, should_run: false });
  }

  result(result: string): void {
    this.patch({ last_apply_at: isoTime(this.context.clock.now()), last_apply_result: result });
  }

  report(status: DaemonStatus): DaemonReport {
    const record = this.get();
    return {
      running: status.running,
      pid: status.pid,
      version: status.version,
      config_version: status.running ? record.config_version : null,
      config_sha256: status.running ? record.config_sha256 : null,
      last_apply_at: record.last_apply_at,
      last_apply_result: record.last_apply_result,
    };
  }
}
