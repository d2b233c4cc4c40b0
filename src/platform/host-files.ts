/**
 * One change to the host's files, all or nothing: each file is written atomically (a fresh temporary file in
 * the same directory, fsync, rename over the name — a symbolic link at the name is replaced, never followed),
 * the previous content (or link, or absence) is kept, and `rollback` puts every touched name back as it was
 * when a check, a reload or a read-back fails. Paths are relative to the host root (`/` on an appliance).
 */
import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { conflict, type HttpError } from '../core/errors.js';
import { runCommand, NOT_RUNNABLE, type CommandResult } from './exec.js';

type Previous = { kind: 'absent' } | { kind: 'file'; content: Buffer; mode: number } | { kind: 'link'; target: string };

/** The host root's path for a host path (`/etc/hostname` under `/srv/root` is `/srv/root/etc/hostname`). */
export function hostPath(root: string, path: string): string {
  return resolve(root, `.${path}`);
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Renames a fresh temporary name over `path` (a link there is replaced, never followed) and makes it durable. */
function renameIntoPlace(temporary: string, path: string): void {
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(dirname(path));
}

/** Writes `text` to `path` atomically with `mode` (temp + fsync + rename + fsync of the directory). */
export function writeFileAtomic(path: string, text: string | Buffer, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${randomBytes(6).toString('hex')}.bulwark-tmp`);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    writeSync(fd, typeof text === 'string' ? Buffer.from(text) : text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameIntoPlace(temporary, path);
}

/** Makes `path` a symbolic link to `target` atomically (a fresh link renamed over the name). */
export function linkAtomic(path: string, target: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${randomBytes(6).toString('hex')}.bulwark-tmp`);
  symlinkSync(target, temporary);
  renameIntoPlace(temporary, path);
}

/** A file's text, or null when absent. */
export function readHostFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** A command's failure as a short sentence built from our own words and the exit code (the output goes to the log). */
export function commandFailure(what: string, file: string, result: CommandResult): string {
  if (result.code === NOT_RUNNABLE) return `${what}: ${file} could not be run (is it installed?)`;
  return `${what}: ${file} exited ${result.code}`;
}

export class HostFileChange {
  private readonly previous = new Map<string, Previous>();
  readonly written: string[] = [];

  constructor(readonly root: string) {}

  path(hostFile: string): string {
    return hostPath(this.root, hostFile);
  }

  private remember(hostFile: string): string {
    const path = this.path(hostFile);
    if (this.previous.has(path)) return path;
    let state: Previous = { kind: 'absent' };
    try {
      const stat = lstatSync(path);
      state = stat.isSymbolicLink() ? { kind: 'link', target: readlinkSync(path) } : { kind: 'file', content: readFileSync(path), mode: stat.mode & 0o7777 };
    } catch {
      // absent
    }
    this.previous.set(path, state);
    return path;
  }

  write(hostFile: string, text: string, mode = 0o644): void {
    const path = this.remember(hostFile);
    writeFileAtomic(path, text, mode);
    this.written.push(path);
  }

  link(hostFile: string, target: string): void {
    const path = this.remember(hostFile);
    linkAtomic(path, target);
    this.written.push(path);
  }

  /** Puts every touched name back as it was. */
  rollback(): void {
    for (const [path, state] of [...this.previous].reverse()) {
      try {
        if (state.kind === 'absent') rmSync(path, { force: true });
        else if (state.kind === 'link') linkAtomic(path, state.target);
        else writeFileAtomic(path, state.content, state.mode);
      } catch {
        // best effort: the other names are still restored
      }
    }
  }

  /**
   * Runs `step` (checks, reloads, read-backs); when it throws, the files are restored, `restore` runs (e.g. a
   * reload of the previous files), and the failure is answered as a 409 naming what failed.
   */
  async commit<T>(step: () => Promise<T>, restore?: () => Promise<unknown>, log?: (detail: string) => void): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof HostStepFailed && error.detail) log?.(error.detail);
      this.rollback();
      await restore?.().catch(() => undefined);
      throw toConflict(error);
    }
  }
}

/** A check, reload or read-back that failed: `message` is ours (for the client), `detail` the tool's output (for the log). */
export class HostStepFailed extends Error {
  constructor(message: string, readonly detail = '') {
    super(message);
  }
}

function toConflict(error: unknown): HttpError {
  if (error instanceof HostStepFailed) return conflict(`${error.message}; the previous settings were kept`);
  if (error instanceof Error && 'statusCode' in error) return error as HttpError;
  return conflict(`the host settings could not be applied: ${(error as Error).message}; the previous settings were kept`);
}

/** Runs a tool; a non-zero exit fails the step with a sentence of our own (the output is handed to `log`). */
export async function mustRun(what: string, file: string, args: string[], input?: string): Promise<CommandResult> {
  const result = await runCommand(file, args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new HostStepFailed(commandFailure(what, file, result), `${file} ${args.join(' ')}: ${result.stderr.trim() || result.stdout.trim()}`);
  return result;
}
