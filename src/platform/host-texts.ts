/**
 * The text of each host file Bulwark writes, the same on every platform (the simulated platform writes it into
 * the data directory, linux and freebsd into the host's files). Every value goes through its format's one
 * writer in src/render, which refuses (409) anything outside the format's grammar.
 */
import { isHostName } from '../render/grammar.js';
import { hostsLine } from '../render/system/hosts-file.js';
import { resolvConfLine } from '../render/system/resolv-conf.js';
import { terminalText } from '../render/text.js';
import { sshdLine } from '../render/sshd/sshd-config.js';
import { consoleArgument } from '../render/system/kernel-args.js';
import { plainValueFile } from '../render/plain-value-file.js';
import { sysctlLine } from '../render/system/sysctl-conf.js';
import type { HostBanner, HostConsole, HostGeneral, HostResolvers, HostSsh, StateTableField, StateTableTuning } from './host-settings.js';

const isHostLabel = (value: string) => isHostName(value) && !value.includes('.');
const isTimezone = (value: string) => /^[A-Za-z0-9_+-]+(\/[A-Za-z0-9_+-]+)*$/.test(value) && !value.split('/').includes('..');

/** The address Debian gives the host's own name in /etc/hosts. */
export const HOSTNAME_ADDRESS = '127.0.1.1';

export const hostnameText = (general: HostGeneral): string => plainValueFile(general.hostname, isHostLabel, 'hostname file', 'system.general.hostname');
export const timezoneText = (general: HostGeneral): string => plainValueFile(general.timezone, isTimezone, 'timezone file', 'system.general.timezone');
export const fullHostName = (general: HostGeneral): string => (general.domain ? `${general.hostname}.${general.domain}` : general.hostname);

/** The /etc/hosts line of the host's own name. */
export function ownNameLine(general: HostGeneral): string {
  const names = general.domain ? [fullHostName(general), general.hostname] : [general.hostname];
  return hostsLine(HOSTNAME_ADDRESS, names, 'system.general.hostname');
}

/**
 * /etc/hosts with the host's own name on its 127.0.1.1 line: every other line is kept as it is, an earlier
 * 127.0.1.1 line is replaced, and the line goes after the IPv4 localhost line (or first).
 */
export function mergeHostsFile(existing: string | null, general: HostGeneral): string {
  const base = existing ?? `${hostsLine('127.0.0.1', ['localhost'], 'system.general')}\n${hostsLine('::1', ['localhost', 'ip6-localhost', 'ip6-loopback'], 'system.general')}\n`;
  const lines = base.replace(/\n$/, '').split('\n').filter((line) => line.trim().split(/\s+/)[0] !== HOSTNAME_ADDRESS);
  if (general.hostname) {
    const localhost = lines.findIndex((line) => line.trim().split(/\s+/)[0] === '127.0.0.1');
    lines.splice(localhost + 1, 0, ownNameLine(general));
  }
  return `${lines.join('\n')}\n`;
}

export const issueText = (banner: HostBanner): string => terminalText(banner.login_banner, 'issue');
/** /etc/issue.net is printed by telnetd/sshd Banner without escape expansion: control characters stripped only. */
export const issueNetText = (banner: HostBanner): string => terminalText(banner.login_banner, 'motd');
export const motdText = (banner: HostBanner): string => terminalText(banner.motd, 'motd');

/** The sshd drop-in: only the keywords Bulwark manages, each through sshdLine. */
export function sshdDropIn(ssh: HostSsh): string {
  const lines = [
    '# Rendered by Bulwark (system SSH settings)',
    sshdLine('Port', ssh.port, 'system.ssh.port'),
    sshdLine('PasswordAuthentication', ssh.password_auth ? 'yes' : 'no', 'system.ssh.password_auth'),
    sshdLine('PermitRootLogin', ssh.permit_root_login ? 'yes' : 'prohibit-password', 'system.ssh.permit_root_login'),
  ];
  return `${lines.join('\n')}\n`;
}

/** The values `sshd -T` must report once the drop-in is in force (lower-case keywords, as sshd -T prints them). */
export function sshdExpected(ssh: HostSsh): Record<string, string> {
  return { port: String(ssh.port), passwordauthentication: ssh.password_auth ? 'yes' : 'no', permitrootlogin: ssh.permit_root_login ? 'yes' : 'without-password' };
}

/**
 * The first managed setting `sshd -T` output does not show as rendered (`keyword value`), or null. A keyword
 * may appear on several lines (Port adds a listener per line): the value must be among them.
 */
export function sshdNotInForce(effective: string, ssh: HostSsh): string | null {
  const values = new Map<string, string[]>();
  for (const [keyword, ...rest] of effective.split('\n').map((line) => line.trim().split(/\s+/))) values.set(keyword, [...(values.get(keyword) ?? []), rest.join(' ')]);
  for (const [keyword, value] of Object.entries(sshdExpected(ssh))) if (!(values.get(keyword) ?? []).includes(value)) return `${keyword} ${value}`;
  return null;
}

/** The kernel console arguments of a console setting. */
export function consoleArguments(consoleSetting: HostConsole): string[] {
  const serial = consoleSetting.kind !== 'video';
  const video = consoleSetting.kind !== 'serial';
  // The last console= is /dev/console: the serial port when it is used.
  return [...(video ? [consoleArgument('video', 0, 'system.console.kind')] : []), ...(serial ? [consoleArgument('serial', consoleSetting.baud, 'system.console.baud')] : [])];
}

export function resolvConfText(resolvers: HostResolvers): string {
  const lines = resolvers.servers.map((server, index) => resolvConfLine('nameserver', [server], `dns.servers.${index}`));
  if (resolvers.search.length > 0) lines.push(resolvConfLine('search', resolvers.search, 'system.general.domain'));
  return `# Rendered by Bulwark (the appliance's own resolvers)\n${lines.join('\n')}\n`;
}

/** Linux conntrack sysctls of each tunable. */
export const LINUX_STATE_SYSCTLS: Record<StateTableField, string> = {
  max_states: 'net.netfilter.nf_conntrack_max',
  tcp_established: 'net.netfilter.nf_conntrack_tcp_timeout_established',
  udp: 'net.netfilter.nf_conntrack_udp_timeout',
  udp_stream: 'net.netfilter.nf_conntrack_udp_timeout_stream',
  icmp: 'net.netfilter.nf_conntrack_icmp_timeout',
};

/** The sysctl.d file of the set tunables (read again at boot). */
export function stateTableSysctlText(tuning: StateTableTuning): string {
  const lines = Object.entries(tuning).map(([field, value]) => sysctlLine(LINUX_STATE_SYSCTLS[field as StateTableField], value, `settings.pf_tuning.${field}`));
  return `# Rendered by Bulwark (/settings/pf-tuning)\n${lines.join('\n')}\n`;
}
