import type { PacketFilterStatus } from '../platform.js';
import type { InterfaceCounters } from '../connections.js';
import type { ScheduleEdge } from '../../compile/schedule-edges.js';
import { wrongDialect, type ApplyResult, type PacketFilter, type ReadBackResult, type RuleCounter, type RulesetText } from '../packet-filter.js';
import { canonicalNftState } from '../linux/nft-listing.js';

/** The comment each compiled rule line carries (`rule <id>`, `nat <id>`). */
const RULE_COMMENT = /comment "(rule|nat) ([A-Za-z0-9_-]{1,64})"$/gm;

/**
 * Simulated packet filter: nothing reaches a kernel. It keeps the last applied nftables text (always a full
 * load: it takes no deltas) and one zeroed counter per rule in it (no traffic flows through a simulation).
 */
export class SimulatedPacketFilter implements PacketFilter {
  readonly dialect = 'nftables' as const;
  readonly loadsDeltas = false;
  appliedText: string | undefined;
  appliedAt: number | undefined;
  private counterNames: string[] = [];

  /**
   * stateCount: the size of the simulated connection table, so status agrees with the dashboard; interfaces: the
   * simulated interfaces, whose traffic (loopback aside) the simulated filter sees, as a real one counts what
   * crosses its hooks.
   */
  constructor(
    private readonly stateCount: () => number = () => 0,
    private readonly interfaces: () => Promise<readonly InterfaceCounters[]> = async () => [],
  ) {}

  async status(): Promise<PacketFilterStatus> {
    const seen = (await this.interfaces()).filter((i) => i.name !== 'lo');
    const sum = (field: 'packets_in' | 'packets_out' | 'bytes_in' | 'bytes_out') => seen.reduce((n, i) => n + i[field], 0);
    return {
      running: true, backend: 'simulated', rules: this.counterNames.filter((n) => n.startsWith('rule_')).length,
      states: this.stateCount(), packets_in: sum('packets_in'), packets_out: sum('packets_out'), bytes_in: sum('bytes_in'), bytes_out: sum('bytes_out'),
    };
  }

  async check(ruleset: RulesetText): Promise<ApplyResult> {
    return wrongDialect(this.dialect, ruleset) ?? { ok: true };
  }

  async apply(ruleset: RulesetText): Promise<ApplyResult> {
    const refused = wrongDialect(this.dialect, ruleset);
    if (refused) return refused;
    this.appliedText = ruleset.text;
    this.appliedAt = Date.now();
    this.counterNames = [...new Set([...ruleset.text.matchAll(RULE_COMMENT)].map((m) => `${m[1]}_${m[2]}`))];
    return { ok: true };
  }

  /** The applied text's sets and chains, read as the linux driver reads a kernel listing. */
  async readBack(): Promise<ReadBackResult> {
    return { ok: true, state: canonicalNftState(this.appliedText ?? '') };
  }

  /** No states exist in a simulation; the last edge is kept so tests can see what would be killed. */
  lastEdge: ScheduleEdge | undefined;

  async killStates(edge: ScheduleEdge): Promise<void> {
    this.lastEdge = edge;
  }

  async counters(): Promise<RuleCounter[]> {
    return this.counterNames.map((name) => ({ name, packets: 0, bytes: 0 }));
  }
}
