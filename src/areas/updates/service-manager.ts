import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, systemctlRestart, systemdRuns } from './activation-files.js';
import type { InstallLayout } from './install-layout.js';

/** How the running API is restarted: its systemd unit, or Bulwark's own supervisor (install/bulwark-supervise.sh). */
export type ServiceManager = { kind: 'systemd' } | { kind: 'supervisor'; pidFile: string };

function pidIn(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * The manager of this installation, or null when none runs it (a development tree, `npm start`): then nothing
 * can restart Bulwark and an install or restart is refused before anything changes.
 */
export function detectServiceManager(layout: InstallLayout): ServiceManager | null {
  if (layout.root === '/' && systemdRuns()) return { kind: 'systemd' };
  const supervisor = pidIn(join(layout.runDir, 'supervisor.pid'));
  if (supervisor !== null && alive(supervisor)) return { kind: 'supervisor', pidFile: join(layout.runDir, 'bulwark.pid') };
  return null;
}

/**
 * Restarts the API: the unit through systemctl; under the supervisor, SIGTERM to the API process (the supervisor
 * starts `current/dist/main.js` again, so the release `current` names now comes up).
 */
export function restartService(manager: ServiceManager): void {
  if (manager.kind === 'systemd') return systemctlRestart();
  const pid = pidIn(manager.pidFile);
  if (pid !== null && alive(pid)) process.kill(pid, 'SIGTERM');
}

export function describeManager(manager: ServiceManager | null): string {
  if (!manager) return 'none';
  return manager.kind === 'systemd' ? 'systemd (bulwark.service)' : 'bulwark-supervise.sh';
}
