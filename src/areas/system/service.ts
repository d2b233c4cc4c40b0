import os from 'node:os';
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import { writeDataFile } from '../common/data-files.js';
import { isHostName } from '../../render/grammar.js';
import { hostsLine } from '../../render/hosts-file.js';
import { resolvConfLine } from '../../render/resolv-conf.js';
import { terminalText } from '../../render/terminal-text.js';
import { sshdLine } from '../../render/sshd-config.js';
import { consoleArgument } from '../../render/kernel-args.js';
import { plainValueFile } from '../../render/plain-value-file.js';
import { TIMEZONE_PATTERN } from './schema.js';

const isHostLabel = (value: string) => isHostName(value) && !value.includes('.');
const isTimezone = (value: string) => new RegExp(TIMEZONE_PATTERN).test(value);

/** CPU busy share over a short window, from the kernel's per-core times. */
export async function cpuUsagePercent(windowMs = 100): Promise<number> {
  const sample = () => os.cpus().reduce((acc, cpu) => {
    const total = Object.values(cpu.times).reduce((a, b) => a + b, 0);
    return { idle: acc.idle + cpu.times.idle, total: acc.total + total };
  }, { idle: 0, total: 0 });
  const first = sample();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const second = sample();
  const total = second.total - first.total;
  return total > 0 ? Math.round((1 - (second.idle - first.idle) / total) * 1000) / 10 : 0;
}

/** Linux thermal zones (millidegrees); empty elsewhere. */
export function readTemperatures(root = '/sys/class/thermal'): { core: number; celsius: number }[] {
  try {
    return readdirSync(root)
      .filter((name) => name.startsWith('thermal_zone'))
      .map((name, index) => ({ core: index, celsius: Number(readFileSync(`${root}/${name}/temp`, 'utf8').trim()) / 1000 }))
      .filter((t) => Number.isFinite(t.celsius));
  } catch {
    return [];
  }
}

export function validateGeneral(data: ConfigData, timezones: () => string[]): void {
  const hostname = String(data.hostname);
  if (hostname && !/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/.test(hostname)) throw badRequest('body.hostname must be 1-63 letters, digits or -, starting with a letter or digit');
  const domain = String(data.domain);
  if (domain && !/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(domain)) throw badRequest('body.domain must be letters, digits, - and . with no leading or trailing dot');
  if (!timezones().includes(String(data.timezone))) throw badRequest(`body.timezone: ${String(data.timezone)} is not a zone of the system zone database (see /api/v1/system/timezones)`);
}

/** Renders the system settings into files under the data directory (what the platform installs on the host). */
export class SystemService {
  constructor(private readonly context: AppContext) {}

  private write(name: string, text: string): string {
    return writeDataFile(this.context.config.dataDir, ['system', name], text, 0o644);
  }

  private warning(): string {
    return `${this.context.platform.simulated ? 'simulated platform: ' : ''}rendered into the data directory; this release does not change the host's own files`;
  }

  applyGeneral(general: ConfigData) {
    const hostname = String(general.hostname);
    const domain = String(general.domain ?? '');
    const names = hostname === '' ? [] : domain ? [`${hostname}.${domain}`, hostname] : [hostname];
    const hosts = [
      hostsLine('127.0.0.1', ['localhost'], 'system.general'),
      ...(names.length > 0 ? [hostsLine('127.0.1.1', names, 'system.general.hostname')] : []),
      hostsLine('::1', ['localhost', 'ip6-localhost', 'ip6-loopback'], 'system.general'),
    ];
    const files = [
      this.write('hostname', hostname === '' ? '\n' : plainValueFile(hostname, isHostLabel, 'hostname file', 'system.general.hostname')),
      this.write('hosts', `${hosts.join('\n')}\n`),
      this.write('timezone', plainValueFile(String(general.timezone), isTimezone, 'timezone file', 'system.general.timezone')),
      ...(domain ? [this.write('resolv.search', `${resolvConfLine('search', [domain], 'system.general.domain')}\n`)] : []),
    ];
    return { ok: true, requires_reboot: false, requires_service_restart: null, warning: this.warning(), files };
  }

  applyBanner(banner: ConfigData) {
    const files = [this.write('issue', terminalText(String(banner.login_banner), 'issue')), this.write('motd', terminalText(String(banner.motd), 'motd'))];
    return { ok: true, requires_reboot: false, requires_service_restart: null, warning: this.warning(), files };
  }

  applySsh(ssh: ConfigData) {
    const lines = [
      '# Rendered by Bulwark',
      sshdLine('Port', ssh.port as number, 'system.ssh.port'),
      sshdLine('PasswordAuthentication', ssh.password_auth === true ? 'yes' : 'no', 'system.ssh.password_auth'),
      sshdLine('PermitRootLogin', ssh.permit_root_login === true ? 'yes' : 'prohibit-password', 'system.ssh.permit_root_login'),
    ];
    const files = [this.write('sshd_config.d-bulwark.conf', `${lines.join('\n')}\n`), this.write('sshd.enabled', `${ssh.enabled === true ? 'yes' : 'no'}\n`)];
    return { ok: true, requires_reboot: false, requires_service_restart: 'sshd', warning: this.warning(), files };
  }

  applyConsole(consoleConfig: ConfigData) {
    const serial = consoleConfig.kind !== 'video';
    const video = consoleConfig.kind !== 'serial';
    const args = [...(video ? [consoleArgument('video', 0, 'system.console.kind')] : []), ...(serial ? [consoleArgument('serial', consoleConfig.baud as number, 'system.console.baud')] : [])];
    const files = [this.write('kernel-console.args', `${args.join(' ')}\n`)];
    return { ok: true, requires_reboot: true, requires_service_restart: null, warning: this.warning(), files };
  }

  async info(general: ConfigData) {
    const base = await this.context.platform.system.info();
    let disk = { total: 0, used: 0 };
    try {
      const stats = statfsSync(this.context.config.dataDir);
      disk = { total: stats.blocks * stats.bsize, used: (stats.blocks - stats.bfree) * stats.bsize };
    } catch {
      // no statfs: leave zeros
    }
    return {
      hostname: base.hostname,
      domain: String(general.domain ?? ''),
      os_version: base.os,
      kernel: base.kernel,
      arch: base.arch,
      uptime_secs: base.uptime_seconds,
      load_avg: base.load_average,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      cpu_count: base.cpus,
      cpu_usage_pct: await cpuUsagePercent(),
      mem_total_bytes: base.memory_total_bytes,
      mem_used_bytes: base.memory_total_bytes - base.memory_free_bytes,
      disk_total_bytes: disk.total,
      disk_used_bytes: disk.used,
      temperatures_c: readTemperatures(),
      platform: this.context.platform.name,
      simulated: this.context.platform.simulated,
    };
  }
}
