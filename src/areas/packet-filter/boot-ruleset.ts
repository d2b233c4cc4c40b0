/**
 * Keeps the ruleset the kernel was last loaded with on disk, for the boot step (install/bulwark-boot.sh) that loads
 * it before the network comes up, without Node: `<data-dir>/boot/ruleset.nft` (pf: `ruleset.pf`), the full table
 * text, written after every successful load — after a delta too, since the compile a delta was computed from is
 * the table the kernel now holds — and the fallback rendered beside it (compile/boot-fallback.ts), which knows
 * the LAN interfaces and the API port. Both are replaced atomically (temporary file, rename). Only on a platform
 * that loads a kernel: the simulated platform loads nothing, so there is nothing a boot could restore.
 *
 * The ruleset is written by one writer, off the event loop, newest text last: loads that follow each other faster
 * than the disk skip the texts already superseded (at 10,000 rules the file is 1.8 MB and its write took 2-20 ms
 * here, which would otherwise delay the next reload).
 */
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AppContext } from '../../context.js';
import { dataPath, writeDataFile } from '../common/data-files.js';
import { renderNftFallback, renderPfFallback, type FallbackInput } from '../../compile/boot-fallback.js';

export const BOOT_DIR = 'boot';
/** Written by the boot step, read by GET /status (areas/status/boot.ts). */
export const LAST_BOOT_FILE = 'last-boot.json';
export const bootRulesetFile = (dialect: 'nftables' | 'pf') => (dialect === 'pf' ? 'ruleset.pf' : 'ruleset.nft');
export const bootFallbackFile = (dialect: 'nftables' | 'pf') => (dialect === 'pf' ? 'fallback.pf' : 'fallback.nft');

/** Temporary file, fsync, rename, fsync of the directory: after a power cut the file is the old or the new text. */
async function writeDurably(path: string, text: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  const file = await open(temporary, 'w', 0o600);
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  const directory = await open(dirname(path), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

export class BootRuleset {
  private fallbackWritten = '';
  /** The newest loaded text not yet on disk. */
  private pending: string | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly fallbackInput: () => FallbackInput,
  ) {}

  private get enabled(): boolean {
    return !this.context.platform.simulated;
  }

  private get dialect(): 'nftables' | 'pf' {
    return this.context.platform.packetFilter.dialect;
  }

  /** After a successful load: `text` is the full table the kernel now holds. A failure is logged, never thrown. */
  keep(text: string): void {
    if (!this.enabled) return;
    this.pending = text;
    this.writing ??= this.drain();
  }

  /** Resolves when the newest kept text is on disk (at shutdown). */
  settled(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    await null; // keep() has assigned `writing` before this writer can end
    for (let text = this.take(); text !== undefined; text = this.take()) {
      try {
        this.writeFallback();
        const path = dataPath(this.context.config.dataDir, BOOT_DIR, bootRulesetFile(this.dialect));
        await mkdir(dirname(path), { recursive: true });
        await writeDurably(path, text);
      } catch (error) {
        this.context.log.error({ err: error }, 'could not keep the loaded ruleset for the boot step; a reboot loads the previous one (or the fallback)');
      }
    }
    // In the same turn as the last take(): a keep() from now on starts a new writer.
    this.writing = undefined;
  }

  private take(): string | undefined {
    const text = this.pending;
    this.pending = undefined;
    return text;
  }

  /** The fallback follows the LAN interfaces and the API port; rewritten only when its text changes. */
  writeFallback(): void {
    if (!this.enabled) return;
    const input = this.fallbackInput();
    const text = this.dialect === 'pf' ? renderPfFallback(input) : renderNftFallback(input);
    if (text === this.fallbackWritten) return;
    writeDataFile(this.context.config.dataDir, [BOOT_DIR, bootFallbackFile(this.dialect)], text, 0o600);
    this.fallbackWritten = text;
  }
}
