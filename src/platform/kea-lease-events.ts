/**
 * DHCP lease events from Kea itself: its run_script hook library (libdhcp_run_script.so, kea-common) runs a small
 * script at each lease hook point, and the script writes one line to Kea's output, which the supervisor reads
 * like every daemon line. The line carries a token only the script (in Kea's runtime directory, readable by
 * Kea's group) knows, so nothing a DHCP client gets Kea to log can pass for a lease event; every field is checked.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { writeDaemonFile, type DaemonRuntime } from './daemon-runtime.js';

/** Kea's lease hook points the script reports (new and renewed leases are `leases4_committed`). */
export const LEASE_HOOK_POINTS = ['leases4_committed', 'lease4_renew', 'lease4_release', 'lease4_decline', 'lease4_expire', 'lease4_recover'] as const;

export interface DhcpLeaseEvent {
  /** Kea's hook point. */
  event: (typeof LEASE_HOOK_POINTS)[number];
  ip_address: string;
  mac_address: string;
  /** Seconds the lease is valid for (0 where Kea gives none, e.g. a release). */
  valid_lifetime: number;
  /** The client's host name, reduced to letters, digits, `.` and `-`; null when it sent none. */
  hostname: string | null;
}

/** The script's name in Kea's runtime directory. */
export const LEASE_EVENT_SCRIPT = 'lease-event.sh';
const TOKEN = /^[0-9a-f]{32}$/;
const MAC = /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/;
const HOSTNAME = /^[A-Za-z0-9.-]{1,253}$/;

/** The script's text: fixed but for the token; Kea's values only ever reach printf as arguments. */
function scriptText(token: string): string {
  return `#!/bin/sh
# Written by Bulwark: Kea's run_script hook runs this at each lease hook point ($1); one line per lease event
# on Kea's output, where Bulwark reads it (src/platform/kea-lease-events.ts).
case "$1" in
  leases4_committed)
    [ "\${LEASES4_SIZE:-0}" -gt 0 ] 2>/dev/null || exit 0
    address="$LEASES4_AT0_ADDRESS"; hwaddr="$LEASES4_AT0_HWADDR"; lifetime="$LEASES4_AT0_VALID_LIFETIME"; name="$LEASES4_AT0_HOSTNAME" ;;
  lease4_renew|lease4_release|lease4_decline|lease4_expire|lease4_recover)
    address="$LEASE4_ADDRESS"; hwaddr="$LEASE4_HWADDR"; lifetime="$LEASE4_VALID_LIFETIME"; name="$LEASE4_HOSTNAME" ;;
  *) exit 0 ;;
esac
name=$(printf '%s' "$name" | tr -cd 'A-Za-z0-9.-' | cut -c1-253)
printf 'bulwark-lease ${token} %s %s %s %s %s\\n' "$1" "$address" "$hwaddr" "\${lifetime:-0}" "\${name:--}" >&2
exit 0
`;
}

/**
 * Writes the script into Kea's runtime directory (root-owned, executable by Kea's group) and answers its path and
 * token. The token of a script already there is kept, so a Kea adopted across a restart of Bulwark still reports.
 */
export function writeLeaseEventScript(runtime: DaemonRuntime): { path: string; token: string } {
  const token = leaseEventToken(runtime) ?? randomBytes(16).toString('hex');
  const path = writeDaemonFile(runtime, [LEASE_EVENT_SCRIPT], scriptText(token));
  chmodSync(path, 0o750);
  return { path, token };
}

/** The token of the script in Kea's runtime directory, or null when there is none. */
export function leaseEventToken(runtime: DaemonRuntime): string | null {
  try {
    return /^printf 'bulwark-lease ([0-9a-f]{32}) /m.exec(readFileSync(join(runtime.dir, LEASE_EVENT_SCRIPT), 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Whether a line of Kea's output is the script's (it carries the token: read, never shown). */
export const isLeaseEventLine = (line: string): boolean => line.startsWith('bulwark-lease ');

/** The lease event a line of Kea's output reports, or null (not the script's line, another token, a bad field). */
export function parseLeaseEvent(line: string, token: string): DhcpLeaseEvent | null {
  if (!TOKEN.test(token)) return null;
  const fields = line.trim().split(' ');
  if (fields.length !== 7 || fields[0] !== 'bulwark-lease' || fields[1] !== token) return null;
  const [, , event, address, hwaddr, lifetime, name] = fields;
  if (!(LEASE_HOOK_POINTS as readonly string[]).includes(event) || isIP(address) !== 4 || !MAC.test(hwaddr.toLowerCase()) || !/^\d{1,10}$/.test(lifetime)) return null;
  if (name !== '-' && !HOSTNAME.test(name)) return null;
  return { event: event as DhcpLeaseEvent['event'], ip_address: address, mac_address: hwaddr.toLowerCase(), valid_lifetime: Number(lifetime), hostname: name === '-' ? null : name };
}
