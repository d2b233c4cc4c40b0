/**
 * Configuration → `table inet bulwark` as sets and chains (nft-table.ts), and the script that replaces it in
 * one transaction (pure). Only that table is touched. User rules sit in segment chains (nft-segments.ts) so a
 * small change can be loaded as a small transaction (nft-delta.ts).
 *
 * pf semantics are kept exactly: filter chains hook prerouting (after destination NAT, "in" rules) and
 * postrouting (after source NAT, "out" rules), as pf filters translated packets on the interface they cross;
 * quick rules come first in order, then the other rules last-first, so the first match decides as pf's last
 * match does; the chain policy is the default policy.
 */
import { nftGeoIpChains, nftGeoIpJump, nftGeoIpSets } from './geoip-rulesets.js';
import { formatCidr, formatIp, parseIp, type Cidr, type Family } from './addresses.js';
import type { CompiledRuleset } from './compiled.js';
import { NFT_TABLE } from './compiled.js';
import type { FirewallConfig, NatData, PortRange, Protocol, WithId } from './firewall-types.js';
import { nftText } from '../render/text.js';
import { ctMarkText } from './schedule-edges.js';
import { renderChain, renderFullLoad, tableDigest, type NftSet, type NftTable } from './nft-table.js';
import { segmentBoundary, segmentChains, type RuleLines } from './nft-segments.js';
import { dataText } from '../store/data-text.js';
import { buildModel, CompileError, firstMatchOrder, parseAddress, portText, type AddressMatch, type FilterRule, type FirewallModel, type ResolvedAlias } from './firewall-model.js';

export const NFT_LOOPBACK = 'lo';
/**
 * Names under which the drivers report a rule's (or NAT rule's) counters, as `CompiledRuleset.counters` maps them;
 * a filter rule's is also the name of its counter object in the table.
 */
export const counterName = (id: string) => `rule_${id}`;
export const natCounterName = (id: string) => `nat_${id}`;
/** The comment each rule line carries: the driver sums the anonymous counters of NAT lines of one comment. */
export const ruleComment = (id: string) => `rule ${id}`;
export const natComment = (id: string) => `nat ${id}`;
export const TCP_UDP_SET = 'l4_tcp_udp';
export const aliasSetName = (name: string, family: Family) => `alias_${name}_v${family}`;

const quote = (text: string) => `"${text}"`;
const set = (items: string[]) => (items.length === 1 ? items[0] : `{ ${items.join(', ')} }`);

interface Condition {
  text: string[];
  /** This variant can never match (a non-negated, empty alias set): leave it out. */
  never?: boolean;
}

/** `ip saddr …` for one address of one family; undefined when it places no condition. */
function addressCondition(field: 'saddr' | 'daddr', address: AddressMatch, negate: boolean, family: Family, model: FirewallModel): Condition {
  const prefix = family === 4 ? 'ip' : 'ip6';
  const op = negate ? '!= ' : '';
  switch (address.kind) {
    case 'any':
    case 'interface': // family-independent: interfaceAddressConditions renders it once per line
      return { text: [] };
    case 'alias': {
      const alias = model.aliases.get(address.name)!;
      const blocks = family === 4 ? alias.v4 : alias.v6;
      if (blocks.length === 0) return negate ? { text: [] } : { text: [], never: true };
      return { text: [`${prefix} ${field} ${op}@${aliasSetName(address.name, family)}`] };
    }
    case 'block':
      return { text: [`${prefix} ${field} ${op}${formatCidr(address.cidr)}`] };
    case 'range':
      return { text: [`${prefix} ${field} ${op}${formatIp(family, address.first)}-${formatIp(family, address.last)}`] };
  }
}

/**
 * "An address of the interface the rule names" (pf `(em0)`): the kernel's own addresses of the interface the
 * packet crosses, which the rule's `iifname`/`oifname` fixes. The fib lookup keyed by the interface answers
 * `local` only for an address configured on that very interface, of either family; `iif` before routing
 * (prerouting chains), `oif` after it (postrouting chains).
 */
function interfaceAddressConditions(src: AddressMatch, srcNot: boolean, dst: AddressMatch, dstNot: boolean, hook: 'iif' | 'oif'): string[] {
  const conditions: string[] = [];
  for (const [field, address, not] of [['saddr', src, srcNot], ['daddr', dst, dstNot]] as const) {
    if (address.kind === 'interface') conditions.push(`fib ${field} . ${hook} type ${not ? '!= ' : ''}local`);
  }
  return conditions;
}

/** Protocol and ports. `override` narrows tcp/udp/any to tcp (the TCP-reset half of a block return). */
function protocolCondition(protocol: Protocol, srcPort: PortRange | null, dstPort: PortRange | null, override?: 'tcp', forNat = false): string[] {
  const effective = override ?? protocol;
  const ports = (keyword: string) => [
    ...(srcPort ? [`${keyword} sport ${portText(srcPort, '-')}`] : []),
    ...(dstPort ? [`${keyword} dport ${portText(dstPort, '-')}`] : []),
  ];
  switch (effective) {
    case 'any':
      return [];
    case 'tcp':
    case 'udp':
      return srcPort || dstPort ? ports(effective) : [`meta l4proto ${effective}`];
    case 'tcp/udp':
      // A named set: thousands of anonymous `{ tcp, udp }` sets make loading several times slower. NAT with a
      // port needs the literal form, which nft recognises as a transport-protocol match.
      return [forNat ? 'meta l4proto { tcp, udp }' : `meta l4proto @${TCP_UDP_SET}`, ...ports('th')];
    case 'icmp':
      return ['meta l4proto icmp'];
    case 'icmp6':
      return ['meta l4proto ipv6-icmp'];
    default:
      return [`meta l4proto ${effective}`];
  }
}

/**
 * The address-family variants of a match: one line per family when an alias set is involved (sets are typed),
 * otherwise one line, qualified by `meta nfproto` when only one family can match and no address says so.
 */
function familyVariants(families: Family[], src: AddressMatch, srcNot: boolean, dst: AddressMatch, dstNot: boolean, model: FirewallModel): string[][] {
  const usesAlias = src.kind === 'alias' || dst.kind === 'alias';
  const explicit = [src, dst].some((a) => a.kind === 'block' || a.kind === 'range');
  for (const address of [src, dst]) {
    if (address.kind === 'block' || address.kind === 'range') families = families.filter((f) => f === address.family);
  }
  if (!usesAlias && families.length === 2) return [[]];
  const variants: string[][] = [];
  for (const family of families) {
    const s = addressCondition('saddr', src, srcNot, family, model);
    const d = addressCondition('daddr', dst, dstNot, family, model);
    if (s.never || d.never) continue;
    const qualifier = explicit || s.text.length || d.text.length ? [] : [`meta nfproto ${family === 4 ? 'ipv4' : 'ipv6'}`];
    variants.push([...qualifier, ...s.text, ...d.text]);
  }
  return variants;
}

function filterLines(compiled: FilterRule, chain: 'in' | 'out', model: FirewallModel, logGroup: number): string[] {
  const { rule, id } = compiled;
  const m = rule.rule_match;
  const iface = rule.interface ? [`${chain === 'in' ? 'iifname' : 'oifname'} ${quote(rule.interface)}`] : [];
  // A named counter object per rule, shared by all of its lines: a delta that replaces the lines' chains keeps it
  // and what it counted (an anonymous counter starts from zero with its line). The comment carries the rule id,
  // so kernel listings and messages point back to the rule.
  const counter = `counter name ${quote(counterName(id))}`;
  const comment = `comment ${quote(ruleComment(id))}`;
  const log = compiled.log ? `log prefix ${quote(`bulwark ${rule.action} ${id}: `)} group ${logGroup}` : undefined;
  // Block return answers TCP with a reset and everything else with an ICMP unreachable (as pf does).
  // A scheduled pass rule marks the connections it accepts, so they can be cut when its window closes.
  const verdicts: { override?: 'tcp'; verdict: string }[] =
    rule.action === 'pass' ? [{ verdict: rule.schedule_id ? `ct mark set ${ctMarkText(id)} accept` : 'accept' }]
      : rule.action !== 'blockreturn' ? [{ verdict: 'drop' }]
        : rule.protocol === 'tcp' ? [{ verdict: 'reject with tcp reset' }]
          : rule.protocol === 'tcp/udp' || rule.protocol === 'any'
            ? [{ override: 'tcp', verdict: 'reject with tcp reset' }, { verdict: 'reject with icmpx type port-unreachable' }]
            : [{ verdict: 'reject with icmpx type port-unreachable' }];
  const local = interfaceAddressConditions(compiled.src, rule.src_invert, compiled.dst, rule.dst_invert, chain === 'in' ? 'iif' : 'oif');
  const lines: string[] = [];
  for (const variant of familyVariants(compiled.families, compiled.src, rule.src_invert, compiled.dst, rule.dst_invert, model)) {
    for (const { override, verdict } of verdicts) {
      const proto = protocolCondition(rule.protocol, m.src_port, m.dst_port, override);
      lines.push([...iface, ...variant, ...local, ...proto, counter, ...(log ? [log] : []), verdict, comment].join(' '));
    }
  }
  return lines;
}

/**
 * What a rule's lines depend on besides its own data and chain: its id, the log decision and group, and this:
 * whether each alias it names has addresses of each family (an empty set drops or keeps a family variant).
 */
function aliasShape(compiled: FilterRule, model: FirewallModel): string {
  let shape = '';
  for (const address of [compiled.src, compiled.dst]) {
    if (address.kind !== 'alias') continue;
    const alias = model.aliases.get(address.name)!;
    shape += `${address.name}:${alias.v4.length > 0 ? 4 : ''}${alias.v6.length > 0 ? 6 : ''},`;
  }
  return shape;
}

const aliasOf = (address: AddressMatch, model: FirewallModel) => (address.kind === 'alias' ? model.aliases.get(address.name) : undefined);

interface RuleLinesEntry extends RuleLines {
  log: boolean;
  logGroup: number;
  shape: string;
  /** The resolved aliases the shape was taken from: the same objects (unchanged aliases) have the same shape. */
  srcAlias: ResolvedAlias | undefined;
  dstAlias: ResolvedAlias | undefined;
}

// Keyed by content: the rule's JSON text (the same string each time for a stored object, so its hash is computed
// once), then the chain and everything else its lines depend on. A recompile after a small change renders only
// the rules that changed. Bounded: cleared when it outgrows a few configurations. In front of it, the entry last
// handed out for the same rule object and chain, checked field by field (the aliases by identity first): a stored
// object that did not change is the same object, and that check costs less than building and hashing a key
// (20,000 per compile at 10,000 rules).
const ruleLinesCache = new Map<string, Map<string, string[]>>();
const linesByRule = new WeakMap<object, Partial<Record<'in' | 'out', RuleLinesEntry>>>();
function cachedFilterLines(compiled: FilterRule, chain: 'in' | 'out', model: FirewallModel, logGroup: number): RuleLinesEntry {
  const srcAlias = aliasOf(compiled.src, model);
  const dstAlias = aliasOf(compiled.dst, model);
  let byChain = linesByRule.get(compiled.rule);
  const last = byChain?.[chain];
  const sameContext = last !== undefined && last.id === compiled.id && last.log === compiled.log && last.logGroup === logGroup;
  if (sameContext && last.srcAlias === srcAlias && last.dstAlias === dstAlias) return last;
  const shape = srcAlias || dstAlias ? aliasShape(compiled, model) : '';
  if (sameContext && last.shape === shape) {
    last.srcAlias = srcAlias;
    last.dstAlias = dstAlias;
    return last;
  }
  const text = dataText(compiled.rule);
  let byContext = ruleLinesCache.get(text);
  if (!byContext) {
    if (ruleLinesCache.size > 100_000) ruleLinesCache.clear();
    byContext = new Map();
    ruleLinesCache.set(text, byContext);
  }
  const key = `${chain} ${compiled.id} ${compiled.log} ${logGroup} ${shape}`;
  let lines = byContext.get(key);
  if (!lines) {
    lines = filterLines(compiled, chain, model, logGroup);
    byContext.set(key, lines);
  }
  if (!byChain) linesByRule.set(compiled.rule, (byChain = {}));
  const entry: RuleLinesEntry = { id: compiled.id, lines, boundary: segmentBoundary(compiled.id), log: compiled.log, logGroup, shape, srcAlias, dstAlias };
  byChain[chain] = entry;
  return entry;
}

function natLines(entry: WithId<NatData>, model: FirewallModel): { pre: string[]; post: string[] } {
  const { id, data: nat } = entry;
  const src = parseAddress(nat.src_addr)!;
  const dst = parseAddress(nat.dst_addr)!;
  const redirect = parseIp(nat.redirect.address);
  const families: Family[] = redirect && nat.nat_type !== 'masquerade' ? [redirect.family] : [4, 6];
  const counter = 'counter';
  const comment = `comment ${quote(natComment(id))}`;
  const proto = protocolCondition(nat.protocol, nat.src_port, nat.dst_port, undefined, true);
  const target = (family: Family, address: string, port: PortRange | null) => {
    const text = family === 6 && port ? `[${address}]` : address;
    return `${family === 4 ? 'ip' : 'ip6'} to ${text}${port ? `:${portText(port, '-')}` : ''}`;
  };
  const pre: string[] = [];
  const post: string[] = [];
  const explicitFamilies = families.length === 1 ? [[`meta nfproto ${families[0] === 4 ? 'ipv4' : 'ipv6'}`]] : [[]];
  const variants = (s: AddressMatch, d: AddressMatch) => {
    const found = familyVariants(families, s, false, d, false, model);
    // A single-family translation needs its family stated even when no address names it.
    return families.length === 1 && found.length === 1 && found[0].length === 0 ? explicitFamilies : found;
  };
  // Destination NAT runs before routing (the interface it arrives on), source NAT after it (the one it leaves by).
  const localIn = interfaceAddressConditions(src, false, dst, false, 'iif');
  const localOut = interfaceAddressConditions(src, false, dst, false, 'oif');
  switch (nat.nat_type) {
    case 'dnat':
      for (const v of variants(src, dst)) pre.push([`iifname ${quote(nat.interface)}`, ...v, ...localIn, ...proto, counter, `dnat ${target(families[0], nat.redirect.address, nat.redirect.port)}`, comment].join(' '));
      break;
    case 'snat':
      for (const v of variants(src, dst)) post.push([`oifname ${quote(nat.interface)}`, ...v, ...localOut, ...proto, counter, `snat ${target(families[0], nat.redirect.address, nat.redirect.port)}`, comment].join(' '));
      break;
    case 'masquerade':
      for (const v of variants(src, dst)) post.push([`oifname ${quote(nat.interface)}`, ...v, ...localOut, ...proto, counter, 'masquerade', comment].join(' '));
      break;
    case 'binat': {
      // One-to-one: the inside host leaves as the outside address, and the outside address reaches it.
      const family = families[0];
      const ipWord = family === 4 ? 'ip' : 'ip6';
      const dstCondition = [...addressCondition('daddr', dst, false, family, model).text, ...interfaceAddressConditions(src, false, dst, false, 'oif')];
      // Limited to its protocol, as pf's binat is (tcp/udp: both).
      const binatProto = protocolCondition(nat.protocol, null, null);
      post.push([`oifname ${quote(nat.interface)}`, `${ipWord} saddr ${nat.src_addr}`, ...dstCondition, ...binatProto, counter, `snat ${target(family, nat.redirect.address, null)}`, comment].join(' '));
      pre.push([`iifname ${quote(nat.interface)}`, `${ipWord} daddr ${nat.redirect.address}`, ...binatProto, counter, `dnat ${target(family, nat.src_addr, null)}`, comment].join(' '));
      break;
    }
  }
  if (pre.length + post.length === 0) {
    throw new CompileError(`nat ${id}: its addresses and its translation target are of different address families`);
  }
  return { pre, post };
}

/**
 * The packet filter's own traffic figures (GET /status packets_in/out, bytes_in/out): named counters, so a delta
 * that replaces a hooked chain keeps them (a full load starts them from zero). Every packet a hooked filter chain
 * sees is counted before any verdict, loopback aside: `in` everything arriving (for the box or forwarded), `out`
 * everything leaving.
 */
export const NFT_TRAFFIC_COUNTERS = { in: 'traffic_in', out: 'traffic_out' } as const;

export function nftSystemLines(config: FirewallConfig, chain: 'in' | 'out'): string[] {
  const lines = [
    `${chain === 'in' ? 'iifname' : 'oifname'} != ${quote(NFT_LOOPBACK)} counter name "${NFT_TRAFFIC_COUNTERS[chain]}" comment "system: traffic counter"`,
    'ct state established,related accept comment "system: state handling"',
    `${chain === 'in' ? 'iifname' : 'oifname'} ${quote(NFT_LOOPBACK)} accept comment "system: loopback"`,
  ];
  if (chain === 'in') {
    const { api, apiTls, antiLockoutInterfaces } = config.system;
    const iface = antiLockoutInterfaces.length ? [`iifname ${set(antiLockoutInterfaces.map(quote))}`] : [];
    for (const [listener, comment] of [[api, 'system: anti-lockout'], [apiTls, 'system: anti-lockout (HTTPS)']] as const) {
      if (!listener) continue;
      const ip = parseIp(listener.host);
      const target = listener.host === '0.0.0.0' ? ['meta nfproto ipv4', 'fib daddr type local']
        : listener.host === '::' ? ['fib daddr type local']
          : [`${ip?.family === 6 ? 'ip6' : 'ip'} daddr ${listener.host}`];
      lines.push([...iface, ...target, `tcp dport ${listener.port}`, 'accept', `comment "${comment}"`].join(' '));
    }
    for (const tunnel of config.system.wireguard ?? []) {
      const on = tunnel.listenInterface ? [`iifname ${quote(tunnel.listenInterface)}`] : [];
      lines.push([...on, `udp dport ${tunnel.port}`, 'accept', `comment "system: wireguard ${tunnel.interface}"`].join(' '));
    }
    const cluster = config.system.cluster;
    if (cluster && cluster.vrrpInterfaces.length) {
      // VRRP (IP protocol 112) adverts to 224.0.0.18 (IPv6: ff02::12) between the pair.
      const on = `iifname ${set(cluster.vrrpInterfaces.map(quote))}`;
      lines.push(`${on} ip protocol vrrp ip daddr 224.0.0.18 accept comment "system: VRRP"`);
      lines.push(`${on} meta l4proto vrrp ip6 daddr ff02::12 accept comment "system: VRRP (IPv6)"`);
    }
    if (cluster?.syncInterface) {
      lines.push(`iifname ${quote(cluster.syncInterface)} udp dport ${cluster.syncPort} accept comment "system: conntrackd state sync"`);
    }
    for (const { plugin, alias } of config.system.pluginBlocks ?? []) {
      for (const family of [4, 6] as const) lines.push(`${family === 4 ? 'ip' : 'ip6'} saddr @${aliasSetName(alias, family)} counter drop comment "system: plugin ${plugin} blocklist"`);
    }
  }
  return lines;
}

/**
 * The default policy's exception, after every user rule: a new connection entering a WAN interface that no rule
 * passed is dropped (logged when block logging is on). Replies are passed earlier by the state handling.
 */
export function nftDefaultLines(config: FirewallConfig): string[] {
  const wan = config.system.wanDefaultBlock ?? [];
  if (wan.length === 0) return [];
  const log = config.settings.block_logging ? [`log prefix ${quote('bulwark block wan-default: ')} group ${config.system.nflogGroup}`] : [];
  const on = `iifname ${set(wan.map(quote))}`;
  return [
    // IPv6 needs neighbour and router discovery on the WAN link (untracked, so no state passes them).
    `${on} icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert, nd-redirect } accept comment "system: IPv6 neighbour discovery on WAN"`,
    [on, 'counter', ...log, 'drop', 'comment "system: WAN default block"'].join(' '),
  ];
}

const filterInHeader = (config: FirewallConfig) =>
  `# chain filter_in (prerouting, after destination NAT); default policy: accept${config.system.wanDefaultBlock?.length ? `, except new connections entering ${config.system.wanDefaultBlock.join(', ')} (WAN): drop` : ''}`;

/** The read-only rules of both chains, as GET /rules/system shows them (the WAN default block after the user rules). */
export function nftSystemView(config: FirewallConfig): string[] {
  const defaults = nftDefaultLines(config);
  return [
    filterInHeader(config),
    ...nftSystemLines(config, 'in'),
    ...(defaults.length ? ['# (user rules)', ...defaults] : []),
    '# chain filter_out (postrouting, after source NAT); default policy: accept',
    ...nftSystemLines(config, 'out'),
  ];
}

// Resolved aliases are reused while their content is unchanged (firewall-model.ts), and so are their block lists;
// an alias that changed keeps most of its blocks as the same (parsed once) objects, and so their texts.
const formatted = new WeakMap<readonly Cidr[], string[]>();
const formattedBlock = new WeakMap<Cidr, string>();
function formattedBlocks(blocks: readonly Cidr[]): string[] {
  let texts = formatted.get(blocks);
  if (!texts) {
    texts = blocks.map((block) => {
      let text = formattedBlock.get(block);
      if (text === undefined) formattedBlock.set(block, (text = formatCidr(block)));
      return text;
    });
    formatted.set(blocks, texts);
  }
  return texts;
}

// The same set object while its elements are the same array (unchanged aliases resolve to the same blocks), so
// the delta and the digest skip it by identity. Bounded like the other compile caches.
const recentSets = new Map<string, NftSet>();
function aliasSet(name: string, family: Family, elements: string[]): NftSet {
  const known = recentSets.get(name);
  if (known?.elements === elements) return known;
  if (recentSets.size > 50_000) recentSets.clear();
  const set: NftSet = { name, declaration: [`type ${family === 4 ? 'ipv4_addr' : 'ipv6_addr'}`, 'flags interval'], elements };
  recentSets.set(name, set);
  return set;
}

type UserChains = Record<'userIn' | 'userOut', ReturnType<typeof segmentChains>>;

/**
 * The user rules' segments and jumps, remembered for the model's rule list (the same array while no rule changed,
 * firewall-model.ts) with the log group and each named alias's families: an alias edit that leaves every alias
 * with the same families present renders the same lines, so not one of 10,000 rules is looked at again.
 */
const userChainsByRules = new WeakMap<FirewallModel['rules'], { group: number; families: [ResolvedAlias['name'], boolean, boolean][]; chains: UserChains }>();
function userChains(model: FirewallModel, group: number): UserChains {
  const known = userChainsByRules.get(model.rules);
  if (known?.group === group && known.families.every(([name, v4, v6]) => hasFamilies(model.aliases.get(name), v4, v6))) return known.chains;
  const ordered = firstMatchOrder(model.rules);
  const names = new Set<string>();
  const userChain = (chain: 'in' | 'out') => {
    const other = chain === 'in' ? 'out' : 'in';
    const lines: RuleLines[] = [];
    for (const rule of ordered) {
      if (rule.rule.direction === other) continue;
      lines.push(cachedFilterLines(rule, chain, model, group));
      if (rule.src.kind === 'alias') names.add(rule.src.name);
      if (rule.dst.kind === 'alias') names.add(rule.dst.name);
    }
    return segmentChains(chain, lines);
  };
  const chains = { userIn: userChain('in'), userOut: userChain('out') };
  const families = [...names].map((name): [string, boolean, boolean] => {
    const alias = model.aliases.get(name)!;
    return [name, alias.v4.length > 0, alias.v6.length > 0];
  });
  userChainsByRules.set(model.rules, { group, families, chains });
  return chains;
}
const hasFamilies = (alias: ResolvedAlias | undefined, v4: boolean, v6: boolean) =>
  alias !== undefined && alias.v4.length > 0 === v4 && alias.v6.length > 0 === v6;

const baseChain = (type: 'filter' | 'nat', hook: string, priority: string) => `type ${type} hook ${hook} priority ${priority}; policy accept;`;
export const FILTER_IN_BASE = baseChain('filter', 'prerouting', 'dstnat + 10');
export const FILTER_OUT_BASE = baseChain('filter', 'postrouting', 'srcnat + 10');

/** The table as sets and chains: hooked chains hold the system rules and jump to the segments of user rules. */
export function compileNftTable(config: FirewallConfig, model = buildModel(config)): NftTable {
  const group = config.system.nflogGroup;
  const sets: NftSet[] = [{ name: TCP_UDP_SET, declaration: ['type inet_proto'], elements: ['tcp', 'udp'] }];
  for (const alias of model.addressAliases) {
    for (const family of [4, 6] as const) {
      const blocks = family === 4 ? alias.v4 : alias.v6;
      sets.push(aliasSet(aliasSetName(alias.name, family), family, formattedBlocks(blocks)));
    }
  }
  sets.push(...nftGeoIpSets(model.geoip));
  const pre: string[] = [];
  const post: string[] = [];
  for (const nat of model.nat) {
    const lines = natLines(nat, model);
    pre.push(...lines.pre);
    post.push(...lines.post);
  }
  const { userIn, userOut } = userChains(model, group);
  return {
    counters: counterObjects(model.rules),
    sets,
    chains: [
      { name: 'nat_prerouting', base: baseChain('nat', 'prerouting', 'dstnat'), rules: pre },
      { name: 'nat_postrouting', base: baseChain('nat', 'postrouting', 'srcnat'), rules: post },
      ...nftGeoIpChains(model.geoip),
      { name: 'filter_in', base: FILTER_IN_BASE, rules: [...nftSystemLines(config, 'in'), ...nftGeoIpJump(model.geoip), ...userIn.jumps, ...nftDefaultLines(config)] },
      ...userIn.segments,
      { name: 'filter_out', base: FILTER_OUT_BASE, rules: [...nftSystemLines(config, 'out'), ...userOut.jumps] },
      ...userOut.segments,
    ],
  };
}

/** The table's counter objects: the traffic counters, then one per loaded rule (the same array while the rules are). */
const counterObjectsByRules = new WeakMap<FirewallModel['rules'], string[]>();
function counterObjects(rules: FirewallModel['rules']): string[] {
  let names = counterObjectsByRules.get(rules);
  if (!names) counterObjectsByRules.set(rules, (names = [NFT_TRAFFIC_COUNTERS.in, NFT_TRAFFIC_COUNTERS.out, ...rules.map((rule) => counterName(rule.id))]));
  return names;
}

const scheduledByRules = new WeakMap<FirewallModel['rules'], string[]>();
function scheduledIds(rules: FirewallModel['rules']): string[] {
  let ids = scheduledByRules.get(rules);
  if (!ids) scheduledByRules.set(rules, (ids = rules.filter((r) => r.rule.schedule_id).map((r) => r.id)));
  return ids;
}

export function compileNftables(config: FirewallConfig): CompiledRuleset {
  const model = buildModel(config);
  const table = compileNftTable(config, model);
  const trailer = model.skipped.map((skipped) =>
    `# ${skipped.id} not loaded: ${skipped.reason}${skipped.schedule !== undefined ? ` "${nftText(skipped.schedule)}"` : ''}`);
  const natSection = table.chains.filter((c) => c.name.startsWith('nat_')).flatMap(renderChain);
  // The text, digest and counter map cost milliseconds each at 10,000 rules, and a delta load needs none of them.
  let text: string | undefined;
  let digest: string | undefined;
  let counters: Record<string, string> | undefined;
  return {
    dialect: 'nftables',
    get text() {
      return (text ??= renderFullLoad(table, trailer));
    },
    get digest() {
      return (digest ??= tableDigest(table));
    },
    nft: table,
    natLines: [`# NAT chains (table inet ${NFT_TABLE})`, ...natSection.map((l) => l.replace(/^\t/, ''))],
    systemLines: nftSystemView(config),
    ruleCount: model.rules.length,
    scheduledInForce: scheduledIds(model.rules),
    natCount: model.nat.length,
    get counters() {
      if (!counters) {
        counters = {};
        for (const rule of model.rules) counters[counterName(rule.id)] = rule.id;
        for (const nat of model.nat) counters[natCounterName(nat.id)] = nat.id;
      }
      return counters;
    },
  };
}
