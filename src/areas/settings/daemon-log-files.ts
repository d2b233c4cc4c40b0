/**
 * Which local log file a supervised program's lines go to. Every supervised process reports its lines on the
 * daemon event bus (platform/daemon-events.ts) under its label — `unbound`, `caddy`, `wireguard-go b13wg0`,
 * `softflowd eth1`, `charon-systemd`, `ulogd` — whether it is Bulwark's child or adopted from an earlier API
 * process. One file per program: the label's first word names it, and the rest (the interface of a per-interface
 * instance) is kept at the start of the line so the instances stay apart.
 */

/** The programs with a file of their own in logs/ (`<program>.log`). */
export const DAEMON_LOG_PROGRAMS = [
  'unbound', 'kea-dhcp4', 'kea-dhcp-ddns', 'chronyd', 'ulogd', 'softflowd', 'wireguard-go', 'charon', 'caddy', 'suricata', 'keepalived', 'conntrackd',
] as const;

const PROGRAMS: ReadonlySet<string> = new Set(DAEMON_LOG_PROGRAMS);

/** The log (its service name) and the line to write for one line a daemon reported, or null for an unknown label. */
export function daemonLogEntry(label: string, line: string): { service: string; line: string } | null {
  const [first = '', ...rest] = label.trim().split(/\s+/);
  // charon runs as charon-systemd (or plain charon): one file whichever binary it is.
  const program = first.startsWith('charon') ? 'charon' : first;
  if (!PROGRAMS.has(program)) return null;
  const instance = rest.join(' ');
  return { service: program, line: instance ? `${instance}: ${line}` : line };
}
