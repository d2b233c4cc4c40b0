/**
 * Host settings on FreeBSD: the rc.conf / loader.conf / pf equivalents of the Linux files. Assignments are
 * merged into /etc/rc.conf and /boot/loader.conf (each line through rcConfAssignment, the rest of the file kept),
 * checked with `sh -n` and read back with `sysrc -f FILE -n NAME`; the running host name is set with
 * `hostname`, sshd is checked with `sshd -t`, read back with `sshd -T` and reloaded with `service sshd reload`;
 * the state table's limit and timeouts are loaded as pf options (`pfctl -O -f FILE`) and read back with
 * `pfctl -s memory` and `pfctl -s timeouts`. Tested with fake tools on PATH and golden files.
 */
import os from 'node:os';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { conflict } from '../../core/errors.js';
import { runCommand } from '../exec.js';
import { HostFileChange, HostStepFailed, hostPath, mustRun, readHostFile } from '../host-files.js';
import {
  consoleArguments, fullHostName, issueText, mergeHostsFile, motdText, resolvConfText, sshdDropIn, sshdNotInForce,
} from '../host-texts.js';
import { STATE_TABLE_FIELDS, type HostApplied, type HostSettings, type StateTableField, type StateTableLive, type StateTableTuning } from '../host-settings.js';
import { sshKeyHolders } from '../ssh-key-holders.js';
import { rcConfAssignment } from '../../render/system/rc-conf.js';
import { pfOptionLine } from '../../compile/pf-options.js';

export const FREEBSD_SSHD_DROP_IN = '/etc/ssh/sshd_config.d/00-bulwark.conf';
export const PF_OPTIONS_FILE = '/etc/bulwark/pf-options.conf';

/** pf timeouts of each tunable (the first is the one read back). */
const PF_TIMEOUTS: Record<Exclude<StateTableField, 'max_states'>, string[]> = {
  tcp_established: ['tcp.established'],
  udp: ['udp.first', 'udp.single'],
  udp_stream: ['udp.multiple'],
  icmp: ['icmp.first', 'icmp.error'],
};

/**
 * rc.conf-style text with each named variable set in place (appended when new) or removed when null; every
 * other line is kept as it is.
 */
export function mergeAssignments(existing: string | null, values: Record<string, string | null>, field: string): string {
  const written = new Set<string>();
  const assignment = (name: string): string[] => {
    const value = values[name];
    written.add(name);
    return value === null ? [] : [rcConfAssignment(name, value, field)];
  };
  const lines: string[] = [];
  for (const line of existing ? existing.replace(/\n$/, '').split('\n') : []) {
    const name = /^\s*([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1];
    if (name === undefined || !(name in values)) lines.push(line);
    else if (!written.has(name)) lines.push(...assignment(name)); // later duplicates of the name are dropped
  }
  for (const name of Object.keys(values)) if (!written.has(name)) lines.push(...assignment(name));
  return `${lines.join('\n')}\n`;
}

/** Parses `pfctl -s timeouts` and `pfctl -s memory` into the state-table fields. */
export function parsePfTuning(timeouts: string, memory: string): StateTableLive {
  const timeout = (name: string) => {
    const match = new RegExp(`^${name.replace('.', '\\.')}\\s+(\\d+)s`, 'm').exec(timeouts);
    return match ? Number(match[1]) : null;
  };
  const states = /^states\s+hard limit\s+(\d+)/m.exec(memory);
  return {
    max_states: states ? Number(states[1]) : null,
    tcp_established: timeout('tcp.established'),
    udp: timeout('udp.single'),
    udp_stream: timeout('udp.multiple'),
    icmp: timeout('icmp.first'),
  };
}

/**
 * `root`: where the host's files are (`/` on an appliance). `live`: whether the running system is changed too
 * (by default only when the root is `/`; tests with fake tools on PATH turn it on for another root).
 */
export function createFreebsdHostSettings(root: string, log: (detail: string) => void = () => undefined, options: { live?: boolean } = {}): HostSettings {
  const live = options.live ?? (root === '/' || root === '');
  const notLive = `host root ${root}: the files were written there; the running system was not changed`;
  const applied = (change: HostFileChange, warning: string | null = live ? null : notLive, requiresReboot = false): HostApplied => ({ files: [...new Set(change.written)], warning, requires_reboot: requiresReboot });

  /** Merges assignments into an rc.conf-style file, checks it parses as shell and reads each value back with sysrc. */
  const assign = async (change: HostFileChange, file: string, values: Record<string, string | null>, field: string) => {
    change.write(file, mergeAssignments(readHostFile(change.path(file)), values, field));
    await mustRun(`${file} is not valid shell after the change`, 'sh', ['-n', change.path(file)]);
    for (const [name, value] of Object.entries(values)) {
      if (value === null) continue;
      const read = await mustRun(`reading ${name} back from ${file}`, 'sysrc', ['-f', change.path(file), '-n', name]);
      if (read.stdout.trim() !== value) throw new HostStepFailed(`${file} reads ${name} back as something else than was written`);
    }
  };

  const readPfTuning = async (): Promise<StateTableLive> => {
    const timeouts = await runCommand('pfctl', ['-s', 'timeouts']);
    const memory = await runCommand('pfctl', ['-s', 'memory']);
    if (timeouts.code !== 0 || memory.code !== 0) return Object.fromEntries(STATE_TABLE_FIELDS.map((f) => [f, null])) as StateTableLive;
    return parsePfTuning(timeouts.stdout, memory.stdout);
  };

  const pfOptions = (tuning: StateTableTuning): string => {
    const lines: string[] = [];
    for (const field of STATE_TABLE_FIELDS) {
      const value = tuning[field];
      if (value === undefined) continue;
      if (field === 'max_states') lines.push(pfOptionLine({ limit: 'states' }, value, `settings.pf_tuning.${field}`));
      else for (const timeout of PF_TIMEOUTS[field]) lines.push(pfOptionLine({ timeout }, value, `settings.pf_tuning.${field}`));
    }
    return `# Rendered by Bulwark (/settings/pf-tuning): pf options, loaded with pfctl -O\n${lines.join('\n')}\n`;
  };

  return {
    target: 'host',

    async general(desired) {
      const zone = hostPath(root, `/usr/share/zoneinfo/${desired.timezone}`);
      if (!existsSync(zone) || !readFileSync(zone).subarray(0, 4).equals(Buffer.from('TZif'))) {
        throw conflict(`system.general.timezone: ${desired.timezone} is not in the host's zone database (/usr/share/zoneinfo)`);
      }
      const change = new HostFileChange(root);
      const previousName = os.hostname();
      const name = desired.hostname ? fullHostName(desired) : null;
      await change.commit(async () => {
        if (name) {
          await assign(change, '/etc/rc.conf', { hostname: name }, 'system.general.hostname');
          change.write('/etc/hosts', mergeHostsFile(readHostFile(change.path('/etc/hosts')), desired));
        }
        change.link('/etc/localtime', `/usr/share/zoneinfo/${desired.timezone}`);
        change.write('/var/db/zoneinfo', `${desired.timezone}\n`);
        if (name && live) await mustRun('setting the running host name', 'hostname', [name]);
      }, async () => {
        if (name && live) await runCommand('hostname', [previousName]);
      }, log);
      return applied(change);
    },

    async banner(desired) {
      const change = new HostFileChange(root);
      await change.commit(async () => {
        change.write('/etc/issue', issueText(desired));
        // FreeBSD builds /etc/motd from /etc/motd.template at boot (rc.d/motd); `service motd onestart` does it now.
        change.write('/etc/motd.template', motdText(desired));
        if (live) await mustRun('regenerating /etc/motd', 'service', ['motd', 'onestart']);
      }, undefined, log);
      return applied(change);
    },

    async sshKeyHolders() {
      return sshKeyHolders(root);
    },

    async ssh(desired) {
      const change = new HostFileChange(root);
      const config = change.path('/etc/ssh/sshd_config');
      let reloaded = false;
      await change.commit(async () => {
        change.write(FREEBSD_SSHD_DROP_IN, sshdDropIn(desired));
        await assign(change, '/etc/rc.conf', { sshd_enable: desired.enabled ? 'YES' : 'NO' }, 'system.ssh.enabled');
        await mustRun('sshd -t refused the configuration with the drop-in (details in the server log)', 'sshd', ['-t', '-f', config]);
        const effective = await mustRun('reading the effective sshd configuration', 'sshd', ['-T', '-f', config]);
        const missing = sshdNotInForce(effective.stdout, desired);
        if (missing) throw new HostStepFailed(`sshd would not use ${missing}: sshd_config needs "Include /etc/ssh/sshd_config.d/*.conf" before its own settings`);
        if (live) {
          reloaded = true;
          await mustRun(desired.enabled ? 'reloading sshd' : 'stopping sshd', 'service', ['sshd', desired.enabled ? 'reload' : 'onestop']);
        }
      }, async () => reloaded && runCommand('service', ['sshd', 'reload']), log);
      return applied(change);
    },

    async console(desired) {
      const change = new HostFileChange(root);
      const serial = desired.kind !== 'video';
      consoleArguments(desired); // the same grammar checks as on linux
      const consoles = { video: 'vidconsole', serial: 'comconsole', dual: 'comconsole,vidconsole' }[desired.kind];
      await change.commit(() => assign(change, '/boot/loader.conf', {
        console: consoles,
        boot_multicons: desired.kind === 'dual' ? 'YES' : null,
        boot_serial: serial ? 'YES' : null,
        comconsole_speed: serial ? String(desired.baud) : null,
      }, 'system.console'), undefined, log);
      return applied(change, `applies at next boot${live ? '' : `; ${notLive}`}`, true);
    },

    async resolvers(desired) {
      const change = new HostFileChange(root);
      const text = resolvConfText(desired);
      await change.commit(async () => {
        change.write('/etc/resolv.conf', text);
        if (readHostFile(change.path('/etc/resolv.conf')) !== text) throw new HostStepFailed('/etc/resolv.conf does not read back as written');
      }, undefined, log);
      return applied(change);
    },

    readStateTable: readPfTuning,

    async stateTable(desired) {
      const change = new HostFileChange(root);
      const before = await readPfTuning();
      mkdirSync(hostPath(root, '/etc/bulwark'), { recursive: true });
      await change.commit(async () => {
        change.write(PF_OPTIONS_FILE, pfOptions(desired));
        if (!live) return;
        await mustRun('pfctl refused the state-table options (details in the server log)', 'pfctl', ['-O', '-f', change.path(PF_OPTIONS_FILE)]);
        const after = await readPfTuning();
        for (const field of STATE_TABLE_FIELDS) {
          if (desired[field] !== undefined && after[field] !== desired[field]) throw new HostStepFailed(`pf holds ${field} = ${after[field]} after loading ${desired[field]}`);
        }
      }, async () => {
        const restore = Object.fromEntries(STATE_TABLE_FIELDS.filter((f) => desired[f] !== undefined && before[f] !== null).map((f) => [f, before[f]!]));
        if (live && Object.keys(restore).length > 0) await runCommand('pfctl', ['-O', '-f', '-'], { input: pfOptions(restore) });
      }, log);
      return { ...applied(change), live: await readPfTuning() };
    },
  };
}
