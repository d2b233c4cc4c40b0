import os from 'node:os';
import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import type { ConfigData } from '../../store/config-store.js';
import { badRequest, conflict } from '../../core/errors.js';
import { hostSettingsOf } from '../common/host-settings.js';
import type { HostApplied, HostConsole, HostGeneral, HostSsh } from '../../platform/host-settings.js';
import { sshLockout } from './ssh-lockout.js';

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

/**
 * Puts the system settings in force through the platform's host settings (src/platform/host-settings.ts): the
 * host's files, checked, reloaded and read back on linux/freebsd; rendered into the data directory on simulated.
 */
export class SystemService {
  constructor(private readonly context: AppContext) {}

  private get host() {
    return hostSettingsOf(this.context).host;
  }

  private report(applied: HostApplied, serviceRestart: string | null = null) {
    return { ok: true, requires_reboot: applied.requires_reboot, requires_service_restart: serviceRestart, warning: applied.warning, files: applied.files };
  }

  async applyGeneral(general: ConfigData) {
    const desired: HostGeneral = { hostname: String(general.hostname), domain: String(general.domain ?? ''), timezone: String(general.timezone) };
    const applied = await this.host.general(desired);
    // The domain is the resolvers' search domain: resolv.conf follows when Bulwark manages it.
    const dns = this.context.store.getSingleton('dns_system');
    if (dns?.configured === true) {
      const resolvers = await this.host.resolvers({ servers: dns.servers as string[], search: desired.domain ? [desired.domain] : [] });
      applied.files.push(...resolvers.files);
    }
    return this.report(applied);
  }

  async applyBanner(banner: ConfigData) {
    return this.report(await this.host.banner({ login_banner: String(banner.login_banner), motd: String(banner.motd) }));
  }

  async applySsh(ssh: ConfigData) {
    const desired: HostSsh = { enabled: ssh.enabled === true, port: Number(ssh.port), password_auth: ssh.password_auth === true, permit_root_login: ssh.permit_root_login === true };
    const lockout = sshLockout(desired, { apiPort: this.context.config.port, keyHolders: desired.enabled && !desired.password_auth ? await this.host.sshKeyHolders() : [] });
    if (lockout) throw conflict(`refused: ${lockout}`);
    return this.report(await this.host.ssh(desired), this.host.target === 'host' ? null : 'sshd');
  }

  async applyConsole(consoleConfig: ConfigData) {
    return this.report(await this.host.console({ kind: consoleConfig.kind as HostConsole['kind'], baud: Number(consoleConfig.baud) }));
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
