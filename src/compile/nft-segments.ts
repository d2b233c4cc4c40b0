/**
 * User rules live in small regular chains ("segments") that the hooked chain jumps to in order, so a change to
 * one rule rewrites one segment (about 32 rules) instead of the whole hooked chain. Segment boundaries depend
 * only on the rule ids (a boundary after a rule whose id hashes to 0 mod 32), never on positions: adding,
 * deleting or moving a rule changes its own segment(s), and the segments around keep their names and contents.
 * A run without a natural boundary is cut at MAX_RULES so no segment grows without bound.
 *
 * A segment whose rules render to the very same line arrays as in the previous compile (the rule-line cache
 * hands out one array per rule and context) is the previous NftChain object again: the delta, the full text and
 * the digest then skip it by identity instead of comparing its lines.
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

/** Whether a segment ends after the rule of this id. */
export function segmentBoundary(id: string): boolean {
  return idHash(id) % AVERAGE_RULES === 0;
}

export interface RuleLines {
  id: string;
  lines: string[];
  /** segmentBoundary(id): the caller keeps it with the lines (20,000 ids hashed per compile otherwise). */
  boundary: boolean;
}

/**
 * Groups rules (in evaluation order) into segment chains named `<prefix>_<first rule id>` and returns them with
 * the jump rules the hooked chain holds. Rules that render no line (nothing can match) are left out.
 */
export function segmentChains(prefix: string, rules: readonly RuleLines[]): { segments: NftChain[]; jumps: string[] } {
  const segments: NftChain[] = [];
  let members: string[][] = [];
  let name = '';
  const close = () => {
    segments.push(reused(name, members));
    members = [];
  };
  for (const { id, lines, boundary } of rules) {
    if (lines.length === 0) continue;
    if (members.length === 0) name = `${prefix}_${id}`;
    members.push(lines);
    if (boundary || members.length >= MAX_RULES) close();
  }
  if (members.length) close();
  return { segments, jumps: segments.map((segment) => `jump ${segment.name}`) };
}

// The segments of recent compiles by name, with the line arrays they were built from. Bounded: cleared when it
// outgrows a few configurations (several apps in one process, the tests, each keep their own segments in it).
const recentSegments = new Map<string, { members: string[][]; chain: NftChain }>();
function reused(name: string, members: string[][]): NftChain {
  const known = recentSegments.get(name);
  if (known && known.members.length === members.length && known.members.every((lines, i) => lines === members[i])) return known.chain;
  if (recentSegments.size > 50_000) recentSegments.clear();
  const chain: NftChain = { name, rules: members.flat() };
  recentSegments.set(name, { members, chain });
  return chain;
}
