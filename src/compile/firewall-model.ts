/**
 * What both compilers share: aliases flattened into address blocks, rules filtered (disabled, outside their
 * schedule) and classified, addresses parsed. The pf and nftables renderers only differ in syntax.
 */
import { mergeCidrs, parseCidr, parseRange, rangeToCidrs, withBlocksAdded, type Cidr, type Family } from './addresses.js';
import type { AliasData, FirewallConfig, NatData, PortRange, RuleData, ScheduleData, Weekday, WithId } from './firewall-types.js';
import { WEEKDAYS } from './firewall-types.js';
import { interfaceNameProblem } from './pf-names.js';
import { NO_GEOIP, type CompiledGeoIp } from './geoip-sets.js';
import { dataText } from '../store/data-text.js';
import { commonEnds } from './common-ends.js';

export class CompileError extends Error {}

/**
 * The stored spelling of "an address of the interface the rule or NAT rule names": pf `(em0)`, nftables
 * `fib daddr . iif type local` (the kernel's local addresses of the interface the packet crosses).
 */
export const INTERFACE_ADDRESS = 'interface address';

export type AddressMatch =
  | { kind: 'any' }
  | { kind: 'interface' }
  | { kind: 'alias'; name: string }
  | { kind: 'block'; family: Family; text: string; cidr: Cidr }
  | { kind: 'range'; family: Family; text: string; first: bigint; last: bigint };

export interface ResolvedAlias {
  name: string;
  /** Address blocks by family, merged and sorted. */
  v4: readonly Cidr[];
  v6: readonly Cidr[];
}

export interface FilterRule {
  id: string;
  rule: RuleData;
  src: AddressMatch;
  dst: AddressMatch;
  /** Address families the rule can match (ip_version ∩ protocol ∩ explicit addresses). */
  families: Family[];
  /** The rule logs: its own flag, or block logging for block-type rules. */
  log: boolean;
  isBlock: boolean;
}

export interface SkippedRule {
  id: string;
  /** Why, in fixed words of ours; `schedule` is the (user-named) schedule it is outside of, if that is why. */
  reason: string;
  schedule?: string;
}

export interface FirewallModel {
  aliases: Map<string, ResolvedAlias>;
  /** Address aliases in name order (port aliases are not address sets). */
  addressAliases: ResolvedAlias[];
  /** Active rules in evaluation order (the same array as the last compile's while none of it changed). */
  rules: readonly FilterRule[];
  skipped: readonly SkippedRule[];
  nat: WithId<NatData>[];
  /** Geo-IP sets the filter evaluates before user rules (block, then allow); the packet simulator reads them. */
  geoip: CompiledGeoIp;
  config: FirewallConfig;
}

const ALIAS_REF = /^<([A-Za-z0-9_-]{1,31})>$/;

export function parseAddress(text: string): AddressMatch | undefined {
  if (text === 'any') return { kind: 'any' };
  if (text === INTERFACE_ADDRESS) return { kind: 'interface' };
  const alias = ALIAS_REF.exec(text);
  if (alias) return { kind: 'alias', name: alias[1] };
  if (text.includes('-')) {
    const range = parseRange(text);
    return range ? { kind: 'range', family: range.family, text, first: range.first, last: range.last } : undefined;
  }
  const cidr = parseCidr(text);
  return cidr ? { kind: 'block', family: cidr.family, text, cidr } : undefined;
}

export function isBlockAction(action: RuleData['action']): boolean {
  return action !== 'pass';
}

/** Parses `HH:MM-HH:MM` into minutes of the day. */
export function parseTimeRange(text: string): { start: number; end: number } | undefined {
  const match = /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(text.trim());
  if (!match) return undefined;
  const [h1, m1, h2, m2] = match.slice(1).map(Number);
  if (h1 > 23 || h2 > 23 || m1 > 59 || m2 > 59) return undefined;
  return { start: h1 * 60 + m1, end: h2 * 60 + m2 };
}

/**
 * Whether a schedule allows traffic at the given local day and minute. A range ending before it starts runs
 * past midnight into the next day. A disabled schedule does not restrict its rules.
 */
export function scheduleActive(schedule: ScheduleData, day: Weekday, minute: number): boolean {
  if (!schedule.enabled) return true;
  const days = new Set(schedule.days_of_week.split(',').map((d) => d.trim()));
  const yesterday = WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7];
  for (const text of schedule.time_ranges.split(',')) {
    const range = parseTimeRange(text);
    if (!range) continue;
    if (range.start <= range.end) {
      if (days.has(day) && minute >= range.start && minute <= range.end) return true;
    } else {
      if (days.has(day) && minute >= range.start) return true;
      if (days.has(yesterday) && minute <= range.end) return true;
    }
  }
  return false;
}

/** Flattens nested aliases and url tables into merged address blocks per family. */
export function resolveAliases(aliases: readonly WithId<AliasData>[], urlTables: Record<string, string[]> = {}): Map<string, ResolvedAlias> {
  const byName = new Map(aliases.map((a) => [a.data.name, a.data]));
  const resolved = new Map<string, ResolvedAlias>();
  /** The blocks of an alias's entries (or of `only` these of them), nested aliases flattened. */
  const blocksOf = (name: string, path: string[], only?: readonly string[]): Cidr[] => {
    const alias = byName.get(name);
    if (!alias) throw new CompileError(`alias "${name}" does not exist`);
    if (path.includes(name)) throw new CompileError(`alias nesting cycle: ${[...path, name].join(' -> ')}`);
    if (!alias.enabled || alias.alias_type === 'port') return [];
    const entries = only ?? (alias.alias_type === 'url_table' ? (urlTables[name] ?? []) : alias.entries);
    const blocks: Cidr[] = [];
    for (const entry of entries) {
      const nested = ALIAS_REF.exec(entry);
      if (nested) {
        blocks.push(...blocksOf(nested[1], [...path, name]));
        continue;
      }
      // Entries of a typed alias repeat across edits (one added to 10,000): parsed once each. A url table's lines
      // could be millions and would only churn the cache.
      const address = alias.alias_type === 'url_table' ? parseAddress(entry) : parseAddressCached(entry);
      if (address?.kind === 'block') blocks.push(address.cidr);
      else if (address?.kind === 'range') blocks.push(...rangeToCidrs(address.family, address.first, address.last));
      else if (alias.alias_type !== 'url_table') throw new CompileError(`alias "${name}": entry "${entry}" is not an address`);
      // Unparseable lines of a fetched url table are skipped, as the table's source is outside our control.
    }
    return blocks;
  };
  for (const alias of aliases) {
    if (alias.data.alias_type === 'port') continue;
    const plain = alias.data.alias_type !== 'url_table' && alias.data.entries.every((entry) => !entry.startsWith('<'));
    resolved.set(alias.data.name, plain ? resolvePlain(alias.data, (entries) => blocksOf(alias.data.name, [], entries)) : splitFamilies(alias.data.name, mergeCidrs(blocksOf(alias.data.name, []))));
  }
  return resolved;
}

const splitFamilies = (name: string, merged: readonly Cidr[]): ResolvedAlias =>
  ({ name, v4: merged.filter((c) => c.family === 4), v6: merged.filter((c) => c.family === 6) });

/** Plain aliases (typed entries, none nested) as last resolved, one per name however often they are edited. */
const lastPlain = new Map<string, { data: AliasData; text: string; result: ResolvedAlias }>();

/**
 * An alias of plain entries resolves the same for the same text. One that kept its type and only gained entries
 * (an address added to a list of 10,000) is its last result with the new entries' blocks merged in; any other
 * edit resolves it whole.
 */
function resolvePlain(alias: AliasData, blocksOfEntries: (entries: readonly string[]) => Cidr[]): ResolvedAlias {
  const last = lastPlain.get(alias.name);
  if (last?.data === alias) return last.result;
  const text = dataText(alias);
  let result: ResolvedAlias;
  if (last?.text === text) result = last.result;
  else {
    const gained = last && alias.enabled && last.data.enabled && last.data.alias_type === alias.alias_type ? entriesGained(last.data.entries, alias.entries) : undefined;
    if (last && gained) {
      const blocks = blocksOfEntries(gained);
      result = {
        name: alias.name,
        v4: withBlocksAdded(last.result.v4, blocks.filter((c) => c.family === 4)),
        v6: withBlocksAdded(last.result.v6, blocks.filter((c) => c.family === 6)),
      };
    } else result = splitFamilies(alias.name, mergeCidrs(blocksOfEntries(alias.entries)));
  }
  if (lastPlain.size > 50_000 && !last) lastPlain.clear();
  lastPlain.set(alias.name, { data: alias, text, result });
  return result;
}

/**
 * The entries `after` holds beyond `before` when it holds all of before's in their order with one run inserted
 * (at the end, the start or anywhere): the common head and tail are compared, not sets. Undefined otherwise.
 */
function entriesGained(before: readonly string[], after: readonly string[]): readonly string[] | undefined {
  const { head, tail } = commonEnds(before, after);
  return head + tail === before.length ? after.slice(head, after.length - tail) : undefined;
}

function familiesOf(rule: RuleData, src: AddressMatch, dst: AddressMatch): Family[] {
  let families: Family[] = rule.ip_version === 'inet' ? [4] : rule.ip_version === 'inet6' ? [6] : [4, 6];
  if (rule.protocol === 'icmp') families = families.filter((f) => f === 4);
  if (rule.protocol === 'icmp6') families = families.filter((f) => f === 6);
  for (const address of [src, dst]) {
    if (address.kind === 'block' || address.kind === 'range') families = families.filter((f) => f === address.family);
  }
  return families;
}

/** Object ids become parts of identifiers (nftables counter names, pf labels): only this grammar is rendered. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Objects whose id and interface name passed, by data object: stored data is replaced on every change, never
 * changed in place, so after a change only the changed objects are checked again (11,000 per compile otherwise).
 */
const checkedNames = new WeakMap<object, string>();

/**
 * Ids and interface names are rendered bare (identifiers, `on <if>`): anything outside their grammar stops the
 * compile. `rulesChecked`: the rules are a list a compile has already taken (and so checked) as it is.
 */
function checkRenderedNames(config: FirewallConfig, rulesChecked: boolean): void {
  const check = (kind: string, id: string, data: object, interfaceName: string | null) => {
    if (checkedNames.get(data) === id) return;
    if (!SAFE_ID.test(id)) throw new CompileError(`${kind} id ${JSON.stringify(id)} is not 1-64 characters of A-Z, a-z, 0-9, _ and -`);
    const problem = interfaceName === null ? undefined : interfaceNameProblem(interfaceName);
    if (problem) throw new CompileError(`${kind} ${id}: interface ${problem}`);
    checkedNames.set(data, id);
  };
  if (!rulesChecked) for (const { id, data } of config.rules) check('rule', id, data, data.interface);
  for (const { id, data } of config.aliases) check('alias', id, data, null);
  for (const { id, data } of config.schedules) check('schedule', id, data, null);
  for (const { id, data } of config.nat) check('nat', id, data, data.interface);
  for (const name of config.system.antiLockoutInterfaces) {
    const problem = interfaceNameProblem(name);
    if (problem) throw new CompileError(`the LAN-role interfaces (anti-lockout): interface ${problem}`);
  }
  for (const name of config.system.wanDefaultBlock ?? []) {
    const problem = interfaceNameProblem(name);
    if (problem) throw new CompileError(`the WAN-role interfaces (WAN default block): interface ${problem}`);
  }
}

/**
 * What a rule list became in the last compile that took it, and everything besides the list that decided it: a
 * compile given the same list (a snapshot hands out the same array while no rule changed) under the same
 * schedules, block logging, schedule time (only if a rule has a schedule) and with every alias the rules name
 * still an address alias reuses it whole instead of walking every rule again (an alias edit among 10,000 rules).
 */
interface RulePart {
  rules: FilterRule[];
  skipped: SkippedRule[];
  schedules: FirewallConfig['schedules'];
  blockLogging: boolean;
  /** `day minute` of the compile when an active rule has a schedule (its window decides); '' otherwise. */
  time: string;
  scheduledInForce: ReadonlySet<string> | undefined;
  aliasNames: string[];
}
const ruleParts = new WeakMap<FirewallConfig['rules'], RulePart>();

function reusableRulePart(config: FirewallConfig, scheduledInForce: ReadonlySet<string> | undefined, aliases: Map<string, ResolvedAlias>): RulePart | undefined {
  const part = ruleParts.get(config.rules);
  if (!part || part.schedules !== config.schedules || part.blockLogging !== config.settings.block_logging || part.scheduledInForce !== scheduledInForce) return undefined;
  if (part.time !== '' && part.time !== `${config.time.day} ${config.time.minute}`) return undefined;
  return part.aliasNames.every((name) => aliases.has(name)) ? part : undefined;
}

/**
 * `scheduledInForce`, when given, says which scheduled rules are in force instead of their schedules and the
 * config's time (the ruleset as it was before a schedule edge).
 */
export function buildModel(config: FirewallConfig, scheduledInForce?: ReadonlySet<string>): FirewallModel {
  const known = ruleParts.get(config.rules);
  checkRenderedNames(config, known !== undefined);
  const aliases = resolveAliases(config.aliases, config.urlTables);
  const part = reusableRulePart(config, scheduledInForce, aliases) ?? ruleModel(config, scheduledInForce, aliases);
  const nat = config.nat.filter((n) => n.data.status === 'active');
  for (const { id, data } of nat) {
    for (const [field, value] of [['src_addr', data.src_addr], ['dst_addr', data.dst_addr], ['redirect.address', data.redirect.address]] as const) {
      addressOf(value, id, field, aliases);
    }
  }
  const addressAliases = [...aliases.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { aliases, addressAliases, rules: part.rules, skipped: part.skipped, nat, geoip: config.geoip ?? NO_GEOIP, config };
}

/** Every rule of the list filtered and classified (remembered for the list, see RulePart). */
function ruleModel(config: FirewallConfig, scheduledInForce: ReadonlySet<string> | undefined, aliases: Map<string, ResolvedAlias>): RulePart {
  const schedules = new Map(config.schedules.map((s) => [s.id, s.data]));
  const rules: FilterRule[] = [];
  const skipped: SkippedRule[] = [];
  const aliasNames = new Set<string>();
  let timed = false;
  for (const { id, data: rule } of config.rules) {
    if (rule.status !== 'active') {
      skipped.push({ id, reason: 'disabled' });
      continue;
    }
    if (rule.schedule_id) {
      const schedule = schedules.get(rule.schedule_id);
      if (!schedule) throw new CompileError(`rule ${id}: schedule ${rule.schedule_id} does not exist`);
      timed = true;
      const inForce = scheduledInForce ? scheduledInForce.has(id) : scheduleActive(schedule, config.time.day, config.time.minute);
      if (!inForce) {
        skipped.push({ id, reason: 'outside schedule', schedule: schedule.name });
        continue;
      }
    }
    const parsed = ruleAddresses(id, rule, aliases);
    if (parsed.src.kind === 'alias') aliasNames.add(parsed.src.name);
    if (parsed.dst.kind === 'alias') aliasNames.add(parsed.dst.name);
    if (parsed.families.length === 0) {
      skipped.push({ id, reason: 'its address family, protocol and addresses exclude each other' });
      continue;
    }
    const isBlock = isBlockAction(rule.action);
    const log = rule.log || (isBlock && config.settings.block_logging);
    // The same object as in the last compile while nothing it holds changed: later steps can tell by identity.
    if (parsed.filter?.log !== log) parsed.filter = { id, rule, src: parsed.src, dst: parsed.dst, families: parsed.families, isBlock, log };
    rules.push(parsed.filter);
  }
  const part: RulePart = {
    rules, skipped, schedules: config.schedules, blockLogging: config.settings.block_logging, scheduledInForce,
    time: timed ? `${config.time.day} ${config.time.minute}` : '', aliasNames: [...aliasNames],
  };
  ruleParts.set(config.rules, part);
  return part;
}

interface ParsedRule {
  id: string;
  src: AddressMatch;
  dst: AddressMatch;
  families: Family[];
  /** What the last compile made of it (its log decision depends on the settings, so it is compared). */
  filter?: FilterRule;
}

// A rule's parsed addresses and families, by data object (never changed in place); the aliases it names are
// looked up again on every compile, as they may have gone.
const parsedRules = new WeakMap<RuleData, ParsedRule>();
function ruleAddresses(id: string, rule: RuleData, aliases: Map<string, ResolvedAlias>): ParsedRule {
  const known = parsedRules.get(rule);
  if (known?.id === id) {
    // Written out (no loop over field pairs): this runs for every rule on every compile.
    if (known.src.kind === 'alias' && !aliases.has(known.src.name)) addressOf(rule.rule_match.src_addr, id, 'src_addr', aliases);
    if (known.dst.kind === 'alias' && !aliases.has(known.dst.name)) addressOf(rule.rule_match.dst_addr, id, 'dst_addr', aliases);
    return known;
  }
  const src = addressOf(rule.rule_match.src_addr, id, 'src_addr', aliases);
  const dst = addressOf(rule.rule_match.dst_addr, id, 'dst_addr', aliases);
  if ((src.kind === 'interface' || dst.kind === 'interface') && !rule.interface) {
    throw new CompileError(`rule ${id}: "${INTERFACE_ADDRESS}" needs the rule's interface`);
  }
  const parsed: ParsedRule = { id, src, dst, families: familiesOf(rule, src, dst) };
  parsedRules.set(rule, parsed);
  return parsed;
}

// Rules repeat the same few addresses; parsing (BigInt arithmetic) once per distinct text is enough.
const parsedAddresses = new Map<string, AddressMatch | undefined>();
function parseAddressCached(text: string): AddressMatch | undefined {
  let address = parsedAddresses.get(text);
  if (address === undefined && !parsedAddresses.has(text)) {
    if (parsedAddresses.size > 100_000) parsedAddresses.clear();
    address = parseAddress(text);
    parsedAddresses.set(text, address);
  }
  return address;
}

function addressOf(text: string, id: string, field: string, aliases: Map<string, ResolvedAlias>): AddressMatch {
  const address = parseAddressCached(text);
  if (!address) throw new CompileError(`${id}: ${field} "${text}" is not an address`);
  if (address.kind === 'alias' && !aliases.has(address.name)) {
    throw new CompileError(`${id}: ${field} names alias "${address.name}", which does not exist or is not an address alias`);
  }
  return address;
}

export function portText(range: PortRange, separator: ':' | '-'): string {
  return range.start === range.end ? String(range.start) : `${range.start}${separator}${range.end}`;
}

/** Quick rules in order, then the others last-first: a first-match engine then decides as pf's last match does. */
export function firstMatchOrder<T extends { rule: RuleData }>(rules: readonly T[]): T[] {
  return [...rules.filter((r) => r.rule.quick), ...rules.filter((r) => !r.rule.quick).reverse()];
}

/** Local weekday and minute of a timestamp in the process time zone (the appliance's local time). */
export function localTime(milliseconds: number): { day: Weekday; minute: number } {
  const date = new Date(milliseconds);
  return { day: WEEKDAYS[(date.getDay() + 6) % 7], minute: date.getHours() * 60 + date.getMinutes() };
}
