import type { PacketFilterStatus } from '../platform.js';
import { runCommand, type CommandResult } from '../exec.js';
import { summariseRefusal } from '../tool-refusal.js';
import { wrongDialect, type ApplyResult, type PacketFilter, type RuleCounter, type RulesetText } from '../packet-filter.js';
import { NFT_TABLE } from '../../compile/compiled.js';
import { scheduleCtMark, type ScheduleEdge } from '../../compile/schedule-edges.js';
import { cutStartedFlows } from './conntrack-cut.js';
import { NFT_LOOPBACK } from '../../compile/nftables.js';

const NOT_RUNNABLE = 127;
const message = (result: CommandResult) => result.stderr.trim() || result.stdout.trim() || `nft exited ${result.code}`;
/** A refusal of the rendered text: only what the tool said about our own lines reaches the client. */
const refusal = (stage: 'check' | 'apply', result: CommandResult, ruleset: RulesetText): ApplyResult => {
  const { message: summary, detail } = summariseRefusal('nft', message(result), ruleset.text);
  return { ok: false, stage, message: summary, detail };
};

/**
 * nftables through the `nft` tool with argument arrays: `nft -c -f -` validates, `nft -f -` loads the whole
 * script in one kernel transaction (the script replaces only `table inet bulwark`), `nft -j` reads counters.
 */
export class NftablesPacketFilter implements PacketFilter {
  readonly dialect = 'nftables' as const;

  constructor(
    /** The platform's status reader, kept where the platform defines it. */
    readonly status: () => Promise<PacketFilterStatus>,
    private readonly nft = 'nft',
    private readonly conntrack = 'conntrack',
    private readonly ip = 'ip',
  ) {}

  /**
   * Connections a scheduled pass rule accepted carry its conntrack mark. Those a block rule entering its
   * window now stops are found in the table and judged by the whole ruleset, with the interfaces the routing
   * table gives them (conntrack-cut.ts). Deleting an entry makes the flow's next packet new again, so the
   * ruleset in force decides it.
   */
  async killStates(edge: ScheduleEdge): Promise<void> {
    for (const { id } of edge.ended) await runCommand(this.conntrack, ['-D', '--mark', String(scheduleCtMark(id))]);
    if (edge.started.length) await cutStartedFlows(edge, { conntrack: this.conntrack, ip: this.ip, loopback: NFT_LOOPBACK });
  }

  async check(ruleset: RulesetText): Promise<ApplyResult> {
    const refused = wrongDialect(this.dialect, ruleset);
    if (refused) return refused;
    const result = await runCommand(this.nft, ['-c', '-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : refusal('check', result, ruleset);
  }

  async apply(ruleset: RulesetText): Promise<ApplyResult> {
    const checked = await this.check(ruleset);
    if (!checked.ok) return checked;
    // Some refusals (e.g. a statement not allowed at a hook) only come from the kernel at commit; the
    // transaction is then aborted as a whole and the previous table stays loaded.
    const result = await runCommand(this.nft, ['-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : refusal('apply', result, ruleset);
  }

  async counters(): Promise<RuleCounter[]> {
    const result = await runCommand(this.nft, ['-j', 'list', 'counters', 'table', 'inet', NFT_TABLE]);
    if (result.code !== 0) return [];
    return parseNftCounters(result.stdout);
  }
}

export function parseNftCounters(json: string): RuleCounter[] {
  const items = (JSON.parse(json) as { nftables: { counter?: { name: string; table: string; family: string; packets: number; bytes: number } }[] }).nftables;
  return items
    .filter((item) => item.counter && item.counter.table === NFT_TABLE && item.counter.family === 'inet')
    .map(({ counter }) => ({ name: counter!.name, packets: counter!.packets, bytes: counter!.bytes }));
}
