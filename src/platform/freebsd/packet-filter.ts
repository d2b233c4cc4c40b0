import type { PacketFilterStatus } from '../platform.js';
import { NOT_RUNNABLE, runCommand, type CommandResult } from '../exec.js';
import { summariseRefusal } from '../tool-refusal.js';
import { wrongDialect, type ApplyResult, type PacketFilter, type ReadBackResult, type RuleCounter, type RulesetText } from '../packet-filter.js';
import { kernelState } from '../kernel-state.js';
import { PF_ANCHOR } from '../../compile/compiled.js';
import type { ScheduleEdge } from '../../compile/schedule-edges.js';
import { declaredTables, readPfSetupProblems, readRequestMaxcount } from './pf-setup.js';
import { cutStartedStates } from './pf-states.js';
import { PF_LOOPBACK } from '../../compile/pf.js';

const message = (result: CommandResult) => result.stderr.trim() || result.stdout.trim() || `pfctl exited ${result.code}`;
/** A refusal of the rendered text: only what the tool said about our own lines reaches the client. */
const refusal = (stage: 'check' | 'apply', result: CommandResult, ruleset: RulesetText): ApplyResult => {
  const { message: summary, detail } = summariseRefusal('pfctl', message(result), ruleset.text);
  return { ok: false, stage, message: summary, detail };
};

/**
 * pf through pfctl: `-n` parses without loading (checks and previews), `-a bulwark -f -` replaces the anchor
 * atomically and is its own check (a refused anchor leaves the previous one loaded). Before either, the main
 * ruleset must hook the anchor and pf must be enabled (pf-setup.ts), and no table may exceed
 * net.pf.request_maxcount: each is refused with what to change, before anything is loaded.
 */
export class PfPacketFilter implements PacketFilter {
  readonly dialect = 'pf' as const;
  readonly loadsDeltas = false;

  constructor(
    /** The platform's status reader (pfctl -s info), kept where the platform defines it. */
    private readonly readStatus: () => Promise<PacketFilterStatus>,
    private readonly pfctl = 'pfctl',
    private readonly ifconfig = 'ifconfig',
  ) {}

  /** The dashboard reads status every tick: the setup is read again at most every 10 s (check() always reads it). */
  private setupRead: { at: number; problems: string[] | undefined } | undefined;

  async status(): Promise<PacketFilterStatus> {
    const status = await this.readStatus();
    if (!this.setupRead || Date.now() - this.setupRead.at > 10_000) {
      this.setupRead = { at: Date.now(), problems: await readPfSetupProblems(this.pfctl) };
    }
    const { problems } = this.setupRead;
    return problems?.length ? { ...status, problems } : status;
  }

  async check(ruleset: RulesetText): Promise<ApplyResult> {
    const prepared = await this.hostAccepts(ruleset);
    if (!prepared.ok) return prepared;
    const result = await runCommand(this.pfctl, ['-n', '-a', PF_ANCHOR, '-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : refusal('check', result, ruleset);
  }

  /** What pfctl cannot tell from the text: the host's setup and its table size limit. */
  private async hostAccepts(ruleset: RulesetText): Promise<ApplyResult> {
    const refused = wrongDialect(this.dialect, ruleset);
    if (refused) return refused;
    const maxcount = await readRequestMaxcount();
    for (const [name, size] of declaredTables(ruleset.text)) {
      if (size > maxcount) {
        return {
          ok: false, stage: 'check',
          message: `alias "${name}" loads ${size} address blocks, more than net.pf.request_maxcount (${maxcount}) lets pf take in one table: split the alias, or raise net.pf.request_maxcount in /etc/sysctl.conf`,
        };
      }
    }
    const problems = await readPfSetupProblems(this.pfctl);
    this.setupRead = { at: Date.now(), problems };
    if (problems?.length) return { ok: false, stage: 'setup', message: problems.join('; ') };
    return { ok: true };
  }

  async apply(ruleset: RulesetText): Promise<ApplyResult> {
    const prepared = await this.hostAccepts(ruleset);
    if (!prepared.ok) return prepared;
    const result = await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    if (result.code !== 0) return refusal('apply', result, ruleset);
    await this.removeStaleTables(ruleset.text);
    return { ok: true };
  }

  /** A persist table survives a reload of the anchor that no longer declares it (a deleted alias): kill it. */
  private async removeStaleTables(text: string): Promise<void> {
    const declared = declaredTables(text);
    const listed = await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-s', 'Tables']);
    if (listed.code !== 0) return;
    for (const name of listed.stdout.split('\n').map((l) => l.trim()).filter(Boolean)) {
      if (!declared.has(name)) await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-t', name, '-T', 'kill']);
    }
  }

  /**
   * The states a scheduled pass rule created carry its label (the rule id): `pfctl -k label -k <id>`
   * (FreeBSD 13 and later). The states a block rule entering its window now stops are read from the state
   * table and killed by id (pf-states.ts).
   */
  async killStates(edge: ScheduleEdge): Promise<void> {
    for (const { id } of edge.ended) await runCommand(this.pfctl, ['-k', 'label', '-k', id]);
    if (edge.started.length) await cutStartedStates(edge, { pfctl: this.pfctl, ifconfig: this.ifconfig, loopback: PF_LOOPBACK });
  }

  /**
   * The anchor as pf holds it: its filter rules, its translation rules and its table names, as pfctl lists
   * them (rules in order; tables sorted). Table contents are not read (one pfctl run per table).
   */
  async readBack(): Promise<ReadBackResult> {
    const objects = new Map<string, { lines: string[]; size: number }>();
    for (const [name, args] of [['rules', ['-s', 'rules']], ['nat', ['-s', 'nat']], ['tables', ['-s', 'Tables']]] as const) {
      const result = await runCommand(this.pfctl, ['-a', PF_ANCHOR, ...args]);
      if (result.code === NOT_RUNNABLE) return { ok: false, message: message(result) };
      if (result.code !== 0) return { ok: false, message: message(result).split('\n')[0].slice(0, 200) };
      const lines = result.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
      if (name === 'tables') lines.sort();
      objects.set(name, { lines, size: lines.length });
    }
    return { ok: true, state: kernelState(objects) };
  }

  async counters(): Promise<RuleCounter[]> {
    const result = await runCommand(this.pfctl, ['-a', PF_ANCHOR, '-v', '-s', 'rules']);
    return result.code === 0 ? parsePfRuleCounters(result.stdout) : [];
  }
}

/**
 * `pfctl -v -s rules`: each rule line is followed by `[ Evaluations: … Packets: N Bytes: N … ]`. pf expands
 * one rule into several (`proto { tcp udp }`, both address families), each carrying the same label: the
 * counters of one label are summed, so a rule's counter covers all of its expansions.
 */
export function parsePfRuleCounters(text: string): RuleCounter[] {
  const counters = new Map<string, RuleCounter>();
  let label: string | undefined;
  for (const line of text.split('\n')) {
    const stats = /Packets:\s*(\d+)\s+Bytes:\s*(\d+)/.exec(line);
    if (stats && label !== undefined) {
      const counter = counters.get(label) ?? { name: label, packets: 0, bytes: 0 };
      counter.packets += Number(stats[1]);
      counter.bytes += Number(stats[2]);
      counters.set(label, counter);
      label = undefined;
      continue;
    }
    if (!line.startsWith(' ') && !line.startsWith('\t') && line.trim()) label = /label "([^"]*)"/.exec(line)?.[1];
  }
  return [...counters.values()];
}
