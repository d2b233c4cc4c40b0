/**
 * Root's writes where a daemon's user can plant links. A daemon's state directory belongs to the daemon's user
 * (`unbound`, `_kea`, `_chrony`, `caddy`, …), who may put a symbolic link under any name there; a plain
 * writeFileSync/chownSync/chmodSync by root would follow it and create, overwrite or give away a file anywhere.
 * Everything here works on descriptors instead:
 *
 * - a file is written under a fresh random name opened O_CREAT|O_EXCL|O_NOFOLLOW (a new inode, never a planted
 *   one), given its owner and mode through that descriptor (fchown, fchmod), then renamed over the target name —
 *   rename replaces a link itself, never what it points at;
 * - a directory is opened O_DIRECTORY|O_NOFOLLOW before fchown/fchmod, so a link in its place is refused.
 *
 * The directory a file is written into must itself sit in a directory only root writes (the runtime tree's
 * layout), so its own path cannot be swapped; it is checked with lstat all the same.
 */
import { closeSync, constants, fchmodSync, fchownSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export interface FileOwner {
  uid: number;
  gid: number;
}

/** A symbolic link (or something else unexpected) where root was about to write: nothing was written. */
export class UnsafeTargetError extends Error {}

const fileName = (name: string): string => {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) throw new UnsafeTargetError(`${JSON.stringify(name)} is not a file name`);
  return name;
};

/** Opens an existing directory, refusing a symbolic link in its place. */
function openDirectory(path: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new UnsafeTargetError(`${path} is a symbolic link or not a directory: refused to use it`);
    throw error;
  }
}

/**
 * Creates `path` (one level; its parent exists) or keeps the directory that is there, refusing a link in its
 * place; with `owner`, sets owner and mode through the directory's descriptor.
 */
export function ensureDirectoryNoFollow(path: string, mode: number, owner?: FileOwner | null): void {
  try {
    mkdirSync(path, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const fd = openDirectory(path);
  try {
    if (owner) {
      fchownSync(fd, owner.uid, owner.gid);
      fchmodSync(fd, mode);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `dir/name` with a new file holding `content`, owned by `owner` (when given) with exactly `mode`.
 * Whatever was at `name` — a file, or a link the daemon planted — is replaced, never written through.
 */
export function replaceFileNoFollow(dir: string, name: string, content: string | Buffer, mode: number, owner?: FileOwner | null): string {
  const target = join(dir, fileName(name));
  if (!lstatSync(dir).isDirectory()) throw new UnsafeTargetError(`${dir} is a symbolic link or not a directory: refused to write ${name} in it`);
  const temporary = join(dir, `.${name}.${randomBytes(8).toString('hex')}.tmp`);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    try {
      if (owner) fchownSync(fd, owner.uid, owner.gid);
      fchmodSync(fd, mode);
      const bytes = typeof content === 'string' ? Buffer.from(content) : content;
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return target;
}

/** True only when `path` is itself a regular file: a link, even one to a regular file, is not. */
export function isRegularFileNoFollow(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Flags for reading a file a daemon writes (its log, its eve.json) without following a link planted in its place. */
export const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;
