import type { PacketFilterStatus } from '../platform.js';
import { runCommand, type CommandResult } from '../exec.js';
import { wrongDialect, type ApplyResult, type PacketFilter, type RuleCounter, type RulesetText } from '../packet-filter.js';
import { PF_ANCHOR } from '../../compile/compiled.js';

const NOT_RUNNABLE = 127;
const message = (result: CommandResult) => result.stderr.trim() || result.stdout.trim() || `pfctl exited ${result.code}`;

/** pf through pfctl: `-n` parses without loading, `-a bulwark -f -` replaces the anchor atomically. */
export class PfPacketFilter implements PacketFilter {
  readonly dialect = 'pf' as const;

  constructor(
    /** The platform's status reader (pfctl -s info), kept where the platform defines it. */
    readonly status: () => Promise<PacketFilterStatus>,
    private readonly pfctl = 'pfctl',
  ) {}

  async check(ruleset: RulesetText): Promise<ApplyResult> {
    const refused = wrongDialect(this.dialect, ruleset);
    if (refused) return refused;
    const result = await runCommand(this.pfctl, ['-n', '-a', PF_ANCHOR, '-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : { ok: false, stage: 'check', message: message(result) };
  }

  async apply(ruleset: RulesetText): Promise<ApplyResult> {
    const checked = await this.check(ruleset);
    if (!checked.ok) return checked;
    const result = await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : { ok: false, stage: 'apply', message: message(result) };
  }

  async counters(): Promise<RuleCounter[]> {
    const result = await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-v', '-s', 'rules']);
    return result.code === 0 ? parsePfRuleCounters(result.stdout) : [];
  }
}

/** `pfctl -v -s rules`: each rule line is followed by `[ Evaluations: … Packets: N Bytes: N … ]`. */
export function parsePfRuleCounters(text: string): RuleCounter[] {
  const counters: RuleCounter[] = [];
  let label: string | undefined;
  for (const line of text.split('\n')) {
    const stats = /Packets:\s*(\d+)\s+Bytes:\s*(\d+)/.exec(line);
    if (stats && label !== undefined) {
      counters.push({ name: label, packets: Number(stats[1]), bytes: Number(stats[2]) });
      label = undefined;
      continue;
    }
    if (!line.startsWith(' ') && !line.startsWith('\t') && line.trim()) label = /label "([^"]*)"/.exec(line)?.[1];
  }
  return counters;
}
