/**
 * Configuration → pf text for the anchor "bulwark" (pure). The main pf.conf hooks the anchor with
 * `nat-anchor "bulwark"`, `rdr-anchor "bulwark"`, `binat-anchor "bulwark"` and, last, `anchor "bulwark"`
 * (binat rules in an anchor run only through a binat-anchor hook); the whole anchor (tables,
 * translation, filter) is replaced by one `pfctl -a bulwark -f -`.
 */
import { sha256Hex } from '../core/crypto.js';
import { pfGeoIpLines } from './geoip-rulesets.js';
import { formatCidr, parseIp } from './addresses.js';
import type { CompiledRuleset } from './compiled.js';
import { PF_ANCHOR } from './compiled.js';
import type { FirewallConfig, NatData, Protocol, RuleData, WithId } from './firewall-types.js';
import { pfText } from '../render/text.js';
import { pfWordProblem } from './pf-names.js';
import { buildModel, CompileError, parseAddress, portText, type AddressMatch, type FilterRule } from './firewall-model.js';

export const PF_LOOPBACK = 'lo0';

function protoText(protocol: Protocol): string | undefined {
  if (protocol === 'any') return undefined;
  return protocol === 'tcp/udp' ? 'proto { tcp udp }' : `proto ${protocol}`;
}

/** `iface` is the interface the rule names: `(em0)` is pf's "addresses of em0", followed as they change. */
function addressText(address: AddressMatch, iface: string | null): string {
  switch (address.kind) {
    case 'any':
      return 'any';
    case 'interface':
      if (!iface) throw new CompileError('"interface address" needs an interface');
      return `(${iface})`;
    case 'alias':
      return `<${address.name}>`;
    case 'block':
      return formatCidr(address.cidr);
    case 'range': {
      const [first, last] = address.text.split('-').map((s) => s.trim());
      return `${first} - ${last}`;
    }
  }
}

/** `from … to …` as pf wants it; `all` when neither side restricts anything. */
function hostsText(iface: string | null, src: AddressMatch, srcNot: boolean, srcPort: RuleData['rule_match']['src_port'], dst: AddressMatch, dstNot: boolean, dstPort: RuleData['rule_match']['dst_port'], always = false): string {
  const side = (word: string, address: AddressMatch, not: boolean, port: typeof srcPort) => {
    if (!always && address.kind === 'any' && !port) return '';
    return `${word} ${not ? '! ' : ''}${addressText(address, iface)}${port ? ` port ${portText(port, ':')}` : ''}`;
  };
  const parts = [side('from', src, srcNot, srcPort), side('to', dst, dstNot, dstPort)].filter(Boolean);
  if (always) return parts.join(' ');
  return parts.length ? parts.join(' ') : 'all';
}

const ACTION_WORDS: Record<RuleData['action'], string> = { pass: 'pass', block: 'block', blockdrop: 'block drop', blockreturn: 'block return' };

function stateText(rule: RuleData): string {
  const options = rule.state_options;
  const words: Record<string, string> = { none: 'no state', keep_state: 'keep state', modulate_state: 'modulate state', synproxy_state: 'synproxy state' };
  const base = words[options.tracking];
  if (options.tracking === 'none') return base;
  const extra: string[] = [];
  if (options.policy) extra.push(options.policy === 'if_bound' ? 'if-bound' : 'floating');
  if (options.adaptive_timeouts) extra.push(`adaptive.start ${options.adaptive_timeouts.start}`, `adaptive.end ${options.adaptive_timeouts.end}`);
  if (options.timeout_tcp !== null) extra.push(`tcp.established ${options.timeout_tcp}`);
  // pf keeps UDP and ICMP states in several phases, each with its own timeout: one value sets them all.
  if (options.timeout_udp !== null) extra.push(`udp.first ${options.timeout_udp}`, `udp.single ${options.timeout_udp}`, `udp.multiple ${options.timeout_udp}`);
  if (options.timeout_icmp !== null) extra.push(`icmp.first ${options.timeout_icmp}`, `icmp.error ${options.timeout_icmp}`);
  return extra.length ? `${base} (${extra.join(', ')})` : base;
}

export function pfRuleLine(compiled: FilterRule): string {
  const { rule } = compiled;
  const tokens: string[] = [ACTION_WORDS[rule.action]];
  if (rule.direction !== 'any') tokens.push(rule.direction);
  if (compiled.log) tokens.push('log');
  if (rule.quick) tokens.push('quick');
  if (rule.interface) tokens.push(`on ${rule.interface}`);
  if (compiled.families.length === 1) tokens.push(compiled.families[0] === 4 ? 'inet' : 'inet6');
  const proto = protoText(rule.protocol);
  if (proto) tokens.push(proto);
  const m = rule.rule_match;
  tokens.push(hostsText(rule.interface, compiled.src, rule.src_invert, m.src_port, compiled.dst, rule.dst_invert, m.dst_port));
  if (rule.action === 'pass') tokens.push(stateText(rule));
  tokens.push(`label "${compiled.id}"`);
  return tokens.join(' ');
}

function commentFor(id: string, rule: { label: string | null; description?: string | null }): string {
  const parts = [`# ${id}`];
  if (rule.label) parts.push(`label: ${pfText(rule.label)}`);
  if (rule.description) parts.push(pfText(rule.description));
  return parts.join(' | ');
}

function natHosts(nat: NatData): string {
  const src = parseAddress(nat.src_addr)!;
  const dst = parseAddress(nat.dst_addr)!;
  return hostsText(nat.interface, src, false, nat.src_port, dst, false, nat.dst_port, true);
}

export function pfNatLines(entry: WithId<NatData>): string[] {
  const nat = entry.data;
  const headFor = (word: string, protocol: Protocol) => {
    const tokens = [`${word} on ${nat.interface}`];
    const redirect = parseIp(nat.redirect.address);
    if (redirect && nat.nat_type !== 'masquerade') tokens.push(redirect.family === 4 ? 'inet' : 'inet6');
    const proto = protoText(protocol);
    if (proto) tokens.push(proto);
    return tokens.join(' ');
  };
  const head = (word: string) => headFor(word, nat.protocol);
  const redirectPort = nat.redirect.port ? ` port ${portText(nat.redirect.port, ':')}` : '';
  switch (nat.nat_type) {
    case 'dnat': {
      const src = parseAddress(nat.src_addr)!;
      const dst = parseAddress(nat.dst_addr)!;
      // rdr names the source only when it restricts something.
      const from = src.kind === 'any' && !nat.src_port ? '' : `from ${addressText(src, nat.interface)}${nat.src_port ? ` port ${portText(nat.src_port, ':')}` : ''} `;
      const to = `to ${addressText(dst, nat.interface)}${nat.dst_port ? ` port ${portText(nat.dst_port, ':')}` : ''}`;
      return [`${head('rdr')} ${from}${to} -> ${nat.redirect.address}${redirectPort}`];
    }
    case 'snat':
      return [`${head('nat')} ${natHosts(nat)} -> ${nat.redirect.address}${redirectPort}${nat.static_port ? ' static-port' : ''}`];
    case 'masquerade':
      return [`${head('nat')} ${natHosts(nat)} -> (${nat.interface})${nat.static_port ? ' static-port' : ''}`];
    case 'binat':
      // pfctl keeps only the first protocol of a `binat … proto { tcp udp }` (parse.y's binatrule): one rule each.
      if (nat.protocol === 'tcp/udp') {
        return (['tcp', 'udp'] as const).map((protocol) => `${headFor('binat', protocol)} ${natHosts(nat)} -> ${nat.redirect.address}`);
      }
      return [`${head('binat')} ${natHosts(nat)} -> ${nat.redirect.address}`];
  }
}

/** The read-only rules: default policy first (pf's last match lets every user rule override it). */
export function pfSystemLines(config: FirewallConfig): string[] {
  const { api, apiTls, antiLockoutInterfaces } = config.system;
  const on = antiLockoutInterfaces.length === 0 ? '' : antiLockoutInterfaces.length === 1 ? ` on ${antiLockoutInterfaces[0]}` : ` on { ${antiLockoutInterfaces.join(' ')} }`;
  const where = antiLockoutInterfaces.length === 0 ? 'from every interface' : `from ${antiLockoutInterfaces.join(', ')}`;
  const antiLockout = (listener: { host: string; port: number }, what: string) => {
    const everyAddress = listener.host === '0.0.0.0' || listener.host === '::';
    const af = listener.host === '0.0.0.0' ? ' inet' : '';
    const target = everyAddress ? '(self)' : listener.host;
    return [
      `# system: anti-lockout: ${what} at ${everyAddress ? `every local address` : listener.host} port ${listener.port} stays reachable ${where}`,
      `pass in quick${on}${af} proto tcp from any to ${target} port ${listener.port} keep state label "bulwark:anti-lockout"`,
    ];
  };
  const wan = config.system.wanDefaultBlock ?? [];
  const onWan = wan.length === 1 ? wan[0] : `{ ${wan.join(' ')} }`;
  return [
    '# system: default policy (pass; first, so any later rule overrides it)',
    'pass all keep state label "bulwark:default-policy"',
    ...(wan.length ? [
      `# system: WAN default block: what enters ${wan.join(', ')} is blocked unless a later rule passes it`,
      `block in${config.settings.block_logging ? ' log' : ''} on ${onWan} all label "bulwark:wan-default-block"`,
      '# system: IPv6 neighbour and router discovery stay possible on WAN',
      `pass in on ${onWan} inet6 proto icmp6 icmp6-type { neighbrsol, neighbradv, routeradv, redir } no state label "bulwark:wan-ndp"`,
    ] : []),
    '# system: state handling: pass rules keep state, packets of known connections skip the ruleset',
    '# system: loopback is never filtered',
    `pass quick on ${PF_LOOPBACK} all no state label "bulwark:loopback"`,
    ...antiLockout(api, 'the API'),
    ...(apiTls ? antiLockout(apiTls, 'the API over HTTPS') : []),
    ...(config.system.wireguard ?? []).flatMap((tunnel) => [
      `# system: WireGuard ${tunnel.interface}: its UDP port ${tunnel.port} is let in ${tunnel.listenInterface ? `on ${tunnel.listenInterface}` : 'on every interface'}`,
      `pass in quick${tunnel.listenInterface ? ` on ${tunnel.listenInterface}` : ''} proto udp from any to (self) port ${tunnel.port} keep state label "bulwark:wireguard-${tunnel.interface}"`,
    ]),
    ...(config.system.cluster?.vrrpInterfaces.length ? [
      '# system: high availability: CARP/VRRP adverts (IP protocol 112) on the virtual addresses\' interfaces',
      `pass quick on { ${config.system.cluster.vrrpInterfaces.join(' ')} } proto carp no state label "bulwark:carp"`,
    ] : []),
    ...(config.system.cluster?.syncInterface ? [
      '# system: high availability: state sync on the sync interface',
      `pass quick on ${config.system.cluster.syncInterface} proto pfsync no state label "bulwark:pfsync"`,
    ] : []),
    ...(config.system.pluginBlocks ?? []).flatMap(({ plugin, alias }) => [
      `# system: plugin ${plugin}: what enters from an address on its blocklist is blocked before any user rule`,
      `block in quick from <${alias}> label "bulwark:plugin-${plugin}"`,
    ]),
  ];
}

export function compilePf(config: FirewallConfig): CompiledRuleset {
  const model = buildModel(config);
  const out: string[] = [
    `# Bulwark ruleset for pf anchor "${PF_ANCHOR}" (generated; do not edit).`,
    `# Loaded atomically with: pfctl -a ${PF_ANCHOR} -f -`,
    `# pf.conf hooks: nat-anchor "${PF_ANCHOR}", rdr-anchor "${PF_ANCHOR}", binat-anchor "${PF_ANCHOR}", anchor "${PF_ANCHOR}" (last)`,
    '',
    '# --- tables (aliases) ---',
  ];
  for (const alias of model.addressAliases) {
    const problem = pfWordProblem(alias.name);
    if (problem) throw new CompileError(`alias ${problem} and cannot name a pf table; rename it`);
    const blocks = [...alias.v4, ...alias.v6].map(formatCidr);
    // An empty list must be written out: pf leaves a table declared without one as it was (stale entries).
    out.push(blocks.length ? `table <${alias.name}> persist { ${blocks.join(', ')} }` : `table <${alias.name}> persist { }`);
  }
  const counters: Record<string, string> = {};
  const natLines: string[] = [`# NAT rules (anchor: ${PF_ANCHOR})`];
  for (const entry of model.nat) {
    natLines.push(commentFor(entry.id, entry.data));
    natLines.push(...pfNatLines(entry));
  }
  out.push('', '# --- translation (NAT) ---', ...natLines.slice(1));
  const systemLines = pfSystemLines(config);
  out.push('', '# --- filter ---', ...systemLines);
  const geoLines = pfGeoIpLines(model.geoip);
  if (geoLines.length) out.push('# geo-IP rules (before user rules)', ...geoLines);
  out.push('# user rules: the last matching rule decides, a matching quick rule decides at once');
  for (const compiled of model.rules) {
    out.push(commentFor(compiled.id, compiled.rule));
    out.push(pfRuleLine(compiled));
    counters[compiled.id] = compiled.id;
  }
  for (const skipped of model.skipped) {
    out.push(`# ${skipped.id} not loaded: ${skipped.reason}${skipped.schedule !== undefined ? ` "${pfText(skipped.schedule)}"` : ''}`);
  }
  const text = `${out.join('\n')}\n`;
  return {
    dialect: 'pf',
    text,
    digest: sha256Hex(text),
    natLines,
    systemLines,
    ruleCount: model.rules.length,
    scheduledInForce: model.rules.filter((r) => r.rule.schedule_id).map((r) => r.id),
    natCount: model.nat.length,
    counters,
  };
}

export { CompileError };
