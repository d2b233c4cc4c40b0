/**
 * Between the packet-filter service and the driver: loads a compiled ruleset as a small delta when the driver
 * takes deltas and the kernel holds what was last loaded, as the full table otherwise; then reads the table back
 * and keeps its canonical state, so a periodic check can tell when the kernel no longer holds it (drift).
 */
import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import type { CompiledRuleset } from '../../compile/compiled.js';
import { nftDelta } from '../../compile/nft-delta.js';
import { renderFullLoad, type NftTable } from '../../compile/nft-table.js';
import type { ApplyResult, KernelState } from '../../platform/packet-filter.js';
import { stateDifferences, withObjectsRead } from '../../platform/kernel-state.js';
import type { LoadCounting } from './hit-counters.js';

export type ApplyMode = 'delta' | 'full';
export type LoadOutcome = { ok: true; mode: ApplyMode } | Extract<ApplyResult, { ok: false }>;

export const DRIFT_TOPIC = 'config.drift';
/** Objects read back one listing each at most; a delta that touched more is followed by a whole-table read. */
const PARTIAL_READ = 4;

export interface DriftReport {
  drift: boolean;
  drift_check: {
    /** When the kernel was last read back (after an apply or by the periodic check); null before the first. */
    checked_at: string | null;
    /** Seconds between periodic checks; 0 when they are off. */
    interval_seconds: number;
    /** What differs from the ruleset last applied (empty while in step). */
    differences: string[];
    /** Why the last read-back failed, when it did. */
    error?: string;
  };
}

export class KernelSync {
  /** The table the kernel holds as far as Bulwark knows: what the last successful load left (nftables). */
  private loaded: NftTable | undefined;
  /** The kernel's state read back after the last successful load; undefined until one happened. */
  private expected: KernelState | undefined;
  private drifted = false;
  /**
   * The objects the deltas since the last read-back changed; undefined after a full load. Up to PARTIAL_READ of
   * them are read back alone, more means the whole table.
   */
  private touched: Set<string> | undefined;
  private differences: string[] = [];
  private checkedAt: string | null = null;
  private readError: string | undefined;
  /**
   * Successful loads, and how many of them the expected state includes (recordLoaded): a check whose read
   * overlapped a load, or that ran before the load's own read-back, compares nothing and is dropped.
   */
  private loadsDone = 0;
  private loadsRecorded = 0;
  /** The rule hit counters, told around every load so none loses what the kernel counted (none in some tests). */
  counting: LoadCounting | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly onDrift: (differences: string[]) => void,
  ) {}

  /**
   * One transaction either way. A delta the kernel refuses (the table was changed behind Bulwark's back, or the
   * new rules themselves are refused) is followed by the full load, which then decides.
   */
  async load(compiled: CompiledRuleset): Promise<LoadOutcome> {
    const driver = this.context.platform.packetFilter;
    const counting = this.counting;
    if (driver.loadsDeltas && compiled.nft && this.loaded && this.expected && !this.drifted) {
      const delta = nftDelta(this.loaded, compiled.nft);
      if (delta && delta.script === '') {
        // Nothing to change: proven by reading the kernel back, not assumed.
        if (await this.inStep()) return this.loadedAs('delta');
      } else if (delta) {
        // The rules' counter objects outlive the chains a delta replaces: nothing counted is lost, nothing to read.
        counting?.loadStarted();
        const result = await driver.apply({ dialect: compiled.dialect, text: delta.script });
        counting?.loadEnded({ ok: result.ok, countersKept: true });
        if (result.ok) {
          this.loaded = compiled.nft;
          for (const name of delta.touched) this.touched?.add(name);
          return this.loadedAs('delta');
        }
        this.context.log.warn({ stage: result.stage, message: result.message, output: result.detail }, 'the kernel refused a delta; loading the whole table');
      }
    }
    // The whole table, keeping the table and its counter objects when the driver lists what it holds (nftables):
    // the rules still loaded count on, so nothing is sampled first. Otherwise (pf; a listing that failed) every
    // counter starts from zero, and what they held is sampled first.
    const present = compiled.nft && driver.tableObjects ? await driver.tableObjects() : undefined;
    if (!present) await counting?.beforeFullLoad();
    counting?.loadStarted();
    const text = present ? renderFullLoad(compiled.nft!, [], present) : compiled.text;
    const result = await driver.apply({ dialect: compiled.dialect, text });
    counting?.loadEnded({ ok: result.ok, countersKept: present !== undefined });
    if (!result.ok) return result;
    this.loaded = compiled.nft;
    this.touched = undefined;
    this.repaired('a full load of the applied ruleset');
    this.differences = [];
    return this.loadedAs('full');
  }

  private loadedAs(mode: ApplyMode): LoadOutcome {
    this.loadsDone++;
    return { ok: true, mode };
  }

  /**
   * After a successful load: the kernel's state becomes the expected one. A base chain of ours holding a different
   * number of rules than loaded means something changed it in between: that is drift at once.
   */
  async recordLoaded(): Promise<void> {
    const driver = this.context.platform.packetFilter;
    const loads = this.loadsDone;
    const touched = this.touched;
    this.touched = new Set();
    const partial = touched && touched.size <= PARTIAL_READ && this.expected && driver.readBackObjects ? [...touched] : undefined;
    const read = partial ? await driver.readBackObjects!(partial) : await driver.readBack();
    this.checkedAt = isoTime(this.context.clock.now());
    if (!read.ok) {
      this.readError = read.message;
      this.expected = undefined; // unknown: the next reload loads in full
      this.touched = undefined;
      return;
    }
    this.readError = undefined;
    this.expected = partial ? withObjectsRead(this.expected!, partial, read.state) : read.state;
    this.loadsRecorded = loads;
    const mismatched = (this.loaded?.chains ?? [])
      .filter((chain) => !partial || partial.includes(`chain ${chain.name}`))
      .filter((chain) => read.state.objects[`chain ${chain.name}`]?.size !== chain.rules.length)
      .map((chain) => `chain ${chain.name}: ${read.state.objects[`chain ${chain.name}`]?.size ?? 'missing'}, ${chain.rules.length} rules loaded`);
    if (mismatched.length) this.markDrift(mismatched);
  }

  /**
   * Reads the kernel back and compares it with the state recorded after the last apply. Safe beside a load (the
   * periodic check runs aside from reloads, so a reload never waits for a whole-table read): a read that a load
   * overlapped, or that a load's own read-back has not caught up with, is dropped, and the next check decides.
   */
  async check(): Promise<void> {
    if (!this.expected) return;
    const loads = this.loadsDone;
    const read = await this.context.platform.packetFilter.readBack();
    if (this.loadsDone !== loads || this.loadsRecorded !== loads || !this.expected) return;
    this.checkedAt = isoTime(this.context.clock.now());
    if (!read.ok) {
      this.readError = read.message;
      return;
    }
    this.readError = undefined;
    if (read.state.fingerprint === this.expected.fingerprint) {
      if (this.drifted) this.context.log.info('the kernel ruleset matches the applied one again');
      this.repaired('the kernel ruleset matches the applied one again');
      this.differences = [];
      return;
    }
    this.markDrift(stateDifferences(this.expected, read.state));
  }

  report(intervalSeconds: number): DriftReport {
    return {
      drift: this.drifted,
      drift_check: {
        checked_at: this.checkedAt,
        interval_seconds: intervalSeconds,
        differences: this.differences,
        ...(this.readError ? { error: this.readError } : {}),
      },
    };
  }

  private async inStep(): Promise<boolean> {
    const read = await this.context.platform.packetFilter.readBack();
    return read.ok && read.state.fingerprint === this.expected?.fingerprint;
  }

  /** Drift is over: announced once when there was drift (`config.drift_repaired`). */
  private repaired(how: string): void {
    if (this.drifted) this.context.events.emit(EVENT_TOPICS.driftRepaired, { how });
    this.drifted = false;
  }

  private markDrift(differences: string[]): void {
    const first = !this.drifted;
    this.drifted = true;
    this.differences = differences;
    if (first) this.onDrift(differences);
  }
}
