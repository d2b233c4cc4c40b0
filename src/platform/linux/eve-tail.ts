/**
 * Follows a growing EVE JSON file: every quarter second (and whenever the directory changes) the bytes added
 * since the last read are read — at most MAX_READ per round, so a burst never holds more than that in memory —
 * and the complete lines are handed on; a partial last line waits for its end. A file that shrank (rotated or
 * truncated) is read again from its start.
 */
import { statSync, watch, type FSWatcher } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { READ_NO_FOLLOW } from '../nofollow-files.js';

const POLL_MS = 250;
const MAX_READ = 4 * 1024 * 1024;
/** A line longer than this is dropped (an EVE record is a few KiB; this bounds the partial-line buffer). */
const MAX_LINE = 1024 * 1024;

export class EveTail {
  private offset = 0;
  private partial = '';
  private timer: NodeJS.Timeout | null = null;
  private watcher: FSWatcher | null = null;
  /** The read in flight, which callers arriving meanwhile wait for. */
  private reading: Promise<void> | null = null;
  private again = false;

  /** `fromEnd`: what the file holds already is old (read before, or imported); only what is appended is new. */
  constructor(private readonly file: string, private readonly deliver: (lines: string) => void, fromEnd = false) {
    if (fromEnd) {
      try {
        this.offset = statSync(file).size;
      } catch {
        this.offset = 0; // not there yet: everything it will hold is new
      }
    }
  }

  start(): void {
    // A round that failed (an I/O error, a listener that threw) is tried again at the next poll; left unhandled, its
    // rejection would end the whole API process.
    const readInBackground = () => void this.read().catch(() => undefined);
    this.timer = setInterval(readInBackground, POLL_MS);
    this.timer.unref();
    try {
      this.watcher = watch(dirname(this.file), (_event, name) => {
        if (name === null || name === basename(this.file)) readInBackground();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // polling alone still follows the file
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.watcher?.close();
    this.timer = null;
    this.watcher = null;
  }

  /**
   * Reads what was added. A call while a read is in flight joins it and resolves once one more round has run, so
   * everything the file held at the call has been delivered (the supervisor takes a failure's reason right after).
   */
  read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.readRounds();
    return this.reading;
  }

  private async readRounds(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.round();
      } while (this.again);
    } finally {
      // In the same step as the last check of `again`: a caller arriving later starts a new read.
      this.reading = null;
    }
  }

  private async round(): Promise<void> {
    const size = await lstat(this.file).then((s) => s.size, () => null);
    if (size === null) return;
    if (size < this.offset) {
      this.offset = 0;
      this.partial = '';
    }
    if (size === this.offset) return;
    const length = Math.min(size - this.offset, MAX_READ);
    // Suricata's user owns the directory: a link planted as eve.json would make root read another file.
    const handle = await open(this.file, READ_NO_FOLLOW).catch(() => null);
    if (!handle) return;
    let text: string;
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, this.offset);
      this.offset += bytesRead;
      text = this.partial + buffer.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
    const end = text.lastIndexOf('\n');
    this.partial = end < 0 ? text : text.slice(end + 1);
    if (this.partial.length > MAX_LINE) this.partial = '';
    if (end >= 0) this.deliver(text.slice(0, end));
    if (size > this.offset) this.again = true;
  }
}
