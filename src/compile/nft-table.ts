/**
 * The compiled `table inet bulwark` as objects (sets and chains) rather than one text: the full load renders
 * it whole, and a small change is loaded as the difference between two of them (nft-delta.ts). Everything here
 * is generic over sets and chains, so a compiler part that adds its own (geo-IP sets, another chain) needs no
 * change in the delta logic.
 */
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
  sets: NftSet[];
  /** Base chains and the regular chains they jump to; a chain must be declared before a rule jumps to it. */
  chains: NftChain[];
}

/** The script that replaces the whole table in one transaction: declare it (so delete cannot fail), delete it, declare it full. */
export function renderFullLoad(table: NftTable, trailer: readonly string[] = []): string {
  const out: string[] = [
    '#!/usr/sbin/nft -f',
    `# Bulwark ruleset (generated; do not edit). Touches only table inet ${NFT_TABLE}, replaced in one transaction.`,
    `table inet ${NFT_TABLE}`,
    `delete table inet ${NFT_TABLE}`,
    '',
    `table inet ${NFT_TABLE} {`,
  ];
  for (const set of table.sets) out.push(...renderSet(set));
  // Regular chains first: the kernel resolves `jump` targets as the base chains' rules are added.
  for (const chain of [...table.chains.filter((c) => !c.base), ...table.chains.filter((c) => c.base)]) {
    out.push(...renderChain(chain));
  }
  out.push('}', ...trailer);
  return `${out.join('\n')}\n`;
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
