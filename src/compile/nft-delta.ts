/**
 * The nft script that turns the table the kernel holds (as last loaded) into a new one by touching only what
 * differs: elements added to or deleted from a set, a chain whose rules changed flushed and filled again, new
 * sets and chains added, old ones deleted. `nft -f` runs the script as one transaction, so it is as atomic as the
 * full load: all of it or nothing. Generic over sets and chains (any compiler part's sets and chains are handled).
 *
 * Returns undefined when a delta is not the safe or cheaper way: a base chain or a set declaration changed (a
 * hook, a priority, a type), or most of the table changes anyway.
 */
import { NFT_TABLE } from './compiled.js';
import { ruleLineCount, type NftChain, type NftSet, type NftTable } from './nft-table.js';

const TABLE = `inet ${NFT_TABLE}`;
/**
 * Above this share of the new table's rule lines and elements rewritten, the full load is as cheap and simpler
 * to trust; below SMALL_TABLE entries either costs milliseconds, and the delta keeps the counters of the rest.
 */
const MAX_REWRITTEN_SHARE = 0.5;
const SMALL_TABLE = 1000;

export interface NftDelta {
  script: string;
  /** Chains flushed and filled again, added or deleted; sets added, deleted or with elements changed. */
  changed: { chains: number; sets: number; ruleLines: number; elements: number };
}

const sameLines = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((line, i) => line === b[i]);
const elementList = (elements: readonly string[]) => `{ ${elements.join(', ')} }`;

export function nftDelta(before: NftTable, after: NftTable): NftDelta | undefined {
  const oldSets = new Map(before.sets.map((s) => [s.name, s]));
  const newSets = new Map(after.sets.map((s) => [s.name, s]));
  const oldChains = new Map(before.chains.map((c) => [c.name, c]));
  const newChains = new Map(after.chains.map((c) => [c.name, c]));

  // Base chains (hooks) are the table's skeleton: any change to them is a full load.
  const bases = (chains: readonly NftChain[]) => chains.filter((c) => c.base).map((c) => `${c.name}\n${c.base}`).join('\n');
  if (bases(before.chains) !== bases(after.chains)) return undefined;

  const head: string[] = [];
  const elementLines: string[] = [];
  let sets = 0;
  let elements = 0;
  for (const set of after.sets) {
    const old = oldSets.get(set.name);
    if (old && !sameLines(old.declaration, set.declaration)) return undefined;
    if (!old) {
      head.push(`add set ${TABLE} ${set.name} { ${set.declaration.join('; ')}; }`);
      sets++;
    }
    const previous = new Set(old?.elements ?? []);
    const current = new Set(set.elements);
    const removed = (old?.elements ?? []).filter((e) => !current.has(e));
    const added = set.elements.filter((e) => !previous.has(e));
    if (removed.length) elementLines.push(`delete element ${TABLE} ${set.name} ${elementList(removed)}`);
    if (added.length) elementLines.push(`add element ${TABLE} ${set.name} ${elementList(added)}`);
    if (old && removed.length + added.length) sets++;
    elements += removed.length + added.length;
  }

  const addChains: string[] = [];
  const fill: string[] = [];
  let chains = 0;
  let ruleLines = 0;
  // Regular chains are filled before the base chains that jump to them.
  for (const chain of [...after.chains.filter((c) => !c.base), ...after.chains.filter((c) => c.base)]) {
    const old = oldChains.get(chain.name);
    if (old && sameLines(old.rules, chain.rules)) continue;
    if (!old) addChains.push(`add chain ${TABLE} ${chain.name}`);
    else fill.push(`flush chain ${TABLE} ${chain.name}`);
    for (const rule of chain.rules) fill.push(`add rule ${TABLE} ${chain.name} ${rule}`);
    chains++;
    ruleLines += chain.rules.length;
  }

  // Gone only after the rules that jumped to them or matched on them are replaced.
  const tail: string[] = [];
  for (const chain of before.chains) {
    if (newChains.has(chain.name)) continue;
    tail.push(`flush chain ${TABLE} ${chain.name}`, `delete chain ${TABLE} ${chain.name}`);
    chains++;
  }
  for (const set of before.sets) {
    if (newSets.has(set.name)) continue;
    tail.push(`delete set ${TABLE} ${set.name}`);
    sets++;
  }

  if (ruleLines + elements > Math.max(SMALL_TABLE, MAX_REWRITTEN_SHARE * (ruleLineCount(after) + countElements(after.sets)))) return undefined;
  const lines = [...head, ...elementLines, ...addChains, ...fill, ...tail];
  return { script: lines.length ? `${lines.join('\n')}\n` : '', changed: { chains, sets, ruleLines, elements } };
}

const countElements = (sets: readonly NftSet[]) => sets.reduce((sum, set) => sum + set.elements.length, 0);
