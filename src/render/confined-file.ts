import { closeSync, constants, fchmodSync, fchownSync, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/** Permission bits a written file may never carry: setuid, setgid, sticky and world-write. */
const FORBIDDEN_MODE_BITS = 0o7002;

/** Why an octal mode text (`"0640"`, `"640"`) is not acceptable for a written file, or null. Keys also may not be world-readable. */
export function fileModeProblem(mode: unknown, forKey: boolean): string | null {
  if (typeof mode !== 'string' || !/^0?[0-7]{3}$/.test(mode)) return 'must be an octal mode such as 0640';
  const bits = parseInt(mode, 8);
  if (bits & FORBIDDEN_MODE_BITS) return 'must not be world-writable';
  if (forKey && bits & 0o007) return 'must give no permission to others (a private key)';
  if (!(bits & 0o400)) return 'must let the owner read the file';
  return null;
}

/**
 * Why writing `path` (inside `root`) could land elsewhere, or null: every existing component from the root
 * down must be a real directory (no symbolic link), and an existing file must be a regular, singly-linked file.
 */
export function symlinkProblem(path: string, root: string): string | null {
  const base = root.replace(/\/+$/, '') || '/';
  const components = [base];
  for (const part of relative(base, path).split(sep).filter(Boolean)) components.push(join(components[components.length - 1], part));
  for (const [index, component] of components.entries()) {
    let stats;
    try {
      stats = lstatSync(component);
    } catch {
      return null; // from here down nothing exists yet
    }
    if (stats.isSymbolicLink()) return `${component} is a symbolic link`;
    const last = index === components.length - 1;
    if (!last && !stats.isDirectory()) return `${component} is not a directory`;
    if (last && (!stats.isFile() || stats.nlink > 1)) return `${component} is not a regular file with a single link`;
  }
  return null;
}

/**
 * Writes a file without following symbolic links: the directories are checked (and created one by one) from
 * the root down, the file is opened with O_NOFOLLOW, checked again through its descriptor, and given exactly
 * `mode` whatever the umask or the previous mode (and `owner`, when given, through the same descriptor).
 */
export function writeConfinedFile(path: string, root: string, text: string, mode: number, owner?: { uid: number; gid: number }): void {
  if (mode & FORBIDDEN_MODE_BITS || mode > 0o777) throw new Error(`${path}: refused mode ${mode.toString(8)}`);
  const before = symlinkProblem(path, root);
  if (before) throw new Error(`${path}: ${before}`);
  // The root itself is configuration (trusted) and may be created; below it, one directory at a time.
  const base = root.replace(/\/+$/, '') || '/';
  const missing: string[] = [];
  for (let dir = dirname(path); dir.length >= base.length && dir !== dirname(dir); dir = dirname(dir)) {
    try {
      lstatSync(dir);
      break;
    } catch {
      missing.unshift(dir);
    }
  }
  for (const dir of missing) mkdirSync(dir, { mode: 0o755 });
  const after = symlinkProblem(path, root);
  if (after) throw new Error(`${path}: ${after}`);
  // No O_TRUNC: a file that turns out to be something else must be left as it was.
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.nlink > 1) throw new Error(`${path}: not a regular file with a single link`);
    ftruncateSync(fd, 0);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, mode);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
