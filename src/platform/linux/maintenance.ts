import { existsSync, readFileSync } from 'node:fs';
import type { Maintenance, OsUpdateStatus, PowerRequest } from '../maintenance.js';
import { runCommand } from '../exec.js';

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' };

function osVersion(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'Linux';
  } catch {
    return 'Linux';
  }
}

/** `apt list --upgradable` lines: `name/suite version arch [upgradable from: old]`. */
export function parseAptUpgradable(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.includes('[upgradable from'))
    .map((line) => {
      const [nameSuite, version] = line.split(' ');
      return `${nameSuite.split('/')[0]} ${version}`;
    });
}

/** Debian's apt for updates; `shutdown` for power. Nothing here runs in tests. */
export function createLinuxMaintenance(): Maintenance {
  const requests: PowerRequest[] = [];
  const status = async (): Promise<OsUpdateStatus> => {
    const listed = await runCommand('apt', ['list', '--upgradable'], { env: APT_ENV, timeoutMs: 60_000 });
    const pending = parseAptUpgradable(listed.stdout);
    return { os_version: osVersion(), pending_os_updates: pending.length > 0, pending_packages: pending, needs_reboot: existsSync('/run/reboot-required') };
  };
  return {
    osStatus: status,
    async checkUpdates() {
      const update = await runCommand('apt-get', ['update', '-q'], { env: APT_ENV, timeoutMs: 300_000 });
      const current = await status();
      const message = update.code === 0 ? `${current.pending_packages.length} updates available` : `apt-get update failed: ${update.stderr.trim().slice(0, 500)}`;
      return { status: current, message };
    },
    async installUpdates() {
      const before = (await status()).pending_packages;
      const upgrade = await runCommand('apt-get', ['-y', '-q', 'upgrade'], { env: APT_ENV, timeoutMs: 3_600_000 });
      const after = await status();
      const message = upgrade.code === 0 ? `${before.length - after.pending_packages.length} packages updated` : `apt-get upgrade failed: ${upgrade.stderr.trim().slice(0, 500)}`;
      return { status: after, installed: upgrade.code === 0 ? before : [], message };
    },
    async power(request) {
      requests.push(request);
      const minutes = Math.max(0, Math.ceil(request.delay_seconds / 60));
      const result = await runCommand('shutdown', [request.action === 'reboot' ? '-r' : '-h', `+${minutes}`, request.reason]);
      if (result.code !== 0) return { message: `${request.action} failed: ${result.stderr.trim()}`, executed: false };
      return { message: `System ${request.action === 'reboot' ? 'rebooting' : 'shutting down'} in ${minutes} minute(s)`, executed: true };
    },
    powerRequests: () => [...requests],
  };
}
