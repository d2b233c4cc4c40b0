/**
 * User rules live in small regular chains ("segments") that the hooked chain jumps to in order, so a change to
 * one rule rewrites one segment (about 32 rules) instead of the whole hooked chain. Segment boundaries depend
 * only on the rule ids (a boundary after a rule whose id hashes to 0 mod 32), never on positions: adding,
 * deleting or moving a rule changes its own segment(s), and the segments around keep their names and contents.
 * A run without a natural boundary is cut at MAX_RULES so no segment grows without bound.
 */
import type { NftChain } from './nft-table.js';

const AVERAGE_RULES = 32;
const MAX_RULES = 128;

/** FNV-1a of the id: stable across processes and versions (boundaries must not move on restart). */
function idHash(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

export interface RuleLines {
  id: string;
  lines: string[];
}

/**
 * Groups rules (in evaluation order) into segment chains named `<prefix>_<first rule id>` and returns them with
 * the jump rules the hooked chain holds. Rules that render no line (nothing can match) are left out.
 */
export function segmentChains(prefix: string, rules: readonly RuleLines[]): { segments: NftChain[]; jumps: string[] } {
  const segments: NftChain[] = [];
  let current: NftChain | undefined;
  let members = 0;
  for (const { id, lines } of rules) {
    if (lines.length === 0) continue;
    if (!current) {
      current = { name: `${prefix}_${id}`, rules: [] };
      segments.push(current);
      members = 0;
    }
    current.rules.push(...lines);
    members++;
    if (idHash(id) % AVERAGE_RULES === 0 || members >= MAX_RULES) current = undefined;
  }
  return { segments, jumps: segments.map((segment) => `jump ${segment.name}`) };
}
