import os from 'node:os';
import type { Maintenance, OsUpdateStatus, PowerRequest } from '../maintenance.js';

/** A package set that has updates after a check, none after an install, and a reboot wish after that. */
const SIMULATED_UPDATES = ['bulwark-simulated-base 1.0.1', 'openssl 3.0.15-1~deb12u1', 'tzdata 2025b-0+deb12u1'];

export function createSimulatedMaintenance(): Maintenance {
  let pending: string[] = [];
  let needsReboot = false;
  const requests: PowerRequest[] = [];
  const status = (): OsUpdateStatus => ({
    os_version: `${os.type()} ${os.release()} (simulated)`,
    pending_os_updates: pending.length > 0,
    pending_packages: [...pending],
    needs_reboot: needsReboot,
  });
  return {
    osStatus: async () => status(),
    async checkUpdates() {
      pending = [...SIMULATED_UPDATES];
      return { status: status(), message: `${pending.length} updates available (simulated package index)` };
    },
    async previewUpdates() {
      const changes = pending.map((line) => ({ action: 'upgrade' as const, name: line.split(' ')[0], from: null, to: line.split(' ')[1] }));
      return { changes, message: `${changes.length} changes would be made (simulated package index)` };
    },
    async installUpdates() {
      const installed = pending;
      pending = [];
      if (installed.length > 0) needsReboot = true;
      return { status: status(), installed, message: installed.length ? `${installed.length} packages updated (simulated)` : 'No updates to install' };
    },
    async power(request) {
      requests.push(request);
      // The simulation records the request; nothing is powered off. A reboot clears the reboot wish.
      if (request.action === 'reboot') needsReboot = false;
      return { message: `System ${request.action === 'reboot' ? 'rebooting' : 'shutting down'} in ${request.delay_seconds} seconds (simulated: recorded only)`, executed: false };
    },
    powerRequests: () => [...requests],
  };
}
