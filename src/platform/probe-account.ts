/**
 * The account the probe tools (`ping`, `dig`, `nsupdate`) run as: Debian's `nobody`/`nogroup`, never root, so
 * a value that slipped past every grammar still cannot make a tool read root's files. `ping` keeps what it
 * needs through its own file capability (Debian's iputils-ping installs it `cap_net_raw+ep`, or setuid where
 * setcap is missing); Bulwark widens no `net.ipv4.ping_group_range` (docs/security.md).
 */
import { unavailable } from '../core/errors.js';
import { systemAccount } from './daemon-runtime.js';
import { runCommand, type CommandResult } from './exec.js';

export const PROBE_ACCOUNT = 'nobody';

/** The uid/gid to run a probe tool as; undefined when Bulwark itself does not run as root. */
export function probeAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const account = systemAccount(PROBE_ACCOUNT);
  if (!account || account.uid === 0) throw unavailable(`no unprivileged account "${PROBE_ACCOUNT}" in /etc/passwd to run the probe tools as (base-passwd provides it)`);
  return { uid: account.uid, gid: account.gid };
}

/** runCommand as the probe account, with a neutral HOME (no root dotfiles such as ~/.digrc). */
export function runUnprivileged(file: string, args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
  return runCommand(file, args, { ...options, as: probeAccount(), env: { ...process.env, HOME: '/nonexistent' } });
}
