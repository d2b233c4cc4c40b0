/**
 * Host settings on Linux (Debian): each change writes the host's files atomically under the host root, checks
 * them with their own tool where one exists, puts them in force (sethostname, sshd reload, /proc/sys writes,
 * update-grub), reads the result back, and on any failure restores the previous files and answers 409.
 * Steps that act on the running system (host name, sshd, sysctls, update-grub) run only when the host root is
 * `/`; with another root (an image being prepared) only the files are written, and the answer says so.
 */
import os from 'node:os';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { conflict, unavailable } from '../../core/errors.js';
import { findProgram } from '../daemon-tools.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { runCommand } from '../exec.js';
import { HostFileChange, HostStepFailed, hostPath, mustRun, readHostFile } from '../host-files.js';
import {
  consoleArguments, hostnameText, issueNetText, issueText, LINUX_STATE_SYSCTLS, mergeHostsFile, motdText, resolvConfText,
  sshdDropIn, sshdNotInForce, stateTableSysctlText, timezoneText,
} from '../host-texts.js';
import { STATE_TABLE_FIELDS, type HostApplied, type HostSettings, type StateTableLive, type StateTableTuning } from '../host-settings.js';
import { sshKeyHolders } from '../ssh-key-holders.js';
import { grubConsoleDefaults } from '../../render/system/grub-default.js';
import { resolvedLine } from '../../render/system/resolved-conf.js';

export const SSHD_DROP_IN = '/etc/ssh/sshd_config.d/00-bulwark.conf';
export const GRUB_DROP_IN = '/etc/default/grub.d/bulwark.cfg';
export const STATE_TABLE_SYSCTL_FILE = '/etc/sysctl.d/90-bulwark-state-table.conf';
export const RESOLVED_DROP_IN = '/etc/systemd/resolved.conf.d/bulwark.conf';

const applied = (files: string[], warning: string | null = null, requiresReboot = false): HostApplied => ({ files, warning, requires_reboot: requiresReboot });
const procPath = (key: string) => `/proc/sys/${key.replaceAll('.', '/')}`;

function readSysctl(key: string): number | null {
  try {
    const value = Number(readFileSync(procPath(key), 'utf8').trim());
    return Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}

const readStateTable = (): StateTableLive => Object.fromEntries(STATE_TABLE_FIELDS.map((field) => [field, readSysctl(LINUX_STATE_SYSCTLS[field])])) as StateTableLive;

/** Why the kernel refused a sysctl value, in an administrator's words. */
function sysctlRefusal(key: string, value: number, error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return `${key} does not exist on this kernel (is conntrack loaded?)`;
  if (error.code === 'EACCES' || error.code === 'EPERM' || error.code === 'EROFS') {
    const why = key.endsWith('nf_conntrack_max') ? 'nf_conntrack_max is read-only outside the initial network namespace' : 'the kernel allows no change here';
    return `the kernel refused ${key} = ${value}: read-only (${why})`;
  }
  return `the kernel refused ${key} = ${value} (${error.code ?? error.message})`;
}

/**
 * `root`: where the host's files are (`/` on an appliance). `live`: whether the running system is changed too
 * (by default only when the root is `/`; tests with fake tools on PATH turn it on for another root).
 */
export function createLinuxHostSettings(root: string, log: (detail: string) => void = () => undefined, options: { live?: boolean } = {}): HostSettings {
  const live = options.live ?? (root === '/' || root === '');
  const notLive = `host root ${root}: the files were written there; the running system was not changed`;
  const systemdRuns = () => existsSync(hostPath(root, '/run/systemd/system'));
  const require = (program: string): string => {
    const path = findProgram(program);
    if (!path) throw unavailable(describeMissing(missingTool(program)));
    return path;
  };
  const files = (change: HostFileChange) => [...new Set(change.written)];

  /** systemd-resolved owns /etc/resolv.conf when it links into /run/systemd/resolve. */
  const resolvedRuns = () => {
    try {
      return lstatSync(hostPath(root, '/etc/resolv.conf')).isSymbolicLink() && readlinkSync(hostPath(root, '/etc/resolv.conf')).includes('/run/systemd/resolve/');
    } catch {
      return false;
    }
  };

  /** The running sshd's pid from its pid file (Debian: /run/sshd.pid), when it is alive. */
  const sshdPid = (): number | null => {
    const pid = Number((readHostFile(hostPath(root, '/run/sshd.pid')) ?? '').trim());
    if (!Number.isInteger(pid) || pid <= 1) return null;
    try {
      process.kill(pid, 0);
      return pid;
    } catch {
      return null;
    }
  };

  return {
    target: 'host',

    async general(desired) {
      const change = new HostFileChange(root);
      const zone = hostPath(root, `/usr/share/zoneinfo/${desired.timezone}`);
      if (!existsSync(zone) || !readFileSync(zone).subarray(0, 4).equals(Buffer.from('TZif'))) {
        throw conflict(`system.general.timezone: ${desired.timezone} is not in the host's zone database (/usr/share/zoneinfo)`);
      }
      const previousName = os.hostname();
      await change.commit(async () => {
        if (desired.hostname) {
          change.write('/etc/hostname', hostnameText(desired));
          change.write('/etc/hosts', mergeHostsFile(readHostFile(change.path('/etc/hosts')), desired));
        }
        change.link('/etc/localtime', `/usr/share/zoneinfo/${desired.timezone}`);
        change.write('/etc/timezone', timezoneText(desired));
        if (desired.hostname && live) {
          if (systemdRuns()) await mustRun('setting the running host name', require('hostnamectl'), ['set-hostname', desired.hostname]);
          else await mustRun('setting the running host name', require('hostname'), [desired.hostname]);
          if (os.hostname() !== desired.hostname) throw new HostStepFailed(`the running host name reads ${os.hostname()} after setting it`);
        }
        if (readlinkSync(change.path('/etc/localtime')) !== `/usr/share/zoneinfo/${desired.timezone}`) throw new HostStepFailed('/etc/localtime does not point at the zone after writing it');
      }, async () => {
        if (desired.hostname && live && os.hostname() !== previousName) await runCommand(systemdRuns() ? 'hostnamectl' : 'hostname', systemdRuns() ? ['set-hostname', previousName] : [previousName]);
      }, log);
      return applied(files(change), live ? null : notLive);
    },

    async banner(desired) {
      const change = new HostFileChange(root);
      const texts = { '/etc/issue': issueText(desired), '/etc/issue.net': issueNetText(desired), '/etc/motd': motdText(desired) };
      await change.commit(async () => {
        for (const [file, text] of Object.entries(texts)) change.write(file, text);
        for (const [file, text] of Object.entries(texts)) if (readHostFile(change.path(file)) !== text) throw new HostStepFailed(`${file} does not read back as written`);
      }, undefined, log);
      return applied(files(change), live ? null : notLive);
    },

    async sshKeyHolders() {
      return sshKeyHolders(root);
    },

    async ssh(desired) {
      const change = new HostFileChange(root);
      const dropIn = sshdDropIn(desired);
      if (!live) {
        // sshd_config's Include names /etc/ssh/sshd_config.d of the running system: sshd cannot check another root's files.
        await change.commit(async () => change.write(SSHD_DROP_IN, dropIn), undefined, log);
        return applied(files(change), `${notLive}; not checked with sshd -t (its Include names the running system's drop-ins)`);
      }
      const sshd = require('sshd');
      const config = hostPath(root, '/etc/ssh/sshd_config');
      if (!existsSync(config)) throw conflict('/etc/ssh/sshd_config is missing: reinstall openssh-server');
      // sshd -t insists on its privilege-separation directory (systemd's RuntimeDirectory creates it at start).
      mkdirSync(hostPath(root, '/run/sshd'), { recursive: true, mode: 0o755 });
      let warning: string | null = null;
      let reloaded = false;
      const reload = async (enabled: boolean) => {
        if (systemdRuns()) {
          if (enabled) await mustRun('enabling sshd', require('systemctl'), ['enable', 'ssh.service']).then(() => mustRun('reloading sshd', 'systemctl', ['reload-or-restart', 'ssh.service']));
          else await mustRun('stopping sshd', require('systemctl'), ['disable', '--now', 'ssh.service']);
          return;
        }
        const pid = sshdPid();
        if (pid !== null) process.kill(pid, enabled ? 'SIGHUP' : 'SIGTERM');
        else if (enabled) warning = 'sshd is not running: the settings apply when it starts';
      };
      await change.commit(async () => {
        change.write(SSHD_DROP_IN, dropIn);
        await mustRun('sshd -t refused the configuration with the drop-in (details in the server log)', sshd, ['-t', '-f', config]);
        const effective = await mustRun('reading the effective sshd configuration', sshd, ['-T', '-f', config]);
        const missing = sshdNotInForce(effective.stdout, desired);
        if (missing) throw new HostStepFailed(`sshd would not use ${missing}: another setting in /etc/ssh/sshd_config or an earlier drop-in takes precedence, or sshd_config does not include sshd_config.d`);
        reloaded = true;
        await reload(desired.enabled);
      }, async () => {
        // Only once the new drop-in reached sshd: the previous one is read again.
        if (reloaded && sshdPid() !== null) process.kill(sshdPid()!, 'SIGHUP');
      }, log);
      return applied(files(change), warning);
    },

    async console(desired) {
      const change = new HostFileChange(root);
      const args = consoleArguments(desired);
      const text = grubConsoleDefaults(args, desired.kind === 'video' ? null : desired.baud, 'system.console');
      let warning = 'applies at next boot';
      await change.commit(async () => {
        change.write(GRUB_DROP_IN, text);
        await mustRun('the boot loader drop-in is not valid shell', 'sh', ['-n', change.path(GRUB_DROP_IN)]);
        const updateGrub = findProgram('update-grub');
        if (live && updateGrub && existsSync(hostPath(root, '/boot/grub'))) await mustRun('update-grub failed (details in the server log)', updateGrub, []);
        else warning = `applies at next boot, once update-grub regenerates the boot menu (${updateGrub ? 'no /boot/grub on this host' : 'update-grub is not installed here'}${live ? '' : `; ${notLive}`})`;
      }, undefined, log);
      return applied(files(change), warning, true);
    },

    async resolvers(desired) {
      const change = new HostFileChange(root);
      if (resolvedRuns()) {
        const lines = ['# Rendered by Bulwark (the appliance\'s own resolvers)', '[Resolve]', resolvedLine('DNS', desired.servers, 'dns.servers')];
        if (desired.search.length > 0) lines.push(resolvedLine('Domains', desired.search, 'system.general.domain'));
        await change.commit(async () => {
          change.write(RESOLVED_DROP_IN, `${lines.join('\n')}\n`);
          if (!live) return;
          await mustRun('restarting systemd-resolved', require('systemctl'), ['restart', 'systemd-resolved.service']);
          const upstream = readHostFile(hostPath(root, '/run/systemd/resolve/resolv.conf')) ?? '';
          for (const server of desired.servers) if (!upstream.includes(`nameserver ${server}`)) throw new HostStepFailed(`systemd-resolved does not list ${server} after the restart`);
        }, async () => live && runCommand('systemctl', ['restart', 'systemd-resolved.service']), log);
        return applied(files(change), live ? null : notLive);
      }
      const text = resolvConfText(desired);
      await change.commit(async () => {
        change.write('/etc/resolv.conf', text);
        if (readHostFile(change.path('/etc/resolv.conf')) !== text) throw new HostStepFailed('/etc/resolv.conf does not read back as written');
      }, undefined, log);
      return applied(files(change), live ? null : notLive);
    },

    readStateTable: async () => readStateTable(),

    async stateTable(desired: StateTableTuning) {
      const change = new HostFileChange(root);
      const text = stateTableSysctlText(desired);
      const changed: [string, number][] = [];
      await change.commit(async () => {
        change.write(STATE_TABLE_SYSCTL_FILE, text);
        if (!live) return;
        for (const field of STATE_TABLE_FIELDS) {
          const value = desired[field];
          if (value === undefined) continue;
          const key = LINUX_STATE_SYSCTLS[field];
          const before = readSysctl(key);
          if (before === value) continue;
          try {
            writeFileSync(procPath(key), `${value}\n`);
          } catch (error) {
            throw new HostStepFailed(sysctlRefusal(key, value, error as NodeJS.ErrnoException));
          }
          if (before !== null) changed.push([key, before]);
          const after = readSysctl(key);
          if (after !== value) throw new HostStepFailed(`the kernel holds ${key} = ${after} after writing ${value}`);
        }
      }, async () => {
        for (const [key, before] of changed.reverse()) writeFileSync(procPath(key), `${before}\n`);
      }, log);
      return { ...applied(files(change), live ? null : notLive), live: readStateTable() };
    },
  };
}
