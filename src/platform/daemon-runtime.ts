/**
 * Where each daemon's files live. The data directory is private to root (0700) and may sit in a private folder
 * (`/root/bulwark/data`, a `mktemp -d` folder), and the daemons run as their own users (Debian's `unbound`,
 * `_kea`, `_chrony`, `caddy`), so every file a daemon reads or writes lives in the runtime tree, a path Bulwark
 * owns and keeps traversable, never below the data directory:
 *
 *   <runtime root>/                     root:root 0755 (and every folder above it root-owned, not group/world-writable)
 *   <runtime root>/<daemon>/            root:<daemon group> 0750   configuration and includes (files 0640)
 *   <runtime root>/<daemon>/state/      <daemon user>:<group> 0750 what the daemon writes: pid, sockets, leases,
 *                                                                     drift, trust anchor
 *
 * The root is `--runtime-dir` / BULWARK_RUNTIME_DIR, else `/var/lib/bulwark-daemons/<12 hex of sha256(data dir)>`:
 * one tree per data directory, so several appliances (tests) on one host never share one. On the simulated
 * platform nothing runs and the files stay in the data directory (`<data-dir>/<area>/`).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { DaemonName } from './daemons.js';
import { RenderRefusal } from '../render/refusal.js';
import { ensureDirectoryNoFollow, replaceFileNoFollow } from './nofollow-files.js';
import { sha256Hex } from '../core/crypto.js';
import { prepareRuntimeRoot, runtimeAccessProblem, runtimeAccessReport, RuntimeAccessRefused, type RuntimeAccessReport } from './runtime-access.js';

/** Where the runtime trees live when `--runtime-dir` is not given (one per data directory below it). */
export const DEFAULT_RUNTIME_BASE = '/var/lib/bulwark-daemons';

/** What the runtime root is derived from: the data directory and the `--runtime-dir` option. */
export interface RuntimeConfig {
  dataDir: string;
  runtimeDir?: string | null;
}

/** The daemons' runtime tree of this appliance (daemons at `<root>/<daemon>/`). The one place that decides it. */
export function runtimeRoot(config: RuntimeConfig): string {
  if (config.runtimeDir) return resolve(config.runtimeDir);
  return join(DEFAULT_RUNTIME_BASE, sha256Hex(resolve(config.dataDir)).slice(0, 12));
}

/** The system account each daemon runs as (created by its Debian package). */
export const DAEMON_USERS: Record<DaemonName, string> = { unbound: 'unbound', 'kea-dhcp4': '_kea', 'kea-dhcp-ddns': '_kea', chronyd: '_chrony' };

/** The data-directory folder of each daemon's area (the simulated platform keeps the files there). */
const AREA_DIRS: Record<DaemonName, string> = { unbound: 'dns', 'kea-dhcp4': 'dhcp', 'kea-dhcp-ddns': 'dhcp', chronyd: 'time' };

export interface SystemAccount {
  name: string;
  uid: number;
  gid: number;
}

/** A user from /etc/passwd, or null when it does not exist. */
export function systemAccount(name: string): SystemAccount | null {
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && /^\d+$/.test(uid ?? '') && /^\d+$/.test(gid ?? '')) return { name, uid: Number(uid), gid: Number(gid) };
  }
  return null;
}

/** The id of a group from /etc/group, or null when it does not exist. */
export function systemGroup(name: string): number | null {
  let groups = '';
  try {
    groups = readFileSync('/etc/group', 'utf8');
  } catch {
    return null;
  }
  for (const line of groups.split('\n')) {
    const [group, , gid] = line.split(':');
    if (group === name && /^\d+$/.test(gid ?? '')) return Number(gid);
  }
  return null;
}

export interface DaemonRuntime {
  /** A network-service daemon, or another supervised program (the reverse proxy). */
  daemon: string;
  /** Configuration and includes: readable by the daemon's group, written only by Bulwark. */
  dir: string;
  /** The one subdirectory the daemon itself writes. */
  stateDir: string;
  /** Owner of the files; null on the simulated platform or when Bulwark does not run as root. */
  account: SystemAccount | null;
}

/** The runtime directory of a daemon's files for this appliance. */
export function daemonRuntime(config: RuntimeConfig, daemon: DaemonName, simulated: boolean): DaemonRuntime {
  const dir = simulated ? join(resolve(config.dataDir), AREA_DIRS[daemon]) : join(runtimeRoot(config), daemon);
  const isRoot = process.getuid?.() === 0;
  return { daemon, dir, stateDir: join(dir, 'state'), account: !simulated && isRoot ? systemAccount(DAEMON_USERS[daemon]) : null };
}

/**
 * The runtime of a supervised program other than the network-service daemons (the reverse proxy, Suricata): the
 * same tree, `<runtime root>/<name>/`, owned by `user`. Never used on the simulated platform.
 */
export function programRuntime(config: RuntimeConfig, name: string, user: string): DaemonRuntime {
  const dir = join(runtimeRoot(config), name);
  return { daemon: name, dir, stateDir: join(dir, 'state'), account: process.getuid?.() === 0 ? systemAccount(user) : null };
}

/** Every program that runs from the runtime tree as its own user: the network-service daemons, Caddy, Suricata. */
const RUNTIME_USERS: Record<string, string> = { ...DAEMON_USERS, caddy: 'caddy', suricata: 'suricata', softflowd: 'nobody' };

/**
 * Which daemon users cannot reach the runtime tree (their folder, their state folder): checked at start and on
 * every GET /status. Empty on the simulated platform and when Bulwark is not root (it then drops to no user).
 */
export function runtimeAccessProblems(config: RuntimeConfig, simulated: boolean): RuntimeAccessReport[] {
  if (simulated || process.getuid?.() !== 0) return [];
  return runtimeAccessReport(runtimeRoot(config), Object.entries(RUNTIME_USERS).map(([daemon, user]) => ({ daemon, account: systemAccount(user) })));
}

/** The state directory of the runtime a configuration file was installed in. */
export function stateDirOf(configFile: string): string {
  return join(dirname(configFile), 'state');
}

/**
 * Creates the runtime directories with their owners and modes (idempotent; repairs modes each time), then
 * checks that the daemon's user can reach them: a folder above the tree it cannot traverse answers 409 naming
 * the path and the missing permission, before any checker runs into "Permission denied". The tree's root and
 * the folders above it are root-owned and not writable by others (runtime-access.ts); owners and modes below it
 * are set through descriptors of the directories (src/platform/nofollow-files.ts): a link in the place of one
 * is refused, never chowned through.
 */
export function prepareDaemonRuntime(runtime: DaemonRuntime): void {
  const { account } = runtime;
  if (account) prepareRuntimeRoot(dirname(runtime.dir));
  mkdirSync(runtime.dir, { recursive: true });
  if (account) ensureDirectoryNoFollow(runtime.dir, 0o750, { uid: 0, gid: account.gid });
  ensureDirectoryNoFollow(runtime.stateDir, 0o750, account && { uid: account.uid, gid: account.gid });
  if (!account) return;
  const problem = runtimeAccessProblem(account, runtime.stateDir, 'write');
  if (problem) throw new RuntimeAccessRefused(runtime.daemon, account.name, problem);
}

/**
 * Writes a file the daemon reads (root:<group> 0640), atomically; `segments` are relative to the runtime dir.
 * Subdirectories are created one level at a time and a link in the place of one, or of the file, is never
 * followed (the file goes to a fresh name renamed into place).
 */
export function writeDaemonFile(runtime: DaemonRuntime, segments: string[], content: string | Buffer): string {
  const path = resolve(runtime.dir, ...segments);
  if (!path.startsWith(`${runtime.dir}/`)) throw new RenderRefusal(segments.join('/'), 'escapes the runtime directory');
  const group = runtime.account && { uid: 0, gid: runtime.account.gid };
  mkdirSync(runtime.dir, { recursive: true });
  let dir = runtime.dir;
  for (const part of relative(runtime.dir, dirname(path)).split(sep).filter(Boolean)) {
    dir = join(dir, part);
    ensureDirectoryNoFollow(dir, 0o750, group);
  }
  return replaceFileNoFollow(dir, basename(path), content, 0o640, group);
}

/**
 * Writes a file the daemon itself will rewrite (its state, e.g. the trust anchor): owned by the daemon user.
 * The daemon's user may have planted a link under that name; it is replaced, never written through.
 */
export function writeDaemonStateFile(runtime: DaemonRuntime, name: string, content: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new RenderRefusal(name, 'is not a file name');
  const owner = runtime.account && { uid: runtime.account.uid, gid: runtime.account.gid };
  return replaceFileNoFollow(runtime.stateDir, name, content, 0o640, owner);
}
