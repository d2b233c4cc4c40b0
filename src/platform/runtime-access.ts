/**
 * The daemons' runtime tree must be reachable by users other than root (unbound, _kea, _chrony, caddy), and
 * must not be replaceable by them. Two checks, both walking the path from `/`:
 *   - prepareRuntimeRoot: every folder up to the tree is root-owned and not group/world-writable unless sticky
 *     (else anyone who can write one could swap the daemons' configuration); missing ones are created
 *     root:root 0755.
 *   - runtimeAccessProblem: judged as the daemon's user would be (owner, group and supplementary groups, other),
 *     can it traverse each folder and read (write) the last one? A folder it cannot cross is named with the
 *     permission it lacks, never with anything read from the files.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { HttpError } from '../core/errors.js';

/** A system account as the permission check judges it. */
export interface Account {
  name: string;
  uid: number;
  gid: number;
}

export interface AccessProblem {
  /** The folder or file the user cannot use. */
  path: string;
  /** What it lacks there: `execute (traverse)`, `read` or `write`. */
  missing: string;
}

/** A folder on the way to the runtime tree is unsafe, or cannot be created: never answered as a success. */
export class RuntimeTreeRefused extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}

/** A daemon's user cannot reach what it must: 409 naming the path and the permission. */
export class RuntimeAccessRefused extends HttpError {
  constructor(daemon: string, user: string, problem: AccessProblem) {
    super(409, `${daemon} (running as user ${user}) cannot use ${problem.path}: ${problem.missing} permission missing for that user; make the folder traversable or choose another --runtime-dir`);
  }
}

/** Every folder from `/` down to `path`, `/` first. */
function components(path: string): string[] {
  const parts = resolve(path).split(sep).filter(Boolean);
  return ['/', ...parts.map((_, index) => `/${parts.slice(0, index + 1).join('/')}`)];
}

/**
 * Creates the runtime root and every missing folder above it (root:root 0755) and refuses a folder on the way
 * that is not root-owned or is group/world-writable. Only meaningful as root (the caller checks).
 */
export function prepareRuntimeRoot(root: string): void {
  for (const folder of components(root)) {
    if (!existsSync(folder)) {
      try {
        mkdirSync(folder, { mode: 0o755 });
        chownSync(folder, 0, 0);
        chmodSync(folder, 0o755);
      } catch (error) {
        throw new RuntimeTreeRefused(`the daemons' runtime tree ${root} cannot be created: ${folder}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
      }
      continue;
    }
    const stats = statSync(folder);
    if (!stats.isDirectory()) throw new RuntimeTreeRefused(`the daemons' runtime tree ${root}: ${folder} is not a folder`);
    if (stats.uid !== 0) throw new RuntimeTreeRefused(`the daemons' runtime tree ${root}: ${folder} is owned by uid ${stats.uid}, not root; choose another --runtime-dir`);
    // A sticky folder (/tmp) lets no one but its owner rename or remove a root-owned entry: it cannot be swapped.
    if (stats.mode & 0o022 && !(stats.mode & 0o1000)) throw new RuntimeTreeRefused(`the daemons' runtime tree ${root}: ${folder} is group- or world-writable (mode ${(stats.mode & 0o7777).toString(8)}); choose another --runtime-dir`);
  }
  // The tree itself: traversable by every daemon user (each daemon's folder below it is closed to the others).
  chmodSync(root, 0o755);
}

/** The groups a user is in: its primary group and every group of /etc/group that lists it. */
function groupsOf(account: Account): Set<number> {
  const groups = new Set([account.gid]);
  let text = '';
  try {
    text = readFileSync('/etc/group', 'utf8');
  } catch {
    return groups;
  }
  for (const line of text.split('\n')) {
    const [, , gid, members] = line.split(':');
    if (/^\d+$/.test(gid ?? '') && (members ?? '').split(',').includes(account.name)) groups.add(Number(gid));
  }
  return groups;
}

/** The permission bits (rwx as 4/2/1) the account has on a file, as the kernel would judge them. */
function bitsFor(account: Account, groups: Set<number>, stats: { uid: number; gid: number; mode: number }): number {
  if (account.uid === 0) return 7;
  if (stats.uid === account.uid) return (stats.mode >> 6) & 7;
  if (groups.has(stats.gid)) return (stats.mode >> 3) & 7;
  return stats.mode & 7;
}

/**
 * Whether `account` can reach `path` and read it (or also write it): each folder above needs execute, the last
 * needs read and execute (a folder) or read (a file), plus write when asked. Null when all is well or the path
 * does not exist yet (nothing to judge; the folder above is judged instead).
 */
export function runtimeAccessProblem(account: Account, path: string, need: 'read' | 'write'): AccessProblem | null {
  const groups = groupsOf(account);
  const folders = components(path);
  for (const [index, folder] of folders.entries()) {
    let stats;
    try {
      stats = statSync(folder);
    } catch {
      return null;
    }
    const bits = bitsFor(account, groups, stats);
    const last = index === folders.length - 1;
    if ((!last || stats.isDirectory()) && !(bits & 1)) return { path: folder, missing: 'execute (traverse)' };
    if (last && !(bits & 4)) return { path: folder, missing: 'read' };
    if (last && need === 'write' && !(bits & 2)) return { path: folder, missing: 'write' };
  }
  return null;
}

export interface RuntimeAccessReport extends AccessProblem {
  daemon: string;
  user: string;
}

/**
 * For each daemon whose account exists: can it reach the runtime root, read its own folder and write its state
 * folder? What /status lists under `runtime_access.problems` (and what the start-up log warns about).
 */
export function runtimeAccessReport(root: string, daemons: { daemon: string; account: Account | null }[]): RuntimeAccessReport[] {
  const problems: RuntimeAccessReport[] = [];
  for (const { daemon, account } of daemons) {
    if (!account) continue;
    const dir = join(root, daemon);
    const problem = runtimeAccessProblem(account, existsSync(dir) ? join(dir, 'state') : dirname(dir), existsSync(dir) ? 'write' : 'read');
    if (problem) problems.push({ daemon, user: account.name, ...problem });
  }
  return problems;
}
