import type { Maintenance, OsUpdateStatus, PowerRequest } from '../maintenance.js';
import { runCommand } from '../exec.js';

/** `pkg upgrade -n` lines such as `\tcurl: 8.1.0 -> 8.2.0`. */
export function parsePkgUpgrade(text: string): string[] {
  return [...text.matchAll(/^\s+(\S+): (\S+) -> (\S+)/gm)].map((m) => `${m[1]} ${m[3]}`);
}

/** FreeBSD pkg for package updates; `shutdown` for power. */
export function createFreebsdMaintenance(): Maintenance {
  const requests: PowerRequest[] = [];
  const status = async (): Promise<OsUpdateStatus> => {
    const version = (await runCommand('freebsd-version', [])).stdout.trim() || 'FreeBSD';
    const pending = parsePkgUpgrade((await runCommand('pkg', ['upgrade', '-n'], { timeoutMs: 120_000 })).stdout);
    return { os_version: `FreeBSD ${version}`, pending_os_updates: pending.length > 0, pending_packages: pending, needs_reboot: false };
  };
  return {
    osStatus: status,
    async checkUpdates() {
      const update = await runCommand('pkg', ['update'], { timeoutMs: 300_000 });
      const current = await status();
      return { status: current, message: update.code === 0 ? `${current.pending_packages.length} updates available` : `pkg update failed: ${update.stderr.trim()}` };
    },
    async previewUpdates() {
      const dry = await runCommand('pkg', ['upgrade', '-n'], { timeoutMs: 120_000 });
      const changes = [...dry.stdout.matchAll(/^\s+(\S+): (\S+) -> (\S+)/gm)].map((m) => ({ action: 'upgrade' as const, name: m[1], from: m[2], to: m[3] }));
      return { changes, message: `${changes.length} changes would be made` };
    },
    async installUpdates() {
      const before = (await status()).pending_packages;
      const upgrade = await runCommand('pkg', ['upgrade', '-y'], { timeoutMs: 3_600_000 });
      return { status: await status(), installed: upgrade.code === 0 ? before : [], message: upgrade.code === 0 ? `${before.length} packages updated` : `pkg upgrade failed: ${upgrade.stderr.trim()}` };
    },
    async power(request) {
      requests.push(request);
      const minutes = Math.max(0, Math.ceil(request.delay_seconds / 60));
      const result = await runCommand('shutdown', [request.action === 'reboot' ? '-r' : '-p', `+${minutes}`]);
      return result.code === 0
        ? { message: `System ${request.action === 'reboot' ? 'rebooting' : 'shutting down'} in ${minutes} minute(s)`, executed: true }
        : { message: `${request.action} failed: ${result.stderr.trim()}`, executed: false };
    },
    powerRequests: () => [...requests],
  };
}
