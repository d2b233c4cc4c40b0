/**
 * What the IDS area last had the engine run — its configuration, the checked rules of each enabled ruleset and
 * the suppressions, as rendered at the last successful reload — kept in `service_state` (operational state, not
 * versioned with the configuration). A start of Bulwark renders this record, never the stored rules: an IDS edit
 * made without `POST /ids/reload` stays pending across a restart.
 */
import type { ConfigData } from '../../store/config-store.js';

export interface AppliedIds {
  /** false until a reload succeeded (nothing applied yet: the start has nothing to bring back). */
  recorded: boolean;
  /** The IDS configuration (mode, interfaces, networks, tuning) as it was applied. */
  config: ConfigData;
  /** Each enabled ruleset's checked rules (overrides applied), as the engine merged them. */
  rulesets: { id: string; rules: string }[];
  /** Every enabled rule in SID order (the simulated engine's file; the count the engine reports). */
  rules: string;
  /** threshold.config as applied. */
  threshold: string;
  /** The configuration version the record was applied from (null: not a recorded version). */
  version: number | null;
  /** Applied during a coordinated apply that has not yet recorded its version. */
  awaiting_version?: boolean;
}

export const APPLIED_IDS_KEY = 'ids.applied';
export const NOTHING_APPLIED_IDS: AppliedIds = { recorded: false, config: {}, rulesets: [], rules: '', threshold: '', version: null };
