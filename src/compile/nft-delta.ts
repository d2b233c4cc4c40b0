/**
 * The nft script that turns the table the kernel holds (as last loaded) into a new one by touching only what
 * differs: elements added to a set, a chain whose rules changed flushed and filled again, new sets and chains
 * added, old ones deleted. `nft -f` runs the script as one transaction, so it is as atomic as the full load: all
 * of it or nothing. Generic over sets and chains (any compiler part's sets and chains are handled).
 *
 * Elements are added by `add set … { <declaration>; elements = … }`, the set declared again with them, never with
 * `add element` or `delete element`: for those, nft (1.0.6) first reads the elements of every interval set in the
 * table from the kernel (one netlink dump per set: 2,000 alias sets cost 90 ms before anything is loaded). A
 * `table … { set … }` block costs less but still reads every chain and set declaration (2,000 sets: 5 ms); an
 * `add set` that declares its set needs only the table from the kernel (0.5 ms). A set that loses elements is
 * flushed and filled again in the same transaction: its own size bounds the cost, not the whole table's.
 *
 * A chain's rules go in the same way: `add chain … { <rules> }` after a `flush chain`, never `add rule`. For an
 * `add rule` nft reads every chain and set declaration of the table first (400 chains and 2,000 sets: 3 ms of a
 * 12 ms delta); a chain declared with its rules needs only the table, and the sets its rules name are declared
 * in the script (`add set` with the declaration alone, which leaves the elements as they are), so nft finds them
 * without reading. Most of what remains is the kernel's own validation of the whole table, which any rule with a
 * verdict sets off (about 6 ms at 10,000 rules).
 *
 * Returns undefined when a delta is not the safe or cheaper way: a base chain or a set declaration changed (a
 * hook, a priority, a type), or most of the table changes anyway.
 */
import { NFT_TABLE } from './compiled.js';
import { ruleLineCount, type NftChain, type NftSet, type NftTable } from './nft-table.js';
import { commonEnds } from './common-ends.js';

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
  /** Those objects by name as the kernel lists them (`set alias_web_v4`, `chain in_3`). */
  touched: string[];
}

const sameLines = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((line, i) => line === b[i]);

export function nftDelta(before: NftTable, after: NftTable): NftDelta | undefined {
  const oldSets = new Map(before.sets.map((s) => [s.name, s]));
  const newSets = new Map(after.sets.map((s) => [s.name, s]));
  const oldChains = new Map(before.chains.map((c) => [c.name, c]));
  const newChains = new Map(after.chains.map((c) => [c.name, c]));

  // Base chains (hooks) are the table's skeleton: any change to them is a full load.
  const bases = (chains: readonly NftChain[]) => chains.filter((c) => c.base).map((c) => `${c.name}\n${c.base}`).join('\n');
  if (bases(before.chains) !== bases(after.chains)) return undefined;


  const flushSets: string[] = [];
  const addSets: string[] = [];
  const touched: string[] = [];
  let sets = 0;
  let elements = 0;
  for (const set of after.sets) {
    const old = oldSets.get(set.name);
    if (old && !sameLines(old.declaration, set.declaration)) return undefined;
    if (old && old.elements === set.elements) continue;
    const { lost, added: gained } = elementChange(old?.elements ?? [], set.elements);
    // A set that lost elements is filled again whole; otherwise only what it gained is added.
    const added = lost ? set.elements : gained;
    if (lost) flushSets.push(`flush set ${TABLE} ${set.name}`);
    if (old && !lost && added.length === 0) continue;
    addSets.push(addSetCommand({ ...set, elements: added }));
    touched.push(`set ${set.name}`);
    sets++;
    elements += added.length + (lost ? old!.elements.length : 0);
  }
  // Counter objects the new rules count into: added first (`add` keeps one that exists, and its count). Those of
  // rules no longer loaded are left with what they counted (a rule disabled or outside its schedule may come back);
  // the next full load drops them.
  const addCounters = newCounters(before.counters ?? [], after.counters ?? []).map((name) => {
    touched.push(`counter ${name}`);
    return `add counter ${TABLE} ${name}`;
  });
  const head = [...addCounters, ...flushSets, ...addSets];

  const flushChains: string[] = [];
  const fill: string[] = [];
  /** Sets the new rules name, each declared once unless the script declares it already (with new elements). */
  const declared = new Set(touched);
  const declare: string[] = [];
  let chains = 0;
  let ruleLines = 0;
  // Regular chains are filled before the base chains that jump to them.
  for (const chain of [...after.chains.filter((c) => !c.base), ...after.chains.filter((c) => c.base)]) {
    const old = oldChains.get(chain.name);
    if (old && (old === chain || sameLines(old.rules, chain.rules))) continue;
    if (old) flushChains.push(`flush chain ${TABLE} ${chain.name}`);
    for (const name of setsNamed(chain.rules)) {
      const set = newSets.get(name);
      if (!set || declared.has(`set ${name}`)) continue;
      declared.add(`set ${name}`);
      declare.push(addSetCommand({ ...set, elements: [] }));
    }
    fill.push(addChainCommand(chain));
    touched.push(`chain ${chain.name}`);
    chains++;
    ruleLines += chain.rules.length;
  }

  // Gone only after the rules that jumped to them or matched on them are replaced.
  const tail: string[] = [];
  for (const chain of before.chains) {
    if (newChains.has(chain.name)) continue;
    tail.push(`flush chain ${TABLE} ${chain.name}`, `delete chain ${TABLE} ${chain.name}`);
    touched.push(`chain ${chain.name}`);
    chains++;
  }
  for (const set of before.sets) {
    if (newSets.has(set.name)) continue;
    tail.push(`delete set ${TABLE} ${set.name}`);
    touched.push(`set ${set.name}`);
    sets++;
  }

  if (ruleLines + elements > Math.max(SMALL_TABLE, MAX_REWRITTEN_SHARE * (ruleLineCount(after) + countElements(after.sets)))) return undefined;
  const lines = [...head, ...declare, ...flushChains, ...fill, ...tail];
  return { script: lines.length ? `${lines.join('\n')}\n` : '', changed: { chains, sets, ruleLines, elements }, touched };
}

/** Counter names in `after` but not in `before` (both in the compiler's order: only the middle is compared). */
function newCounters(before: readonly string[], after: readonly string[]): string[] {
  if (before === after) return [];
  const { head, tail } = commonEnds(before, after);
  const known = new Set(before.slice(head, before.length - tail));
  return after.slice(head, after.length - tail).filter((name) => !known.has(name));
}

/**
 * Whether a set lost elements, and the ones it gained. Both lists are in the compiler's order, and an edit of a
 * large set touches a few places: the common head and tail are skipped first, and only the middle is compared
 * as sets (for an alias of 10,000 entries gaining one, a handful of elements instead of two 10,000-entry sets).
 */
function elementChange(before: readonly string[], after: readonly string[]): { lost: boolean; added: string[] } {
  const { head, tail } = commonEnds(before, after);
  const oldMiddle = before.slice(head, before.length - tail);
  const newMiddle = after.slice(head, after.length - tail);
  const current = new Set(newMiddle);
  const previous = new Set(oldMiddle);
  return { lost: oldMiddle.some((e) => !current.has(e)), added: newMiddle.filter((e) => !previous.has(e)) };
}

/**
 * The set declared (again, or for the first time) with the elements to add; `add` leaves the ones it holds. Each
 * item ends in `;`: nft's one-line grammar wants a terminator after a `flags` item even when `}` follows.
 */
function addSetCommand(set: NftSet): string {
  const items = [...set.declaration, ...(set.elements.length ? [`elements = { ${set.elements.join(', ')} }`] : [])];
  return `add set ${TABLE} ${set.name} { ${items.map((item) => `${item}; `).join('')}}`;
}

/** The chain declared (again, or for the first time) with its rules; a base chain with its hook line, unchanged. */
function addChainCommand(chain: NftChain): string {
  const items = [...(chain.base ? [chain.base] : []), ...chain.rules.map((rule) => `${rule};`)];
  return `add chain ${TABLE} ${chain.name}${items.length ? ` { ${items.join(' ')} }` : ''}`;
}

/**
 * The sets rules name (`@name`). A quoted text that happens to hold `@` and a set's name only declares that set
 * once more, as it is.
 */
function setsNamed(rules: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const rule of rules) for (const [, name] of rule.matchAll(/@([A-Za-z0-9_]+)/g)) names.add(name);
  return names;
}

const countElements = (sets: readonly NftSet[]) => sets.reduce((sum, set) => sum + set.elements.length, 0);
