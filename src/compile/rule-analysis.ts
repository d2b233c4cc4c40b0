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
import { boxContained, boxesIntersect, InterfaceUniverse, regionIntersects, ruleBoxes, subtractRegion, type RuleBox } from './rule-space.js';

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
const REGION_LIMIT = 4096;

interface Judged {
  compiled: FilterRule;
  position: number;
  judged: RuleBox[];
  covering: RuleBox[];
}

const verdictWord = (action: RuleData['action']) => (action === 'pass' ? 'pass' : action);

/**
 * Per rule (in first-match order), bounds of its boxes as numbers, so most pairs are told apart without set
 * arithmetic: direction and protocol masks, interface, family mask, port bounds and per family the address
 * bounds (IPv6 shifted to 53 bits, which keeps order: a pair overlapping exactly overlaps in these bounds too).
 */
const STRIDE = 16;

function boundsOf(rules: readonly Judged[], interfaces: InterfaceUniverse): Float64Array {
  const data = new Float64Array(rules.length * STRIDE).fill(NaN);
  rules.forEach((rule, i) => {
    const row = data.subarray(i * STRIDE, (i + 1) * STRIDE);
    let direction = 0;
    let protocol = 0;
    let families = 0;
    for (const box of rule.judged) {
      direction |= box.direction;
      protocol |= box.protocol;
      families |= box.family === 4 ? 1 : 2;
      const key = (value: bigint) => Number(box.family === 4 ? value : value >> 75n);
      const at = box.family === 4 ? 4 : 8;
      row[at] = key(box.src[0][0]);
      row[at + 1] = key(box.src[box.src.length - 1][1]);
      row[at + 2] = key(box.dst[0][0]);
      row[at + 3] = key(box.dst[box.dst.length - 1][1]);
      row[12] = box.sport[0][0];
      row[13] = box.sport[box.sport.length - 1][1];
      row[14] = box.dport[0][0];
      row[15] = box.dport[box.dport.length - 1][1];
    }
    row[0] = direction;
    row[1] = protocol;
    row[2] = families;
    row[3] = interfaces.index(rule.compiled.rule.interface);
  });
  return data;
}

/** For each rule, the rules whose bounds overlap its own (the only ones set arithmetic needs to look at). */
function overlapLists(rules: readonly Judged[], interfaces: InterfaceUniverse, only?: number): number[][] {
  const d = boundsOf(rules, interfaces);
  const lists: number[][] = rules.map(() => []);
  const mayOverlap = (a: number, b: number) => {
    if ((d[a] & d[b]) === 0 || (d[a + 1] & d[b + 1]) === 0) return false;
    const families = d[a + 2] & d[b + 2];
    if (families === 0) return false;
    if (d[a + 3] !== d[b + 3] && d[a + 3] !== -1 && d[b + 3] !== -1) return false;
    if (d[a + 12] > d[b + 13] || d[b + 12] > d[a + 13] || d[a + 14] > d[b + 15] || d[b + 14] > d[a + 15]) return false;
    if ((families & 1) && d[a + 4] <= d[b + 5] && d[b + 4] <= d[a + 5] && d[a + 6] <= d[b + 7] && d[b + 6] <= d[a + 7]) return true;
    return (families & 2) !== 0 && d[a + 8] <= d[b + 9] && d[b + 8] <= d[a + 9] && d[a + 10] <= d[b + 11] && d[b + 10] <= d[a + 11];
  };
  for (let i = 0; i < rules.length; i++) {
    if (only !== undefined && i !== only) continue;
    for (let j = only !== undefined ? 0 : i + 1; j < rules.length; j++) {
      if (i === j || !mayOverlap(i * STRIDE, j * STRIDE)) continue;
      lists[i].push(j);
      if (only === undefined) lists[j].push(i);
    }
  }
  for (const list of lists) list.sort((a, b) => a - b);
  return lists;
}

function shadowFinding(subject: Judged, earlier: readonly Judged[]): { remaining?: RuleBox[]; finding?: NeverMatches; unjudged?: boolean } {
  let region: RuleBox[] = subject.judged;
  const by: string[] = [];
  for (const rule of earlier) {
    if (!rule.covering.length || !regionIntersects(region, rule.covering)) continue;
    by.push(rule.compiled.id);
    const next = subtractRegion(region, rule.covering, REGION_LIMIT);
    if (!next) return { unjudged: true };
    region = next;
    if (region.length === 0) {
      const decided = by.length === 1 ? `rule ${by[0]} is evaluated first and decides every packet it matches` : `rules ${by.join(', ')} are evaluated first and decide every packet it matches`;
      return { finding: { rule_id: subject.compiled.id, reason: 'shadowed', shadowed_by: by, detail: `never matches: ${decided}` } };
    }
  }
  return { remaining: region };
}

/** Whether what reaches `subject` (region) is decided the same without it, by later rules or the default (pass). */
function redundancyFinding(subject: Judged, region: RuleBox[], later: readonly Judged[]): Redundant | undefined {
  const action = subject.compiled.rule.action;
  const by: string[] = [];
  for (const rule of later) {
    if (!regionIntersects(region, rule.judged)) continue;
    if (rule.compiled.rule.action !== action) return undefined;
    // A later rule that is not always there (scheduled) or whose match is not fully known covers only part.
    if (!rule.covering.length) continue;
    by.push(rule.compiled.id);
    const next = subtractRegion(region, rule.covering, REGION_LIMIT);
    if (!next) return undefined;
    region = next;
    if (region.length === 0) break;
  }
  if (region.length > 0 && action !== 'pass') return undefined;
  const rest = region.length > 0 ? (by.length ? ' and the default policy (pass)' : 'the default policy (pass)') : '';
  const rules = by.length ? `rule${by.length > 1 ? 's' : ''} ${by.join(', ')}` : '';
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
  const ordered: Judged[] = firstMatchOrder(model.rules).map((compiled, position) => {
    const schedule = compiled.rule.schedule_id ? schedules.get(compiled.rule.schedule_id) : undefined;
    const always = !schedule || !schedule.enabled;
    return {
      compiled, position,
      judged: ruleBoxes(compiled, model, interfaces, 'judged'),
      covering: always ? ruleBoxes(compiled, model, interfaces, 'covering') : [],
    };
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
    const redundant = redundancyFinding(subject, shadow.remaining!, later);
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
