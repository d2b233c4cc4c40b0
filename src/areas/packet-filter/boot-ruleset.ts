/**
 * Keeps the ruleset the kernel was last loaded with on disk, for the boot step (install/bulwark-boot.sh) that loads
 * it before the network comes up, without Node: `<data-dir>/boot/ruleset.nft` (pf: `ruleset.pf`), the full table
 * text, written after every successful load — after a delta too, since the compile a delta was computed from is
 * the table the kernel now holds — and the fallback rendered beside it (compile/boot-fallback.ts), which knows
 * the LAN interfaces and the API port. Both are replaced atomically (temporary file, rename). Only on a platform
 * that loads a kernel: the simulated platform loads nothing, so there is nothing a boot could restore.
 */
import type { AppContext } from '../../context.js';
import { writeDataFile } from '../common/data-files.js';
import { renderNftFallback, renderPfFallback, type FallbackInput } from '../../compile/boot-fallback.js';

export const BOOT_DIR = 'boot';
/** Written by the boot step, read by GET /status (areas/status/boot.ts). */
export const LAST_BOOT_FILE = 'last-boot.json';
export const bootRulesetFile = (dialect: 'nftables' | 'pf') => (dialect === 'pf' ? 'ruleset.pf' : 'ruleset.nft');
export const bootFallbackFile = (dialect: 'nftables' | 'pf') => (dialect === 'pf' ? 'fallback.pf' : 'fallback.nft');

export class BootRuleset {
  private fallbackWritten = '';

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
    try {
      this.writeFallback();
      writeDataFile(this.context.config.dataDir, [BOOT_DIR, bootRulesetFile(this.dialect)], text, 0o600);
    } catch (error) {
      this.context.log.error({ err: error }, 'could not keep the loaded ruleset for the boot step; a reboot loads the previous one (or the fallback)');
    }
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
