/**
 * What a rule matches, as boxes: products of sets along direction, interface, protocol, source and destination
 * addresses and ports, one box per address family. Rule analysis subtracts and intersects them exactly (set
 * arithmetic, no sampling). Values the configuration cannot know (an `interface address`, which depends on the
 * addresses the host holds) are over-approximated where a rule is judged and under-approximated where it
 * covers others, so a finding is never claimed that some host could contradict.
 */
import type { Family } from './addresses.js';
import { cidrLast } from './addresses.js';
import type { AddressMatch, FilterRule, FirewallModel } from './firewall-model.js';
import { complement, intersect, isSubset, normalise, overlaps, subtract, type IntervalSet } from './interval-sets.js';

export interface RuleBox {
  family: Family;
  /** 1 in, 2 out. */
  direction: number;
  /** Bits of the interface universe (every interface a rule names, and one bit for all others). */
  iface: bigint;
  /** Bits of PROTOCOL_BITS. */
  protocol: number;
  src: IntervalSet<bigint>;
  dst: IntervalSet<bigint>;
  sport: IntervalSet<number>;
  dport: IntervalSet<number>;
}

export const PROTOCOL_BITS: Record<string, number> = { tcp: 1, udp: 2, icmp: 4, icmp6: 8, esp: 16, ah: 32, gre: 64, 'tcp/udp': 3, any: 255 };
const FULL_PORTS: IntervalSet<number> = [[0, 65535]];
const LAST: Record<Family, bigint> = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n };

/** The interfaces rules name, each one bit; one more bit stands for every interface no rule names. */
export class InterfaceUniverse {
  private readonly indexes = new Map<string, number>();
  readonly all: bigint;

  constructor(names: Iterable<string>) {
    for (const name of names) if (!this.indexes.has(name)) this.indexes.set(name, this.indexes.size);
    this.all = (1n << BigInt(this.indexes.size + 1)) - 1n;
  }

  of(name: string | null): bigint {
    return name === null ? this.all : 1n << BigInt(this.indexes.get(name)!);
  }

  /** -1 for every interface. */
  index(name: string | null): number {
    return name === null ? -1 : this.indexes.get(name)!;
  }
}

/**
 * The addresses one side of a rule matches in one family. `role` says which way to approximate what the
 * configuration cannot know: `judged` takes the most the side could match, `covering` the least.
 */
function addressSet(address: AddressMatch, invert: boolean, family: Family, model: FirewallModel, role: 'judged' | 'covering'): IntervalSet<bigint> {
  const full: IntervalSet<bigint> = [[0n, LAST[family]]];
  let inside: IntervalSet<bigint>;
  switch (address.kind) {
    case 'any': inside = full; break;
    case 'interface': return role === 'judged' ? full : [];
    case 'alias': {
      const alias = model.aliases.get(address.name)!;
      inside = (family === 4 ? alias.v4 : alias.v6).map((block) => [block.base, cidrLast(block)] as const);
      break;
    }
    case 'block': inside = address.family === family ? [[address.cidr.base, cidrLast(address.cidr)]] : []; break;
    case 'range': inside = address.family === family ? [[address.first, address.last]] : []; break;
  }
  return invert ? complement(inside, 0n, LAST[family]) : normalise(inside);
}

const portSet = (range: { start: number; end: number } | null): IntervalSet<number> => (range ? [[range.start, range.end]] : FULL_PORTS);

/** The boxes of one rule, empty ones left out. */
export function ruleBoxes(compiled: FilterRule, model: FirewallModel, interfaces: InterfaceUniverse, role: 'judged' | 'covering'): RuleBox[] {
  const { rule } = compiled;
  const boxes: RuleBox[] = [];
  for (const family of compiled.families) {
    const box: RuleBox = {
      family,
      direction: rule.direction === 'in' ? 1 : rule.direction === 'out' ? 2 : 3,
      iface: interfaces.of(rule.interface),
      protocol: PROTOCOL_BITS[rule.protocol],
      src: addressSet(compiled.src, rule.src_invert, family, model, role),
      dst: addressSet(compiled.dst, rule.dst_invert, family, model, role),
      sport: portSet(rule.rule_match.src_port),
      dport: portSet(rule.rule_match.dst_port),
    };
    if (box.src.length && box.dst.length) boxes.push(box);
  }
  return boxes;
}

export function boxesIntersect(a: RuleBox, b: RuleBox): boolean {
  return a.family === b.family && (a.direction & b.direction) !== 0 && (a.iface & b.iface) !== 0n && (a.protocol & b.protocol) !== 0
    && overlaps(a.sport, b.sport) && overlaps(a.dport, b.dport) && overlaps(a.src, b.src) && overlaps(a.dst, b.dst);
}

/** Whether every packet of a is in b. */
export function boxContained(a: RuleBox, b: RuleBox): boolean {
  return a.family === b.family && (a.direction & ~b.direction) === 0 && (a.iface & ~b.iface) === 0n && (a.protocol & ~b.protocol) === 0
    && isSubset(a.sport, b.sport) && isSubset(a.dport, b.dport) && isSubset(a.src, b.src) && isSubset(a.dst, b.dst);
}

/**
 * a \ b as disjoint boxes: along each dimension in turn, the part of a outside b, with the dimensions before
 * it narrowed to b (at most seven boxes).
 */
export function subtractBox(a: RuleBox, b: RuleBox): RuleBox[] {
  if (!boxesIntersect(a, b)) return [a];
  const pieces: RuleBox[] = [];
  let rest = a;
  const maskStep = <K extends 'direction' | 'protocol'>(key: K) => {
    const outside = rest[key] & ~b[key];
    if (outside) pieces.push({ ...rest, [key]: outside });
    rest = { ...rest, [key]: rest[key] & b[key] };
  };
  maskStep('direction');
  const ifaceOutside = rest.iface & ~b.iface;
  if (ifaceOutside) pieces.push({ ...rest, iface: ifaceOutside });
  rest = { ...rest, iface: rest.iface & b.iface };
  maskStep('protocol');
  for (const key of ['sport', 'dport'] as const) {
    const outside = subtract(rest[key], b[key]);
    if (outside.length) pieces.push({ ...rest, [key]: outside });
    rest = { ...rest, [key]: intersect(rest[key], b[key]) };
  }
  for (const key of ['src', 'dst'] as const) {
    const outside = subtract(rest[key], b[key]);
    if (outside.length) pieces.push({ ...rest, [key]: outside });
    rest = { ...rest, [key]: intersect(rest[key], b[key]) };
  }
  return pieces;
}

/** Region minus every box of `cover`; undefined when it splits into more than `limit` boxes. */
export function subtractRegion(region: RuleBox[], cover: readonly RuleBox[], limit: number): RuleBox[] | undefined {
  let current = region;
  for (const box of cover) {
    const next: RuleBox[] = [];
    for (const piece of current) next.push(...subtractBox(piece, box));
    if (next.length > limit) return undefined;
    current = next;
  }
  return current;
}

export function regionIntersects(region: readonly RuleBox[], boxes: readonly RuleBox[]): boolean {
  return region.some((a) => boxes.some((b) => boxesIntersect(a, b)));
}
