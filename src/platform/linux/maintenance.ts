import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Maintenance, OsUpdateStatus, PackageChange, PowerRequest } from '../maintenance.js';
import { runCommand } from '../exec.js';

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' };

function osVersion(root: string): string {
  try {
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(readFileSync(join(root, 'etc/os-release'), 'utf8'))?.[1] ?? 'Linux';
  } catch {
    return 'Linux';
  }
}

/** The `Inst`/`Remv` lines of an apt simulation (`-s`): what the real run would change, and nothing is changed. */
export function parseAptSimulation(text: string): PackageChange[] {
  const changes: PackageChange[] = [];
  for (const line of text.split('\n')) {
    const inst = /^Inst (\S+) (?:\[([^\]]+)\] )?\((\S+)/.exec(line);
    if (inst) changes.push({ action: inst[2] ? 'upgrade' : 'install', name: inst[1], from: inst[2] ?? null, to: inst[3] });
    const remv = /^Remv (\S+)(?: \[([^\]]+)\])?/.exec(line);
    if (remv) changes.push({ action: 'remove', name: remv[1], from: remv[2] ?? null, to: null });
  }
  return changes;
}

/**
 * apt's options for a root other than `/` (BULWARK_APT_ROOT, tests): every apt path (sources, lists, cache, the dpkg
 * status) under it, and dpkg installing into it. With `/` none: the machine's own apt.
 */
export function aptRootOptions(root: string): string[] {
  if (root === '/') return [];
  const set = (option: string) => ['-o', option];
  return [
    ...set(`Dir=${root}`), ...set(`Dir::State::status=${root}/var/lib/dpkg/status`), ...set('Dir::Bin::dpkg=/usr/bin/dpkg'),
    ...set('Debug::NoLocking=1'), ...set('APT::Sandbox::User=root'),
    ...set(`DPkg::Options::=--root=${root}`), ...set('DPkg::Options::=--force-script-chrootless'), ...set('DPkg::Options::=--force-not-root'),
  ];
}

const describe = (change: PackageChange) => `${change.name} ${change.to ?? '(removed)'}`;

/** Debian's apt for updates (in `aptRoot`, `/` unless BULWARK_APT_ROOT says otherwise); `shutdown` for power. */
export function createLinuxMaintenance(aptRoot = '/'): Maintenance {
  const requests: PowerRequest[] = [];
  const options = aptRootOptions(aptRoot);
  const apt = (args: string[], timeoutMs: number) => runCommand('apt-get', [...options, ...args], { env: APT_ENV, timeoutMs });
  const simulate = async (): Promise<{ changes: PackageChange[]; error: string | null }> => {
    const simulated = await apt(['-s', '-q', 'upgrade'], 120_000);
    return { changes: parseAptSimulation(simulated.stdout), error: simulated.code === 0 ? null : simulated.stderr.trim().slice(0, 500) };
  };
  const status = async (): Promise<OsUpdateStatus> => {
    const { changes } = await simulate();
    const pending = changes.filter((change) => change.action !== 'remove').map(describe);
    const rebootFlag = ['var/run/reboot-required', 'run/reboot-required'].some((path) => existsSync(join(aptRoot, path)));
    return { os_version: osVersion(aptRoot), pending_os_updates: pending.length > 0, pending_packages: pending, needs_reboot: rebootFlag };
  };
  return {
    osStatus: status,
    async checkUpdates() {
      const update = await apt(['update', '-q'], 300_000);
      const current = await status();
      const message = update.code === 0 ? `${current.pending_packages.length} updates available` : `apt-get update failed: ${update.stderr.trim().slice(0, 500)}`;
      return { status: current, message };
    },
    async previewUpdates() {
      const { changes, error } = await simulate();
      return { changes, message: error ? `apt-get -s upgrade failed: ${error}` : `${changes.length} changes would be made` };
    },
    async installUpdates() {
      const { changes } = await simulate();
      const upgrade = await apt(['-y', '-q', 'upgrade'], 3_600_000);
      const after = await status();
      const message = upgrade.code === 0 ? `${changes.length} packages updated` : `apt-get upgrade failed: ${upgrade.stderr.trim().slice(0, 500)}`;
      return { status: after, installed: upgrade.code === 0 ? changes.map(describe) : [], message };
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
