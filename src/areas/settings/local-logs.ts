/**
 * The local log files under the data directory's logs/ (src/areas/settings/log-rotation.ts lists them): the API
 * log (every line of the API's logger), the audit log (every row of the audit trail) and each daemon's log
 * (every line it writes). Writes are synchronous appends on a descriptor opened with O_APPEND, so the rotation's
 * copy-and-truncate (also synchronous, on the same event loop) never loses or splits a line. Nothing is written
 * while `/settings/syslog` has `disable_local` set.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ConfigStore } from '../../store/config-store.js';
import { managedPaths } from './log-rotation.js';

const SYSLOG_KIND = 'settings_syslog';
// O_NOFOLLOW: a symlink planted at a log's path is refused, never followed.
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export class LocalLogs {
  private readonly paths: Map<string, string>;
  private readonly descriptors = new Map<string, number>();
  private disabledAt = '';
  private disabled = false;
  /** Writes that failed (disk full, a path that is not a file); counted, never thrown at the caller. */
  errors = 0;
  lastError: string | null = null;

  constructor(dataDir: string, private readonly store: ConfigStore) {
    this.paths = new Map(managedPaths(dataDir).map(({ service, path }) => [service, path]));
  }

  /** Whether local files are written: not while the syslog settings say `disable_local`. */
  enabled(): boolean {
    const generation = this.store.generation(SYSLOG_KIND);
    if (generation !== this.disabledAt) {
      this.disabledAt = generation;
      this.disabled = this.store.getSingleton(SYSLOG_KIND)?.disable_local === true;
    }
    return !this.disabled;
  }

  /** Appends one line (a trailing line feed is added when missing) to a managed log, by its service name. */
  write(service: string, line: string): void {
    if (!this.enabled()) return;
    const path = this.paths.get(service);
    if (path === undefined) throw new Error(`${service} has no managed log`);
    try {
      writeSync(this.descriptor(service, path), line.endsWith('\n') ? line : `${line}\n`);
    } catch (error) {
      this.errors++;
      this.lastError = `${path}: ${(error as Error).message}`;
      this.closeOne(service);
    }
  }

  private descriptor(service: string, path: string): number {
    let fd = this.descriptors.get(service);
    if (fd === undefined) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
      fd = openSync(path, APPEND_FLAGS, 0o640);
      this.descriptors.set(service, fd);
    }
    return fd;
  }

  /** Closes descriptors whose file was removed or replaced, so the next line creates the file anew. */
  reopenMoved(): void {
    for (const [service, fd] of this.descriptors) {
      const path = this.paths.get(service)!;
      let same = false;
      try {
        same = statSync(path).ino === fstatSync(fd).ino;
      } catch {
        same = false;
      }
      if (!same) this.closeOne(service);
    }
  }

  private closeOne(service: string): void {
    const fd = this.descriptors.get(service);
    if (fd === undefined) return;
    this.descriptors.delete(service);
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }

  close(): void {
    for (const service of [...this.descriptors.keys()]) this.closeOne(service);
  }
}

/**
 * The stream the API's logger writes to: standard output (unless told not to) and, once attached, the local API
 * log. Exists before the database does (the logger is made first); `attach` connects it.
 */
export class ApiLogStream {
  private sink: ((line: string) => void) | null = null;
  constructor(private readonly stdout: NodeJS.WritableStream | null) {}

  attach(sink: ((line: string) => void) | null): void {
    this.sink = sink;
  }

  write(chunk: string): boolean {
    this.stdout?.write(chunk);
    this.sink?.(chunk);
    return true;
  }
}
