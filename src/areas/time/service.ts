import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, conflict } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { isDomainName } from '../../core/ip.js';
import type { ConfigData } from '../../store/config-store.js';
import { renderChrony, type ChronyInput } from '../../compile/chrony.js';
import type { CheckResult } from '../../platform/daemons.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import { checkerRefusal, publicCheck, renderOr409 } from '../common/checker-refusal.js';
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

  constructor(
    private readonly context: AppContext,
    private readonly parts: { config: SingletonModel; sources: CollectionModel },
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

  /** The runtime directory chronyd reads its files from (outside the private data directory). */
  private runtime() {
    return daemonRuntime(this.context.config.dataDir, 'chronyd', this.context.platform.simulated);
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

  async renderAndCheck(): Promise<{ file: string; check: CheckResult }> {
    const candidate = this.renderCandidate('chrony.conf.new');
    const check = await this.context.platform.daemons.check('chronyd', candidate.file);
    rmSync(candidate.file, { force: true });
    if (!check.ok) {
      this.record(`failed: ${check.checker?.split(' ')[0] ?? 'the checker'} rejected the configuration`);
      throw checkerRefusal(this.context, 'chronyd', 'chrony', check, candidate.text);
    }
    const file = writeDaemonFile(this.runtime(), ['chrony.conf'], candidate.text);
    return { file, check: publicCheck(check) };
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
