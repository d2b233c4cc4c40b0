import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, conflict } from '../../core/errors.js';
import { isDomainName } from '../../core/ip.js';
import type { ConfigData } from '../../store/config-store.js';
import { renderChrony, type ChronyInput } from '../../render/chrony/chrony.js';
import type { CheckResult } from '../../platform/daemons.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import { publicCheck, renderOr409 } from '../common/checker-refusal.js';
import { ServiceState } from '../common/service-state.js';
import { DaemonRecord, type DaemonReport } from '../common/daemon-record.js';
import { Semaphore } from '../../core/semaphore.js';
import { installAndRun, requirePassedCheck, stopDaemon } from '../common/daemon-install.js';

export const TIME_KINDS = { config: 'time_config', source: 'time_source' } as const;

export const SEEDED_SOURCES = [
  { address: 'time.cloudflare.com', nts: true },
  { address: 'time.google.com', nts: false },
  { address: 'pool.ntp.org', nts: false },
  { address: 'time.apple.com', nts: false },
];

export function validateSource(data: ConfigData): void {
  const address = String(data.address);
  if (!isIP(address) && !(isDomainName(address) && !address.includes('_'))) throw badRequest('body.address must be a host name or an IP address');
  if (Number(data.min_poll) > Number(data.max_poll)) throw badRequest('body.min_poll must not exceed max_poll');
}

/** The folder of the data directory that NTS key and certificate files must be placed in (by the administrator). */
export function ntsKeyDir(dataDir: string): string {
  return join(resolve(dataDir), 'time', 'keys');
}

/** `address:port` of a listen field: an IP address and a port of 1-65535. */
function validateListen(data: ConfigData, field: string): void {
  const value = String(data[field] ?? '');
  const match = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$|^([0-9.]+):(\d{1,5})$/.exec(value);
  const address = match?.[1] ?? match?.[3];
  const port = Number(match?.[2] ?? match?.[4]);
  if (!address || !isIP(address) || port < 1 || port > 65535) throw badRequest(`body.${field} must be address:port with an IP address`);
}

export function validateTimeConfig(data: ConfigData, dataDir: string): void {
  if (data.nts_enabled && (!data.nts_certificate || !data.nts_private_key)) {
    throw badRequest('body.nts_certificate and body.nts_private_key are required when nts_enabled');
  }
  const keyDir = ntsKeyDir(dataDir);
  for (const field of ['nts_certificate', 'nts_private_key']) {
    const value = String(data[field] ?? '');
    if (!value) continue;
    const name = value.startsWith(`${keyDir}${sep}`) ? value.slice(keyDir.length + 1) : '';
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) {
      throw badRequest(`body.${field} must be the path of a file directly inside ${keyDir} (letters, digits, ., _ and - in its name)`);
    }
  }
  for (const field of ['ntp_listen', 'nts_ke_listen']) validateListen(data, field);
}

export interface TimeActionValue {
  message: string;
  running: boolean;
  config_file: string | null;
  check: CheckResult;
  simulated: boolean;
}

/** Renders chrony.conf, checks it with `chronyd -p`, and drives chronyd through the platform. */
export class TimeService {
  /** Whether this process last left the daemon running (appliers skip a disabled service that is not). */
  active = false;
  readonly state: ServiceState;
  readonly record: DaemonRecord;
  private readonly serial = new Semaphore(1);

  constructor(
    private readonly context: AppContext,
    private readonly parts: { config: SingletonModel; sources: CollectionModel },
  ) {
    this.state = new ServiceState(context.db, context.clock);
    this.record = new DaemonRecord(context, 'chronyd', (running) => { this.active = running; });
  }

  seed(): void {
    if (this.state.get('time.seeded', { done: false }).done) return;
    this.context.store.transaction(() => {
      if (this.parts.sources.objects().length === 0) {
        for (const source of SEEDED_SOURCES) this.context.store.insert(TIME_KINDS.source, { ...source, min_poll: 4, max_poll: 10, enabled: true });
      }
    });
    this.state.set('time.seeded', { done: true });
  }

  applyState(): { last_apply_at: string | null; last_apply_result: string | null } {
    const { last_apply_at, last_apply_result } = this.record.get();
    return { last_apply_at, last_apply_result };
  }

  /** Running, pid, version, the configuration it runs and the last apply's result (for GET /time/status). */
  async report(): Promise<DaemonReport> {
    return this.record.report(await this.context.platform.daemons.status('chronyd'));
  }

  /** The runtime directory chronyd reads its files from (outside the private data directory). */
  private runtime() {
    return daemonRuntime(this.context.config, 'chronyd', this.context.platform.simulated);
  }

  private get configFile(): string {
    return join(this.runtime().dir, 'chrony.conf');
  }

  /** Renders chrony.conf as `name` in the runtime dir, with copies of the NTS files chronyd's user can read. */
  private renderCandidate(name: string): { file: string; text: string } {
    const runtime = this.runtime();
    prepareDaemonRuntime(runtime);
    const input = this.input();
    const config = input.config;
    if (config.nts_enabled && config.nts_certificate && config.nts_private_key) {
      const keyDir = ntsKeyDir(this.context.config.dataDir);
      const copy = (field: 'nts_certificate' | 'nts_private_key', target: string) => {
        const source = String(config[field]);
        // Only files the administrator placed in the key folder are ever copied to where chronyd can read them.
        if (!source.startsWith(`${keyDir}/`) || source.slice(keyDir.length + 1).includes('/')) throw conflict(`the stored time-service configuration cannot be rendered: ${field} is not a file in ${keyDir}`);
        if (!existsSync(source)) throw conflict(`${field}: the file does not exist`);
        return writeDaemonFile(runtime, ['nts', target], readFileSync(source));
      };
      input.nts = { certificate: copy('nts_certificate', 'server.crt'), key: copy('nts_private_key', 'server.key') };
    }
    const text = renderOr409('chrony', () => renderChrony(input));
    return { file: writeDaemonFile(runtime, [name], text), text };
  }

  /** Renders a candidate and runs chronyd -p on it without installing anything. */
  async check(): Promise<{ check: CheckResult; text: string }> {
    const candidate = this.renderCandidate('chrony.conf.check');
    try {
      return { check: await this.context.platform.daemons.check('chronyd', candidate.file), text: candidate.text };
    } finally {
      rmSync(candidate.file, { force: true });
    }
  }

  private input(): ChronyInput {
    const { stateDir } = this.runtime();
    return {
      config: this.parts.config.read() as unknown as ChronyInput['config'],
      sources: this.parts.sources.records() as unknown as ChronyInput['sources'],
      paths: {
        driftFile: join(stateDir, 'chrony.drift'),
        commandSocket: join(stateDir, 'chronyd.sock'),
        pidFile: join(stateDir, 'chronyd.pid'),
        ntsDumpDir: join(stateDir, 'nts'),
      },
    };
  }

  /** Renders and checks with `chronyd -p`; 503 when chrony is not installed, 409 naming the refused line. */
  private async renderAndCheck(): Promise<{ text: string; check: CheckResult }> {
    const candidate = this.renderCandidate('chrony.conf.new');
    const check = await this.context.platform.daemons.check('chronyd', candidate.file);
    rmSync(candidate.file, { force: true });
    requirePassedCheck(this.context, this.record, 'chrony', check, candidate.text);
    return { text: candidate.text, check: publicCheck(check) };
  }

  /** Installs the file and runs chronyd with it (409 and the previous file restored when chronyd does not come up). */
  private async install(text: string, check: CheckResult, mode: 'start' | 'restart'): Promise<TimeActionValue> {
    try {
      // Without clock discipline chronyd measures and serves time but never adjusts the system clock (-x).
      const options = { clockControl: Boolean(this.parts.config.read().clock_discipline) };
      const status = await installAndRun(this.context, this.record, { label: 'chrony', runtime: this.runtime(), fileName: 'chrony.conf', text, mode, options });
      return { message: '', running: true, config_file: status.config_file, check, simulated: status.simulated };
    } finally {
      this.active = (await this.context.platform.daemons.status('chronyd')).running;
    }
  }

  /** One apply or control action at a time. */
  apply(): Promise<TimeActionValue> {
    return this.serial.run(() => this.applyNow());
  }

  private async applyNow(): Promise<TimeActionValue> {
    const { text, check } = await this.renderAndCheck();
    if (!this.parts.config.read().enabled) {
      const file = writeDaemonFile(this.runtime(), ['chrony.conf'], text);
      const status = await stopDaemon(this.context, this.record);
      this.active = status.running;
      return { message: 'Time config saved, chronyd stopped', running: status.running, config_file: file, check, simulated: status.simulated };
    }
    const result = await this.install(text, check, 'restart');
    return { ...result, message: `Time config applied and chronyd restarted${result.simulated ? ' (simulated)' : ''}` };
  }

  /** start and restart render the file only when it is missing (apply is what installs a new configuration). */
  control(action: 'start' | 'stop' | 'restart'): Promise<TimeActionValue> {
    return this.serial.run(() => this.controlNow(action));
  }

  private async controlNow(action: 'start' | 'stop' | 'restart'): Promise<TimeActionValue> {
    const none: CheckResult = { checked: false, ok: true, checker: null, output: 'the installed configuration was used' };
    if (action === 'stop') {
      const status = await stopDaemon(this.context, this.record);
      this.active = status.running;
      return { message: 'Time service stop: chronyd stopped', running: status.running, config_file: status.config_file, check: none, simulated: status.simulated };
    }
    const { text, check } = existsSync(this.configFile) ? { text: readFileSync(this.configFile, 'utf8'), check: none } : await this.renderAndCheck();
    const result = await this.install(text, check, action);
    return { ...result, message: `Time service ${action}: chronyd running${result.simulated ? ' (simulated)' : ''}` };
  }
}
