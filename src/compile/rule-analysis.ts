/**
 * Rule analysis over the compiled model, by set arithmetic on what each rule matches (rule-space.ts):
 * - never matches: everything the rule matches is decided by rules evaluated before it (shadowed), an empty
 *   alias makes its match empty, or its address family, protocol and addresses exclude each other;
 * - redundant: removing it changes no verdict (what reaches it is decided the same way by later rules or the
 *   default policy);
 * - conflicts: two rules with different actions whose matches overlap without either containing the other, so
 *   their order alone decides the overlap (a later, wider rule with another action is the usual "exceptions
 *   first" pattern and is not reported);
 * - empty aliases in use, and schedules that never fire.
 * Rules are judged in the order a first-match engine evaluates them (quick rules first, then the others last
 * first), which decides exactly as pf's last match. A scheduled rule is judged as if in force, and covers no
 * other rule (it is not always there) unless its schedule is disabled (then it always is).
 */
import { buildModel, firstMatchOrder, parseTimeRange, scheduleActive, type FilterRule, type FirewallModel } from './firewall-model.js';
import type { FirewallConfig, RuleData } from './firewall-types.js';
import { WEEKDAYS } from './firewall-types.js';
import { Bitset, OverlapIndex } from './overlap-index.js';
import { isSubset, normalise, type IntervalSet } from './interval-sets.js';
import { boxContained, boxesIntersect, InterfaceUniverse, PROTOCOL_BITS, regionIntersects, ruleBoxes, subtractRegion, type RuleBox } from './rule-space.js';

export interface NeverMatches {
  rule_id: string;
  reason: 'shadowed' | 'empty_alias' | 'address_family';
  /** For `shadowed`: the earlier-evaluated rules that decide everything it matches. */
  shadowed_by?: string[];
  detail: string;
}

export interface Redundant {
  rule_id: string;
  /** Later-evaluated rules that decide what it decides the same way (empty: the default policy does). */
  covered_by: string[];
  detail: string;
}

export interface Conflict {
  rule_id: string;
  other_rule_id: string;
  /** The one evaluated first, which decides the overlap. */
  decides: string;
  detail: string;
}

export interface EmptyAlias {
  alias: string;
  rule_ids: string[];
  detail: string;
}

export interface SilentSchedule {
  schedule_id: string;
  name: string;
  rule_ids: string[];
  detail: string;
}

export interface RuleAnalysis {
  never_matches: NeverMatches[];
  redundant: Redundant[];
  conflicts: Conflict[];
  empty_aliases: EmptyAlias[];
  schedules_never_fire: SilentSchedule[];
  /** Rules whose overlap with others splits into more pieces than the analysis follows: not judged. */
  not_analysed: { rule_id: string; detail: string }[];
}

/** How many disjoint pieces one rule's remaining match may split into before it is left unjudged. */
const REGION_LIMIT = 256;
/** The same for redundancy, which gives up (claims nothing) sooner: it only ever adds a finding. */
const REDUNDANCY_LIMIT = 256;

interface Judged {
  compiled: FilterRule;
  position: number;
  judged: RuleBox[];
  covering: RuleBox[];
  /** Roughly how much it covers (see breadth). */
  breadth: number;
}

const verdictWord = (action: RuleData['action']) => (action === 'pass' ? 'pass' : action);

type Keys = (readonly [number, number])[];

/**
 * For each rule (or just `only`), the rules whose matches may overlap its own, in first-match order: found
 * through overlap indexes on source and destination addresses per family and on destination ports, then
 * direction, protocol and interface; only these pairs need set arithmetic.
 */
function overlapLists(rules: readonly Judged[], interfaces: InterfaceUniverse, only?: number): number[][] {
  const keys = (family: 4 | 6, set: readonly (readonly [bigint, bigint])[]): Keys =>
    set.map(([a, b]) => (family === 4 ? [Number(a), Number(b)] as const : [Number(a >> 75n), Number(b >> 75n)] as const));
  const empty = (): Keys[] => rules.map(() => []);
  const dims = { src4: empty(), dst4: empty(), src6: empty(), dst6: empty(), dport: empty() };
  const masks = rules.map((rule) => ({ direction: 0, protocol: 0, iface: interfaces.of(rule.compiled.rule.interface), families: 0 }));
  rules.forEach((rule, i) => {
    for (const box of rule.judged) {
      dims[`src${box.family}`][i] = keys(box.family, box.src);
      dims[`dst${box.family}`][i] = keys(box.family, box.dst);
      dims.dport[i] = box.dport.map(([a, b]) => [a, b] as const);
      masks[i].direction |= box.direction;
      masks[i].protocol |= box.protocol;
      masks[i].families |= box.family;
    }
  });
  const last4 = 2 ** 32 - 1;
  const last6 = Number(((1n << 128n) - 1n) >> 75n);
  const index = {
    src4: new OverlapIndex(rules.length, dims.src4, (a, b) => a === 0 && b === last4),
    dst4: new OverlapIndex(rules.length, dims.dst4, (a, b) => a === 0 && b === last4),
    src6: new OverlapIndex(rules.length, dims.src6, (a, b) => a === 0 && b === last6),
    dst6: new OverlapIndex(rules.length, dims.dst6, (a, b) => a === 0 && b === last6),
    dport: new OverlapIndex(rules.length, dims.dport, (a, b) => a === 0 && b === 65535),
  };
  const lists: number[][] = rules.map(() => []);
  for (let i = 0; i < rules.length; i++) {
    if (only !== undefined && i !== only) continue;
    // A dimension the rule spans whole (`any`) narrows nothing: it is not queried.
    const whole = (keys: Keys, last: number) => keys.length === 1 && keys[0][0] === 0 && keys[0][1] === last;
    let candidates: Bitset | undefined;
    for (const family of [4, 6] as const) {
      if (!(masks[i].families & family)) continue;
      const last = family === 4 ? last4 : last6;
      const src = dims[`src${family}`][i];
      const dst = dims[`dst${family}`][i];
      let both: Bitset | undefined;
      if (!whole(src, last)) both = index[`src${family}`].overlapping(src);
      if (!whole(dst, last)) {
        const byDst = index[`dst${family}`].overlapping(dst);
        if (both) both.and(byDst);
        else both = byDst;
      }
      // Neither address narrows: every rule of this family may overlap.
      both ??= index[`src${family}`].everything();
      if (candidates) candidates.or(both);
      else candidates = both;
    }
    candidates ??= new Bitset(rules.length);
    if (!whole(dims.dport[i], 65535)) candidates.and(index.dport.overlapping(dims.dport[i]));
    for (const j of candidates.members()) {
      if (j === i) continue;
      const a = masks[i];
      const b = masks[j];
      if ((a.direction & b.direction) === 0 || (a.protocol & b.protocol) === 0 || (a.iface & b.iface) === 0n) continue;
      lists[i].push(j);
    }
  }
  return lists;
}

/**
 * A cheap necessary condition for `cover` to contain every box of `region`: along each dimension on its own,
 * the boxes of `cover` that touch a box must together span it. Most rules fail it, and skip the subtraction.
 */
function projectionsCovered(region: readonly RuleBox[], cover: readonly RuleBox[]): boolean {
  for (const box of region) {
    const touching = cover.filter((c) => boxesIntersect(box, c));
    if (touching.length === 0) return false;
    let direction = 0;
    let protocol = 0;
    let iface = 0n;
    for (const c of touching) {
      direction |= c.direction;
      protocol |= c.protocol;
      iface |= c.iface;
    }
    if ((box.direction & ~direction) !== 0 || (box.protocol & ~protocol) !== 0 || (box.iface & ~iface) !== 0n) return false;
    // Usually one touching box spans a dimension alone; only otherwise is the union built.
    const spans = <T extends bigint | number>(inner: IntervalSet<T>, sets: IntervalSet<T>[]) => sets.some((set) => isSubset(inner, set)) || isSubset(inner, normalise(sets.flat()));
    if (!spans(box.dport, touching.map((c) => c.dport)) || !spans(box.sport, touching.map((c) => c.sport))) return false;
    if (!spans(box.dst, touching.map((c) => c.dst)) || !spans(box.src, touching.map((c) => c.src))) return false;
  }
  return true;
}

const bits = (set: readonly (readonly [bigint, bigint] | readonly [number, number])[]) =>
  set.reduce((sum, [a, b]) => sum + (BigInt(b) - BigInt(a) + 1n), 0n).toString(2).length;

/** How much boxes match, roughly (bits of each dimension's size): orders the subtraction. */
function breadth(boxes: readonly RuleBox[]): number {
  return Math.max(0, ...boxes.map((box) => bits(box.src) + bits(box.dst) + bits(box.sport) + bits(box.dport)));
}

function shadowFinding(subject: Judged, earlier: readonly Judged[]): { remaining: RuleBox[]; finding?: NeverMatches; unjudged?: boolean } {
  let region: RuleBox[] = subject.judged;
  // Not coverable: what reaches the rule is (at most) all of it, which is what redundancy is then judged on.
  if (!projectionsCovered(region, earlier.flatMap((rule) => rule.covering))) return { remaining: region };
  // The usual case: one earlier rule contains it all.
  const container = earlier.find((rule) => rule.covering.length && region.every((box) => rule.covering.some((c) => boxContained(box, c))));
  if (container) {
    const id = container.compiled.id;
    return { remaining: [], finding: { rule_id: subject.compiled.id, reason: 'shadowed', shadowed_by: [id], detail: `never matches: rule ${id} is evaluated first and decides every packet it matches` } };
  }
  const by: Judged[] = [];
  // The widest rules first: they take the largest pieces, so the region splits least.
  const widestFirst = earlier.filter((rule) => rule.covering.length).sort((a, b) => b.breadth - a.breadth);
  for (const rule of widestFirst) {
    if (!regionIntersects(region, rule.covering)) continue;
    by.push(rule);
    const next = subtractRegion(region, rule.covering, REGION_LIMIT);
    if (!next) return { remaining: subject.judged, unjudged: true };
    region = next;
    if (region.length === 0) {
      const ids = by.sort((a, b) => a.position - b.position).map((rule) => rule.compiled.id);
      const decided = ids.length === 1 ? `rule ${ids[0]} is evaluated first and decides every packet it matches` : `rules ${ids.join(', ')} are evaluated first and decide every packet it matches`;
      return { remaining: region, finding: { rule_id: subject.compiled.id, reason: 'shadowed', shadowed_by: ids, detail: `never matches: ${decided}` } };
    }
  }
  return { remaining: region };
}

/**
 * Whether what reaches `subject` (region, or more) is decided the same without it, by later rules or the
 * default policy (pass). Judging more than reaches it can only miss a redundancy, never claim a wrong one.
 */
function redundancyFinding(subject: Judged, region: RuleBox[], later: readonly Judged[]): Redundant | undefined {
  const action = subject.compiled.rule.action;
  const touching = later.filter((rule) => regionIntersects(region, rule.judged));
  const differs = touching.some((rule) => rule.compiled.rule.action !== action);
  const sameCover = touching.filter((rule) => rule.compiled.rule.action === action).flatMap((rule) => rule.covering);
  // Quick answers: a pass rule no later rule contradicts falls to later passes and the default pass; a block
  // rule whose match later blocks cannot span is not redundant.
  if (!differs && action === 'pass') return redundant(subject, touching.map((rule) => rule.compiled.id), true);
  if (action !== 'pass' && !projectionsCovered(region, sameCover)) return undefined;
  const by: string[] = [];
  for (const rule of touching) {
    if (!regionIntersects(region, rule.judged)) continue;
    if (rule.compiled.rule.action !== action) return undefined;
    // A later rule that is not always there (scheduled) or whose match is not fully known covers only part.
    if (!rule.covering.length) continue;
    by.push(rule.compiled.id);
    const next = subtractRegion(region, rule.covering, REDUNDANCY_LIMIT);
    if (!next) return undefined;
    region = next;
    if (region.length === 0) break;
  }
  if (region.length > 0 && action !== 'pass') return undefined;
  return redundant(subject, by, region.length > 0);
}

function redundant(subject: Judged, by: string[], byDefault: boolean): Redundant {
  const rest = byDefault ? (by.length ? ' and the default policy (pass)' : 'the default policy (pass)') : '';
  const rules = by.length ? `rule${by.length > 1 ? 's' : ''} ${by.join(', ')}` : '';
  const action = subject.compiled.rule.action;
  return { rule_id: subject.compiled.id, covered_by: by, detail: `redundant: without it, ${rules}${rest} decide${by.length === 1 && !rest ? 's' : ''} the same (${verdictWord(action)})` };
}

function conflictBetween(first: Judged, second: Judged): Conflict | undefined {
  const a = first.compiled.rule;
  const b = second.compiled.rule;
  if (a.action === b.action) return undefined;
  const overlapping = first.judged.some((x) => second.judged.some((y) => boxesIntersect(x, y)));
  if (!overlapping) return undefined;
  // Containment either way is shadowing (reported above) or the intended "exception first" pattern.
  const within = (inner: RuleBox[], outer: RuleBox[]) => inner.every((x) => outer.some((y) => boxContained(x, y)));
  if (within(first.judged, second.judged) || within(second.judged, first.judged)) return undefined;
  return {
    rule_id: first.compiled.id, other_rule_id: second.compiled.id, decides: first.compiled.id,
    detail: `overlaps rule ${second.compiled.id} with another action (${verdictWord(a.action)} / ${verdictWord(b.action)}); neither contains the other, so their order decides the overlap: ${first.compiled.id} is evaluated first`,
  };
}

function silentSchedules(config: FirewallConfig): SilentSchedule[] {
  const found: SilentSchedule[] = [];
  for (const { id, data } of config.schedules) {
    if (!data.enabled) continue;
    const starts = data.time_ranges.split(',').map(parseTimeRange).filter((r) => r !== undefined).map((r) => r.start);
    // A schedule fires when it is active at the start of one of its ranges on some day (the compiler's own test).
    const fires = WEEKDAYS.some((day) => starts.some((minute) => scheduleActive(data, day, minute)));
    if (fires) continue;
    const rules = config.rules.filter((r) => r.data.schedule_id === id && r.data.status === 'active').map((r) => r.id);
    found.push({ schedule_id: id, name: data.name, rule_ids: rules, detail: `schedule "${data.name}" is never active: ${starts.length ? 'none of its days is a weekday token (mon … sun)' : 'none of its time ranges reads as HH:MM-HH:MM'}; its rules are never loaded` });
  }
  return found;
}

function emptyAliases(model: FirewallModel): { aliases: EmptyAlias[]; never: NeverMatches[] } {
  const users = new Map<string, string[]>();
  const never: NeverMatches[] = [];
  for (const compiled of model.rules) {
    for (const [side, address, invert] of [['source', compiled.src, compiled.rule.src_invert], ['destination', compiled.dst, compiled.rule.dst_invert]] as const) {
      if (address.kind !== 'alias') continue;
      const alias = model.aliases.get(address.name)!;
      if (alias.v4.length + alias.v6.length > 0) continue;
      users.set(address.name, [...(users.get(address.name) ?? []), compiled.id]);
      if (!invert && !never.some((n) => n.rule_id === compiled.id)) {
        never.push({ rule_id: compiled.id, reason: 'empty_alias', detail: `never matches: its ${side} alias <${address.name}> holds no address` });
      }
    }
  }
  const aliases = [...users].map(([alias, ruleIds]) => ({
    alias, rule_ids: [...new Set(ruleIds)],
    detail: `alias <${alias}> holds no address (disabled, empty, or a url table not fetched yet) and is used by ${new Set(ruleIds).size} rule(s)`,
  }));
  return { aliases, never };
}

const portsMeet = (a: { start: number; end: number } | null, b: { start: number; end: number } | null) => !a || !b || (a.start <= b.end && b.start <= a.end);

/** Whether two rules can match one packet, judged from direction, interface, protocol, family and ports only. */
function mayMeet(a: FilterRule, b: FilterRule): boolean {
  const x = a.rule;
  const y = b.rule;
  if (x.direction !== 'any' && y.direction !== 'any' && x.direction !== y.direction) return false;
  if (x.interface !== null && y.interface !== null && x.interface !== y.interface) return false;
  if ((PROTOCOL_BITS[x.protocol] & PROTOCOL_BITS[y.protocol]) === 0) return false;
  if (!a.families.some((family) => b.families.includes(family))) return false;
  return portsMeet(x.rule_match.dst_port, y.rule_match.dst_port) && portsMeet(x.rule_match.src_port, y.rule_match.src_port);
}

/**
 * Analyses the rules of `config`. With `only`, just the findings about that rule: whether it can match, is
 * redundant, the conflicts it takes part in, the empty aliases it uses and whether its schedule ever fires
 * (what a rule write answers as warnings).
 */
export function analyseRules(config: FirewallConfig, options: { only?: string } = {}): RuleAnalysis {
  const scheduled = new Set(config.rules.filter((r) => r.data.schedule_id).map((r) => r.id));
  const model = buildModel(config, scheduled);
  const schedules = new Map(config.schedules.map((s) => [s.id, s.data]));
  const interfaces = new InterfaceUniverse(model.rules.map((r) => r.rule.interface).filter((n): n is string => n !== null));
  let inOrder = firstMatchOrder(model.rules);
  if (options.only !== undefined) {
    // One rule's findings (a write's warnings) only involve rules that can meet it: sort the others out from
    // their plain fields before building any boxes.
    const subject = inOrder.find((rule) => rule.id === options.only);
    inOrder = subject ? inOrder.filter((rule) => rule === subject || mayMeet(subject, rule)) : [];
  }
  const ordered: Judged[] = inOrder.map((compiled, position) => {
    const schedule = compiled.rule.schedule_id ? schedules.get(compiled.rule.schedule_id) : undefined;
    const always = !schedule || !schedule.enabled;
    const covering = always ? ruleBoxes(compiled, model, interfaces, 'covering') : [];
    return { compiled, position, judged: ruleBoxes(compiled, model, interfaces, 'judged'), covering, breadth: breadth(covering) };
  });
  const onlyPosition = options.only === undefined ? undefined : ordered.findIndex((r) => r.compiled.id === options.only);
  const neighbours = onlyPosition === -1 ? ordered.map(() => []) : overlapLists(ordered, interfaces, onlyPosition);
  const empties = emptyAliases(model);
  const result: RuleAnalysis = { never_matches: [], redundant: [], conflicts: [], empty_aliases: empties.aliases, schedules_never_fire: silentSchedules(config), not_analysed: [] };
  const wanted = (id: string) => options.only === undefined || options.only === id;

  for (const skipped of model.skipped) {
    if (skipped.reason !== 'disabled' && wanted(skipped.id)) {
      result.never_matches.push({ rule_id: skipped.id, reason: 'address_family', detail: `never matches: ${skipped.reason}` });
    }
  }
  result.never_matches.push(...empties.never.filter((n) => wanted(n.rule_id)));
  const neverIds = new Set(result.never_matches.map((n) => n.rule_id));

  for (const subject of ordered) {
    const id = subject.compiled.id;
    const isSubject = wanted(id);
    if (!isSubject && options.only !== undefined) continue;
    if (neverIds.has(id) || subject.judged.length === 0) continue;
    const earlier: Judged[] = [];
    const later: Judged[] = [];
    for (const position of neighbours[subject.position]) (position < subject.position ? earlier : later).push(ordered[position]);
    const shadow = shadowFinding(subject, earlier);
    if (shadow.unjudged) {
      result.not_analysed.push({ rule_id: id, detail: `its match splits into more than ${REGION_LIMIT} pieces against the rules before it` });
      continue;
    }
    if (shadow.finding) {
      result.never_matches.push(shadow.finding);
      continue;
    }
    const redundant = redundancyFinding(subject, shadow.remaining, later);
    if (redundant) result.redundant.push(redundant);
    // Each pair once: from its first rule, or (with `only`) from the rule asked about, either side.
    const partners = options.only === undefined ? later : [...earlier, ...later];
    for (const other of partners) {
      if (neverIds.has(other.compiled.id)) continue;
      const [first, second] = other.position < subject.position ? [other, subject] : [subject, other];
      const conflict = conflictBetween(first, second);
      if (conflict) result.conflicts.push(conflict);
    }
  }
  if (options.only !== undefined) {
    const rule = config.rules.find((r) => r.id === options.only);
    result.empty_aliases = result.empty_aliases.filter((a) => a.rule_ids.includes(options.only!));
    result.schedules_never_fire = result.schedules_never_fire.filter((s) => s.schedule_id === rule?.data.schedule_id);
  }
  // Shadowed rules found later in the loop are not partners of earlier conflicts: drop those pairs.
  const never = new Set(result.never_matches.map((n) => n.rule_id));
  result.conflicts = result.conflicts.filter((c) => !never.has(c.rule_id) && !never.has(c.other_rule_id));
  return result;
}
