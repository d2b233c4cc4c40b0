import type { PacketFilterStatus } from '../platform.js';
import { NOT_RUNNABLE, runCommand, type CommandResult } from '../exec.js';
import { NftSession } from './nft-session.js';
import { summariseRefusal } from '../tool-refusal.js';
import { wrongDialect, type ApplyResult, type KernelState, type PacketFilter, type ReadBackResult, type RuleCounter, type RulesetText } from '../packet-filter.js';
import { canonicalNftState, parseNftRuleCounters, parseNftTableObjects } from './nft-listing.js';
import type { NftObjectName } from '../../compile/nft-table.js';
import { NFT_TABLE } from '../../compile/compiled.js';
import { scheduleCtMark, type ScheduleEdge } from '../../compile/schedule-edges.js';
import { cutStartedFlows } from './conntrack-cut.js';
import { NFT_LOOPBACK } from '../../compile/nftables.js';

const message = (result: CommandResult) => result.stderr.trim() || result.stdout.trim() || `nft exited ${result.code}`;
/** A refusal of the rendered text: only what the tool said about our own lines reaches the client. */
const refusal = (stage: 'check' | 'apply', result: CommandResult, ruleset: RulesetText): ApplyResult => {
  const { message: summary, detail } = summariseRefusal('nft', message(result), ruleset.text);
  return { ok: false, stage, message: summary, detail };
};

/**
 * nftables through the `nft` tool with argument arrays: `nft -c -f -` validates (checks and previews only),
 * `nft -f -` loads a script in one kernel transaction — the full load replacing what `table inet bulwark` holds
 * (its objects listed first, `nft -s -t list table`, so its counters stay), or a delta changing parts of it — and
 * is its own check: a refused script changes nothing. `nft -s list table` reads the table back for drift,
 * `nft -j list counters` reads the counters (the rules' and the status's traffic counters). Loads go through a long-lived libnftables
 * session when one is given and available (nft-session.ts: the same scripts, without a process and a netlink
 * socket per load), through the CLI otherwise. Listings stay with the CLI: they fill a context's cache with every
 * rule, and the load after one in the same context paid 30 ms to drop that cache again.
 */
export class NftablesPacketFilter implements PacketFilter {
  readonly dialect = 'nftables' as const;
  readonly loadsDeltas = true;
  /** Loads begun: a counter listing begun before one is not reused after it. */
  private loads = 0;
  private counterListing: { loads: number; at: number; result: Promise<CommandResult> } | undefined;
  /** Rule lines per chain as last read back (readBack, readBackObjects); undefined before the first read. */
  private chainLines: Map<string, number> | undefined;

  constructor(
    /** The platform's status reader, kept where the platform defines it. */
    readonly status: () => Promise<PacketFilterStatus>,
    private readonly nft = 'nft',
    private readonly conntrack = 'conntrack',
    private readonly ip = 'ip',
    /** The product's default: a session of its own; a driver given another `nft` (a test's wrapper) has none unless given one. */
    private readonly session: NftSession | undefined = nft === 'nft' ? new NftSession() : undefined,
  ) {}

  close(): Promise<void> {
    return this.session?.close() ?? Promise.resolve();
  }

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
    const refused = wrongDialect(this.dialect, ruleset);
    if (refused) return refused;
    this.loads++;
    // No `nft -c` first: it parses and evaluates the same text at the same cost, and the load itself refuses
    // whatever the check would (and more: some refusals, e.g. a statement not allowed at a hook, only come from
    // the kernel at commit). A refused transaction is aborted as a whole; the previous table stays loaded.
    // A script the session refuses is run again by the CLI: refused, it changes nothing there either, and the
    // CLI's message names the refused line (the session's carry no line numbers).
    const viaSession = await this.session?.run(ruleset.text);
    const result = viaSession?.code === 0 ? viaSession : await runCommand(this.nft, ['-f', '-'], { input: ruleset.text });
    if (result.code === NOT_RUNNABLE) return { ok: false, stage: 'unavailable', message: message(result) };
    return result.code === 0 ? { ok: true } : refusal('apply', result, ruleset);
  }

  async readBack(): Promise<ReadBackResult> {
    // No table at all (flushed by hand, a reboot): an empty state, which differs from any loaded one.
    const listed = await this.listing('table', 'inet', NFT_TABLE);
    if (!listed.ok) return listed;
    const state = canonicalNftState(listed.text);
    this.chainLines = new Map();
    this.noteChainLines(Object.keys(state.objects), state);
    return { ok: true, state };
  }

  /** The rule lines of the table as Bulwark last read it back (after every load and drift check); undefined before. */
  ruleLinesRead(): number | undefined {
    return this.chainLines ? [...this.chainLines.values()].reduce((sum, lines) => sum + lines, 0) : undefined;
  }

  private noteChainLines(names: readonly string[], state: KernelState): void {
    for (const name of names.filter((n) => n.startsWith('chain '))) {
      const size = state.objects[name]?.size;
      if (size === undefined) this.chainLines?.delete(name);
      else this.chainLines?.set(name, size);
    }
  }

  /**
   * One listing per object: after a delta only what it touched is read back (an alias's set: 60 ms), not the
   * whole table (10,000 rules: over a second of nft and a 4 MB listing to parse). One `nft` each, since nft
   * (1.0.6) lists several objects in one run from the cache of the last one named.
   */
  async readBackObjects(names: readonly string[]): Promise<ReadBackResult> {
    const listings: string[] = [];
    for (const name of names) {
      const [type, objectName] = name.split(' ');
      const listed = await this.listing(type, 'inet', NFT_TABLE, objectName);
      if (!listed.ok) return listed;
      listings.push(listed.text);
    }
    const state = canonicalNftState(listings.join('\n'));
    this.noteChainLines(names, state);
    return { ok: true, state };
  }

  /** `nft -s list <what>`: an object the kernel lacks lists as nothing; any other failure is its message's first line. */
  private async listing(...what: string[]): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
    const result = await runCommand(this.nft, ['-s', 'list', ...what]);
    if (result.code === NOT_RUNNABLE) return { ok: false, message: message(result) };
    if (result.code === 0) return { ok: true, text: result.stdout };
    return /No such file or directory/.test(result.stderr) ? { ok: true, text: '' } : { ok: false, message: message(result).split('\n')[0].slice(0, 200) };
  }

  /**
   * The table's objects by kind and name, for a full load that keeps its counter objects (renderFullLoad), through
   * the CLI: the terse, stateless listing (no set elements, no counter values). nft (1.0.6) reads every rule for any
   * listing of objects (`list counters` costs as much), so the whole table it is, in one run. No table: none. A failed
   * listing: undefined (the full load then replaces the table whole).
   */
  async tableObjects(): Promise<NftObjectName[] | undefined> {
    const result = await runCommand(this.nft, ['-s', '-t', 'list', 'table', 'inet', NFT_TABLE]);
    if (result.code === 0) return parseNftTableObjects(result.stdout, NFT_TABLE);
    return /No such file or directory/.test(result.stderr) ? [] : undefined;
  }

  /**
   * The table's counter objects (the rules' and the traffic counters), through the CLI (a listing in the session
   * would fill its cache with every rule): `list counters` answers a ninth of the whole table's JSON, in about half
   * the time (nft 1.0.6 still reads every rule for it). `reuseWithinMs`: a listing begun that recently (and after
   * the last load began) answers instead, so GET /status and the dashboard's tick share one per second.
   */
  listCounters(reuseWithinMs = 0): Promise<CommandResult> {
    const now = Date.now();
    const known = this.counterListing;
    if (known && known.loads === this.loads && now - known.at < reuseWithinMs) return known.result;
    const result = runCommand(this.nft, ['-j', 'list', 'counters', 'table', 'inet', NFT_TABLE]);
    this.counterListing = { loads: this.loads, at: now, result };
    return result;
  }

  /** The rule hits read their own listing: one begun before they asked may miss what they must count. */
  async counters(): Promise<RuleCounter[]> {
    const result = await this.listCounters();
    if (result.code === 0) return parseNftRuleCounters(result.stdout);
    // No table: no counters. A listing that failed otherwise tells nothing (read as none, every rule's next
    // reading would be counted again).
    if (/No such file or directory/.test(result.stderr)) return [];
    throw new Error(message(result).split('\n')[0].slice(0, 200));
  }
}
