import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { Collection } from '../../http/collection.js';
import type { Singleton } from '../../http/singleton.js';
import { badRequest, HttpError } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { isDomainName } from '../../core/ip.js';
import type { ConfigData } from '../../store/config-store.js';
import { renderChrony, type ChronyInput } from '../../compile/chrony.js';
import type { CheckResult } from '../../platform/daemons.js';
import { dataPath, removeDataFile, writeDataFile } from '../common/data-files.js';
import { ServiceState } from '../common/service-state.js';

export const TIME_KINDS = { config: 'time_config', source: 'time_source' } as const;

export const SEEDED_SOURCES = [
  { address: 'time.cloudflare.com', nts: true },
  { address: 'time.google.com', nts: false },
  { address: 'pool.ntp.org', nts: false },
  { address: 'time.apple.com', nts: false },
];

export function validateSource(data: ConfigData): void {
  const address = String(data.address);
  if (!isIP(address) && !isDomainName(address)) throw badRequest('body.address must be a host name or an IP address');
  if (Number(data.min_poll) > Number(data.max_poll)) throw badRequest('body.min_poll must not exceed max_poll');
}

export function validateTimeConfig(data: ConfigData): void {
  if (data.nts_enabled && (!data.nts_certificate || !data.nts_private_key)) {
    throw badRequest('body.nts_certificate and body.nts_private_key are required when nts_enabled');
  }
  for (const field of ['nts_certificate', 'nts_private_key']) {
    const value = String(data[field] ?? '');
    if (value && (!value.startsWith('/') || value.includes('..') || /\s/.test(value))) throw badRequest(`body.${field} must be an absolute path without spaces or ..`);
  }
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

  constructor(
    private readonly context: AppContext,
    private readonly parts: { config: Singleton; sources: Collection },
  ) {
    this.state = new ServiceState(context.db, context.clock);
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
    return this.state.get('time', { last_apply_at: null, last_apply_result: null });
  }

  private get configFile(): string {
    return dataPath(this.context.config.dataDir, 'time', 'chrony.conf');
  }

  /** Renders a candidate and runs chronyd -p on it without installing anything. */
  async check(): Promise<CheckResult> {
    const dir = this.context.config.dataDir;
    const candidate = writeDataFile(dir, ['time', 'chrony.conf.check'], renderChrony(this.input()));
    try {
      return await this.context.platform.daemons.check('chronyd', candidate);
    } finally {
      removeDataFile(dir, ['time', 'chrony.conf.check']);
    }
  }

  private input(): ChronyInput {
    const dir = this.context.config.dataDir;
    return {
      config: this.parts.config.read() as unknown as ChronyInput['config'],
      sources: this.parts.sources.records() as unknown as ChronyInput['sources'],
      paths: {
        driftFile: dataPath(dir, 'time', 'chrony.drift'),
        commandSocket: dataPath(dir, 'time', 'chronyd.sock'),
        pidFile: dataPath(dir, 'time', 'chronyd.pid'),
        ntsDumpDir: dataPath(dir, 'time', 'nts'),
      },
    };
  }

  async renderAndCheck(): Promise<{ file: string; check: CheckResult }> {
    const dir = this.context.config.dataDir;
    const text = renderChrony(this.input());
    const candidate = writeDataFile(dir, ['time', 'chrony.conf.new'], text);
    const check = await this.context.platform.daemons.check('chronyd', candidate);
    if (!check.ok) {
      this.record(`failed: ${check.checker} rejected the configuration`);
      throw new HttpError(409, `the rendered chrony configuration was rejected by ${check.checker}: ${check.output}`);
    }
    const file = writeDataFile(dir, ['time', 'chrony.conf'], text);
    removeDataFile(dir, ['time', 'chrony.conf.new']);
    return { file, check };
  }

  async apply(): Promise<TimeActionValue> {
    const enabled = Boolean(this.parts.config.read().enabled);
    const { file, check } = await this.renderAndCheck();
    const { daemons } = this.context.platform;
    const status = enabled ? await daemons.restart('chronyd', file) : await daemons.stop('chronyd');
    this.active = status.running;
    this.record(enabled && !status.running ? `failed: ${status.last_error ?? 'chronyd did not start'}` : 'ok');
    const message = enabled
      ? status.running ? 'Time config applied and chronyd restarted' : `Time config applied but chronyd did not start: ${status.last_error ?? 'unknown error'}`
      : 'Time config saved, chronyd stopped';
    return { message, running: status.running, config_file: file, check, simulated: status.simulated };
  }

  /** start and restart render the file only when it is missing (apply is what installs a new configuration). */
  async control(action: 'start' | 'stop' | 'restart'): Promise<TimeActionValue> {
    const { daemons } = this.context.platform;
    const none: CheckResult = { checked: false, ok: true, checker: null, output: 'the installed configuration was used' };
    if (action === 'stop') {
      const status = await daemons.stop('chronyd');
      this.active = status.running;
      return { message: 'Time service stop: chronyd stopped', running: status.running, config_file: status.config_file, check: none, simulated: status.simulated };
    }
    const { file, check } = existsSync(this.configFile) ? { file: this.configFile, check: none } : await this.renderAndCheck();
    const status = action === 'start' ? await daemons.start('chronyd', file) : await daemons.restart('chronyd', file);
    this.active = status.running;
    const message = status.running ? `Time service ${action}: chronyd running${status.simulated ? ' (simulated)' : ''}` : `Time service ${action} failed: ${status.last_error ?? 'unknown error'}`;
    return { message, running: status.running, config_file: file, check, simulated: status.simulated };
  }

  private record(result: string): void {
    this.state.set('time', { last_apply_at: isoTime(this.context.clock.now()), last_apply_result: result });
  }
}
