import type { NftTable } from './nft-table.js';

/** What a compiler hands to the platform and to the inspection endpoints. */
export interface CompiledRuleset {
  dialect: 'pf' | 'nftables';
  /** The complete text loaded in one transaction (`nft -f -` or `pfctl -a bulwark -f -`). */
  text: string;
  /** sha256 of what is loaded (the table's sets and chains, or the pf text): equal rulesets, equal digests. */
  digest: string;
  /** nftables only: the table as sets and chains, from which a small change is loaded as a delta. */
  nft?: NftTable;
  /** The translation (NAT) part, for GET /nat/pf-output. */
  natLines: string[];
  /** The read-only rules the appliance always adds, for GET /rules/system. */
  systemLines: string[];
  /** Number of user filter rules compiled (disabled and out-of-schedule rules excluded). */
  ruleCount: number;
  natCount: number;
  /** Scheduled rules inside their window (loaded), by id: a schedule edge is a change of this list. */
  scheduledInForce: readonly string[];
  /** Counter name (nftables) or label (pf) → configuration object id, so counters map back to rules. */
  counters: Record<string, string>;
}

export const NFT_TABLE = 'bulwark';
export const PF_ANCHOR = 'bulwark';
