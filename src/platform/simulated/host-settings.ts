/**
 * Host settings on the simulated platform: the same files as on linux, rendered into `<data>/system/` (and the
 * resolvers into `<data>/dns/resolv.conf`); the host is never touched, and every answer says so.
 */
import { writeDataFile } from '../../areas/common/data-files.js';
import { readHostFile } from '../host-files.js';
import {
  consoleArguments, hostnameText, issueText, mergeHostsFile, motdText, resolvConfText, sshdDropIn, stateTableSysctlText, timezoneText,
} from '../host-texts.js';
import { resolvConfLine } from '../../render/system/resolv-conf.js';
import { STATE_TABLE_FIELDS, type HostApplied, type HostSettings, type StateTableLive, type StateTableTuning } from '../host-settings.js';

const WARNING = "simulated platform: rendered into the data directory; the host's own files are not changed";
/** What a simulated state table starts from: the specification's default size and Linux's default timeouts. */
const DEFAULTS: StateTableLive = { max_states: 100_000, tcp_established: 432000, udp: 30, udp_stream: 120, icmp: 30 };

export function createSimulatedHostSettings(dataDir: string): HostSettings {
  const write = (name: string, text: string) => writeDataFile(dataDir, ['system', name], text, 0o644);
  const applied = (files: string[], requiresReboot = false): HostApplied => ({ files, warning: WARNING, requires_reboot: requiresReboot });
  let table: StateTableLive = { ...DEFAULTS };
  return {
    target: 'data-directory',
    async general(desired) {
      const hosts = `${dataDir}/system/hosts`;
      const files = [
        write('hostname', desired.hostname === '' ? '\n' : hostnameText(desired)),
        write('hosts', mergeHostsFile(readHostFile(hosts), desired)),
        write('timezone', timezoneText(desired)),
        ...(desired.domain ? [write('resolv.search', `${resolvConfLine('search', [desired.domain], 'system.general.domain')}\n`)] : []),
      ];
      return applied(files);
    },
    async banner(desired) {
      return applied([write('issue', issueText(desired)), write('motd', motdText(desired))]);
    },
    async sshKeyHolders() {
      return ['root'];
    },
    async ssh(desired) {
      return applied([write('sshd_config.d-bulwark.conf', sshdDropIn(desired)), write('sshd.enabled', `${desired.enabled ? 'yes' : 'no'}\n`)]);
    },
    async console(desired) {
      return applied([write('kernel-console.args', `${consoleArguments(desired).join(' ')}\n`)], true);
    },
    async resolvers(desired) {
      return applied([writeDataFile(dataDir, ['dns', 'resolv.conf'], resolvConfText(desired), 0o644)]);
    },
    async readStateTable() {
      return { ...table };
    },
    async stateTable(desired: StateTableTuning) {
      const files = [write('sysctl-state-table.conf', stateTableSysctlText(desired))];
      table = { ...table, ...Object.fromEntries(STATE_TABLE_FIELDS.filter((f) => desired[f] !== undefined).map((f) => [f, desired[f]])) };
      return { ...applied(files), live: { ...table } };
    },
  };
}
