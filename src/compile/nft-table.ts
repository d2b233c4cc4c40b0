/**
 * The compiled `table inet bulwark` as objects (sets and chains) rather than one text: the full load renders
 * it whole, and a small change is loaded as the difference between two of them (nft-delta.ts). Everything here
 * is generic over sets and chains, so a compiler part that adds its own (geo-IP sets, another chain) needs no
 * change in the delta logic.
 */
import { createHash } from 'node:crypto';
import { sha256Hex } from '../core/crypto.js';
import { NFT_TABLE } from './compiled.js';

export interface NftSet {
  name: string;
  /** The declaration lines without the elements, e.g. `type ipv4_addr`, `flags interval`. */
  declaration: string[];
  /** Element texts as rendered (CIDRs, protocol names), each unique. */
  elements: string[];
}

export interface NftChain {
  name: string;
  /** A base chain's `type … hook … priority …; policy …;` line; absent for a regular (jumped-to) chain. */
  base?: string;
  /** The rules, one nft statement line each, in evaluation order. */
  rules: string[];
}

export interface NftTable {
  /**
   * Named counter objects, declared empty before the chains that count into them: the traffic counters and one
   * per loaded rule. A delta adds the new ones and leaves the others (what they counted stays).
   */
  counters?: string[];
  sets: NftSet[];
  /** Base chains and the regular chains they jump to; a chain must be declared before a rule jumps to it. */
  chains: NftChain[];
}

/** An object of the table as the kernel lists it (`chain in_3`, `set alias_web_v4`, `counter rule_x`, `ct helper h`). */
export interface NftObjectName {
  kind: string;
  name: string;
  /** A set's or map's declaration lines as listed (`type ipv4_addr`, `flags interval`), elements left out. */
  declaration?: string[];
  /** A chain with a hook (a base chain). */
  hooked?: boolean;
}

/**
 * The script that replaces the whole table in one transaction. Without `present`, self-contained (the boot
 * file, previews, checks): declare the table (so delete cannot fail), delete it, declare it full — every counter
 * starts from zero. With `present` (the objects the kernel's table holds now, nft-listing.ts), the table stays:
 * every rule goes (`flush table`), the objects the new table declares alike stay (counters with what they counted;
 * sets emptied; regular chains, which the flush emptied), every other object goes; then the table is declared full.
 * One transaction either way: no moment holds a half-loaded table.
 */
export function renderFullLoad(table: NftTable, trailer: readonly string[] = [], present?: readonly NftObjectName[]): string {
  const counterNames = table.counters ?? [];
  const head = present
    ? [
      '#!/usr/sbin/nft -f',
      `# Bulwark ruleset (generated; do not edit). Touches only table inet ${NFT_TABLE}, replaced in one transaction; its counters stay.`,
      `table inet ${NFT_TABLE}`,
      `flush table inet ${NFT_TABLE}`,
      ...keptOrDeleted(table, present),
      '',
      `table inet ${NFT_TABLE} {`,
    ]
    : [
      '#!/usr/sbin/nft -f',
      `# Bulwark ruleset (generated; do not edit). Touches only table inet ${NFT_TABLE}, replaced in one transaction.`,
      `table inet ${NFT_TABLE}`,
      `delete table inet ${NFT_TABLE}`,
      '',
      `table inet ${NFT_TABLE} {`,
    ];
  const counters = counterNames.flatMap((name) => [`\tcounter ${name} {`, '\t}']);
  const body = [...counters, ...loadOrder(table).map((object) => rendered(object).text)];
  return `${[...head, ...body, '}', ...trailer].join('\n')}\n`;
}

/**
 * What a full load over the table keeps and deletes, once the flush has left no rule to refer to anything. Kept, so
 * the kernel does not tear down and build again thousands of them (deleting and declaring every set and chain cost
 * 1.5x the CPU of a load into a new table at 10,000 rules; keeping them, 1.1x): the counters the new table declares
 * (with what they counted), its sets whose declaration the kernel lists alike (emptied: the declaration fills them
 * again) and its regular chains (the flush emptied them). Deleted: sets and maps first (a map's verdicts may name a
 * chain, its elements a counter), then chains (base chains always: a hook or priority cannot change in place), then
 * flowtables and the other objects, of the counters those of rules no longer loaded (their counts go with them).
 */
function keptOrDeleted(table: NftTable, present: readonly NftObjectName[]): string[] {
  const counters = new Set(table.counters ?? []);
  const sets = new Map(table.sets.map((set) => [set.name, set]));
  const regularChains = new Set(table.chains.filter((chain) => !chain.base).map((chain) => chain.name));
  const kept = (object: NftObjectName) => {
    if (object.kind === 'counter') return counters.has(object.name);
    if (object.kind === 'chain') return regularChains.has(object.name) && !object.hooked;
    const set = object.kind === 'set' ? sets.get(object.name) : undefined;
    return set !== undefined && object.declaration !== undefined && set.declaration.join('\n') === object.declaration.join('\n');
  };
  const rank = (kind: string) => (kind === 'set' || kind === 'map' ? 0 : kind === 'chain' ? 1 : 2);
  const flushed = present.filter((object) => object.kind === 'set' && kept(object)).map((set) => `flush set inet ${NFT_TABLE} ${set.name}`);
  const deleted = present.filter((object) => !kept(object)).sort((a, b) => rank(a.kind) - rank(b.kind));
  return [...flushed, ...deleted.map((object) => `delete ${object.kind} inet ${NFT_TABLE} ${object.name}`)];
}

/**
 * A digest of the table as loaded (sets and chains in load order): equal tables, equal digests. Built from each
 * object's own digest, which is kept with the object, so a recompile that reuses most objects hashes only the
 * few new ones.
 */
export function tableDigest(table: NftTable): string {
  // One update of the digests joined: the same bytes as one update each, without thousands of calls into OpenSSL.
  return createHash('sha256').update(loadOrder(table).map((object) => rendered(object).digest).join('')).digest('hex');
}

/** Sets first, then regular chains: the kernel resolves `jump` targets as the base chains' rules are added. */
const loadOrder = (table: NftTable): (NftSet | NftChain)[] => [
  ...table.sets, ...table.chains.filter((c) => !c.base), ...table.chains.filter((c) => c.base),
];

// Compiles reuse unchanged sets and segment chains as the same objects (nft-segments.ts): their text is rendered once.
const renderedObjects = new WeakMap<NftSet | NftChain, { text: string; digest: string }>();
function rendered(object: NftSet | NftChain): { text: string; digest: string } {
  let known = renderedObjects.get(object);
  if (!known) {
    const text = ('elements' in object ? renderSet(object) : renderChain(object)).join('\n');
    known = { text, digest: sha256Hex(text) };
    renderedObjects.set(object, known);
  }
  return known;
}

export function renderSet(set: NftSet): string[] {
  return [
    `\tset ${set.name} {`,
    ...set.declaration.map((line) => `\t\t${line}`),
    ...(set.elements.length ? [`\t\telements = { ${set.elements.join(', ')} }`] : []),
    '\t}',
  ];
}

export function renderChain(chain: NftChain): string[] {
  return [`\tchain ${chain.name} {`, ...(chain.base ? [`\t\t${chain.base}`] : []), ...chain.rules.map((rule) => `\t\t${rule}`), '\t}'];
}

/** Number of rule lines in the table (for choosing between a delta and a full load). */
export const ruleLineCount = (table: NftTable) => table.chains.reduce((sum, chain) => sum + chain.rules.length, 0);
