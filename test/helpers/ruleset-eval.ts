/**
 * Tiny interpreters for the subset of pf and nftables syntax the compilers emit, so one table of packets can
 * prove that both outputs decide the same way. New connections only (established ones pass by state in both).
 */
import { cidrContains, parseCidr, parseIp, parseRange, type Cidr } from '../../src/compile/addresses.js';
import type { Crossing, HostAddresses } from '../../src/compile/firewall-decision.js';

export interface Packet {
  dir: 'in' | 'out';
  iface: string;
  proto: 'tcp' | 'udp' | 'icmp' | 'icmp6' | 'esp' | 'gre';
  src: string;
  dst: string;
  sport?: number;
  dport?: number;
  /** The destination is an address of the firewall itself. */
  local?: boolean;
  /** The firewall's own addresses, by interface (pf `(em0)`, nftables `fib … . iif type local`). */
  host?: Record<string, string[]>;
}
export type Verdict = 'pass' | 'block';

const familyOf = (address: string) => parseIp(address)!.family;

/** Whether an address is one of the firewall's own addresses on the interface (any interface when omitted). */
function isOwnAddress(p: Packet, address: string, iface?: string): boolean {
  const ip = parseIp(address)!;
  const lists = iface === undefined ? Object.values(p.host ?? {}) : [p.host?.[iface] ?? []];
  return lists.some((list) => list.some((own) => {
    const parsed = parseIp(own)!;
    return parsed.family === ip.family && parsed.value === ip.value;
  }));
}

const isLocalDestination = (p: Packet) => !!p.local || isOwnAddress(p, p.dst);

function inAddress(spec: string, address: string, tables: Map<string, Cidr[]>, p: Packet): boolean {
  const ip = parseIp(address)!;
  if (spec === 'any') return true;
  if (spec === '(self)') return address === p.dst ? isLocalDestination(p) : isOwnAddress(p, address);
  const own = /^\(([A-Za-z0-9_.-]+)\)$/.exec(spec);
  if (own) return isOwnAddress(p, address, own[1]);
  const table = /^<(.+)>$/.exec(spec) ?? /^@(.+)$/.exec(spec);
  if (table) {
    const blocks = tables.get(table[1]);
    if (!blocks) throw new Error(`unknown table/set ${table[1]}`);
    return blocks.some((b) => cidrContains(b, ip.family, ip.value));
  }
  const range = parseRange(spec.replace(/\s/g, ''));
  if (range) return range.family === ip.family && ip.value >= range.first && ip.value <= range.last;
  const cidr = parseCidr(spec);
  if (!cidr) throw new Error(`cannot read address ${spec}`);
  return cidrContains(cidr, ip.family, ip.value);
}

function inPorts(spec: string, port: number | undefined): boolean {
  if (port === undefined) return false;
  const [a, b] = spec.split(/[:-]/).map(Number);
  return port >= a && port <= (b ?? a);
}

/** The same packet as the decision model reads it (compile/firewall-decision.ts, used at schedule edges). */
export function asCrossing(packet: Packet): { crossing: Crossing; host: HostAddresses } {
  const byInterface = new Map(Object.entries(packet.host ?? {}));
  // `local` says the destination is the firewall's without naming the interface that holds it.
  if (packet.local) byInterface.set('(local)', [packet.dst]);
  const protocol = packet.proto === 'icmp6' ? 'icmpv6' : packet.proto;
  return {
    crossing: { direction: packet.dir, iface: packet.iface, protocol, src: packet.src, dst: packet.dst, sport: packet.sport ?? 0, dport: packet.dport ?? 0 },
    host: { loopback: 'lo', byInterface },
  };
}

// ---------- pf ----------

/** Lines as pfctl's lexer reads them: a backslash at the end of a line joins the next one, in comments too. */
export function pfLogicalLines(text: string): string[] {
  return text.replace(/\\\n/g, '').split('\n');
}

export function evaluatePf(text: string, packet: Packet): Verdict {
  const tables = new Map<string, Cidr[]>();
  let verdict: Verdict = 'pass';
  for (const raw of pfLogicalLines(text)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const table = /^table <([^>]+)> persist(?: \{ ?(.*?) ?\})?$/.exec(line);
    if (table) {
      tables.set(table[1], (table[2] ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((s) => parseCidr(s)!));
      continue;
    }
    if (/^(rdr|nat|binat) /.test(line)) continue;
    const rule = parsePfRule(line);
    if (!matchesPf(rule, packet, tables)) continue;
    verdict = rule.action;
    if (rule.quick) return verdict;
  }
  return verdict;
}

interface PfRule {
  action: Verdict;
  dir?: 'in' | 'out';
  quick: boolean;
  on?: string[];
  af?: 4 | 6;
  protos?: string[];
  from: { not: boolean; addr: string; port?: string };
  to: { not: boolean; addr: string; port?: string };
}

function parsePfRule(line: string): PfRule {
  let rest = line.replace(/ label "[^"]*"$/, '');
  const take = (pattern: RegExp) => {
    const match = pattern.exec(rest);
    if (match) rest = rest.slice(match[0].length);
    return match;
  };
  const action = take(/^(pass|block(?: drop| return)?)/)![1].startsWith('pass') ? 'pass' : 'block';
  const dir = take(/^ (in|out)\b/)?.[1] as PfRule['dir'];
  take(/^ log\b/);
  const quick = !!take(/^ quick\b/);
  const onMatch = take(/^ on (\{ [^}]+ \}|\S+)/);
  const on = onMatch ? onMatch[1].replace(/[{}]/g, '').trim().split(/\s+/) : undefined;
  const afMatch = take(/^ (inet6|inet)\b/);
  const af = afMatch ? (afMatch[1] === 'inet' ? 4 : 6) : undefined;
  const protoMatch = take(/^ proto (\{ [^}]+ \}|\S+)/);
  const protos = protoMatch ? protoMatch[1].replace(/[{}]/g, '').trim().split(/\s+/) : undefined;
  const side = (word: string) => {
    const match = take(new RegExp(`^ ${word} (! )?((?:\\S+ - \\S+)|\\S+)(?: port (\\S+))?`));
    return match ? { not: !!match[1], addr: match[2], port: match[3] } : { not: false, addr: 'any' };
  };
  take(/^ all\b/);
  const from = side('from');
  const to = side('to');
  return { action, dir, quick, on, af, protos, from, to };
}

function matchesPf(rule: PfRule, p: Packet, tables: Map<string, Cidr[]>): boolean {
  if (rule.dir && rule.dir !== p.dir) return false;
  if (rule.on && !rule.on.includes(p.iface)) return false;
  if (rule.af && familyOf(p.src) !== rule.af) return false;
  if (rule.protos && !rule.protos.includes(p.proto)) return false;
  for (const [side, address, port] of [[rule.from, p.src, p.sport], [rule.to, p.dst, p.dport]] as const) {
    if (side.addr !== 'any' && !side.addr.startsWith('(') && !side.addr.startsWith('<')) {
      // An explicit address also fixes the address family (pf infers the rule's af from it).
      const spec = side.addr.replace(/\s/g, '');
      const fam = parseRange(spec)?.family ?? parseCidr(spec)?.family;
      if (fam !== familyOf(address)) return false;
    }
    if (inAddress(side.addr, address, tables, p) === side.not) return false;
    if (side.port && !inPorts(side.port, port)) return false;
  }
  return true;
}

// ---------- nftables ----------

function tokenize(line: string): string[] {
  const tokens: string[] = [];
  const pattern = /"[^"]*"|\{[^}]*\}|\S+/g;
  for (const match of line.matchAll(pattern)) tokens.push(match[0]);
  return tokens;
}

/**
 * Where the first matching `rdr` sends an inbound packet (`address port N`), or undefined when none applies.
 * pf translates first match, before filtering.
 */
export function translatePf(text: string, packet: Packet): string | undefined {
  const tables = new Map<string, Cidr[]>();
  for (const raw of pfLogicalLines(text)) {
    const line = raw.trim();
    const table = /^table <([^>]+)> persist(?: \{ ?(.*?) ?\})?$/.exec(line);
    if (table) tables.set(table[1], (table[2] ?? '').split(',').map((s) => s.trim()).filter(Boolean).map((s) => parseCidr(s)!));
    if (!line.startsWith('rdr ')) continue;
    const [match, target] = line.split(' -> ');
    // The match part reads like a quick inbound filter rule.
    if (matchesPf(parsePfRule(match.replace(/^rdr /, 'pass in quick ')), packet, tables)) return target;
  }
  return undefined;
}

/** The same for the nftables `dnat` rules of chain nat_prerouting, written as pf writes a target. */
export function translateNftables(text: string, packet: Packet): string | undefined {
  const { sets, protocolSets, chains } = parseNftables(text);
  for (const line of chains.get('nat_prerouting') ?? []) {
    const result = matchNftLine(tokenize(line), packet, sets, protocolSets);
    if (result && typeof result === 'object' && 'to' in result) {
      const target = /^(?:\[(.+)\]|([^:\[]+|[0-9a-f:]+))(?::(\d+))?$/.exec(result.to);
      if (!target) throw new Error(`cannot read dnat target ${result.to}`);
      const address = target[1] ?? target[2];
      return target[3] ? `${address} port ${target[3]}` : address;
    }
  }
  return undefined;
}

function parseNftables(text: string) {
  const sets = new Map<string, Cidr[]>();
  const protocolSets = new Map<string, string[]>();
  const chains = new Map<string, string[]>();
  let currentSet: string | undefined;
  let currentChain: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const setStart = /^set (\S+) \{$/.exec(line);
    if (setStart) { currentSet = setStart[1]; sets.set(currentSet, []); continue; }
    const chainStart = /^chain (\S+) \{$/.exec(line);
    if (chainStart) { currentChain = chainStart[1]; chains.set(currentChain, []); continue; }
    if (line === '}') { currentSet = undefined; currentChain = undefined; continue; }
    if (currentSet) {
      const elements = /^elements = \{ (.*) \}$/.exec(line);
      const items = elements ? elements[1].split(',').map((s) => s.trim()) : [];
      if (items.length && !parseCidr(items[0])) protocolSets.set(currentSet, items);
      else if (elements) sets.set(currentSet, items.map((s) => parseCidr(s)!));
    } else if (currentChain && !line.startsWith('type ')) chains.get(currentChain)!.push(line);
  }
  return { sets, protocolSets, chains };
}

export function evaluateNftables(text: string, packet: Packet): Verdict {
  const { sets, protocolSets, chains } = parseNftables(text);
  // A verdict in a chain jumped to ends the evaluation; a chain that ends without one returns to its caller.
  const run = (name: string): Verdict | undefined => {
    const chain = chains.get(name);
    if (!chain) throw new Error(`no chain ${name}`);
    for (const line of chain) {
      const verdict = matchNftLine(tokenize(line), packet, sets, protocolSets);
      if (typeof verdict === 'object') {
        if (!('jump' in verdict)) throw new Error(`a translation in a filter chain: ${line}`);
        const decided = run(verdict.jump);
        if (decided) return decided;
        continue;
      }
      if (verdict) return verdict;
    }
    return undefined;
  };
  return run(packet.dir === 'in' ? 'filter_in' : 'filter_out') ?? 'pass';
}

function matchNftLine(tokens: string[], p: Packet, sets: Map<string, Cidr[]>, protocolSets: Map<string, string[]>): Verdict | { to: string } | { jump: string } | undefined {
  const family = familyOf(p.src);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const next = () => tokens[++i];
    const names = (value: string) => value.replace(/[{}"]/g, '').split(',').map((s) => s.trim()).filter(Boolean);
    switch (token) {
      case 'ct':
        if (next() === 'state') return undefined; // "state established,related": never true for a new connection
        next(); next(); // "mark set <value>": no condition
        break;
      case 'dnat':
        if (next() !== 'ip' && tokens[i] !== 'ip6') throw new Error(`cannot read dnat in: ${tokens.join(' ')}`);
        if (next() !== 'to') throw new Error(`cannot read dnat in: ${tokens.join(' ')}`);
        return { to: next() };
      case 'iifname':
      case 'oifname': {
        const wanted = names(next());
        if ((token === 'iifname') !== (p.dir === 'in')) throw new Error(`${token} in the wrong chain`);
        if (!wanted.includes(p.iface)) return undefined;
        break;
      }
      case 'meta': {
        const key = next();
        const value = next();
        if (key === 'nfproto' && value !== (family === 4 ? 'ipv4' : 'ipv6')) return undefined;
        const protocols = value.startsWith('@') ? protocolSets.get(value.slice(1))! : names(value);
        if (key === 'l4proto' && !protocols.map((n) => (n === 'ipv6-icmp' ? 'icmp6' : n)).includes(p.proto)) return undefined;
        break;
      }
      case 'ip':
      case 'ip6': {
        if ((token === 'ip' ? 4 : 6) !== family) return undefined;
        const field = next();
        let value = next();
        let negate = false;
        if (value === '!=') { negate = true; value = next(); }
        const address = field === 'saddr' ? p.src : p.dst;
        const hit = value.startsWith('@') ? sets.get(value.slice(1))!.some((b) => cidrContains(b, family, parseIp(address)!.value)) : inAddress(value, address, sets, p);
        if (hit === negate) return undefined;
        break;
      }
      case 'tcp':
      case 'udp':
      case 'th': {
        if (token !== 'th' && p.proto !== token) return undefined;
        if (token === 'th' && p.proto !== 'tcp' && p.proto !== 'udp') return undefined;
        const field = next();
        if (!inPorts(next(), field === 'sport' ? p.sport : p.dport)) return undefined;
        break;
      }
      case 'fib': {
        // fib daddr type local | fib (saddr|daddr) . (iif|oif) type [!=] local
        const field = next();
        let iface: string | undefined;
        if (tokens[i + 1] === '.') {
          next();
          const hook = next();
          if ((hook === 'iif') !== (p.dir === 'in')) throw new Error(`fib ${hook} in the wrong chain`);
          iface = p.iface;
        }
        if (next() !== 'type') throw new Error(`cannot read fib in: ${tokens.join(' ')}`);
        let negate = false;
        if (tokens[i + 1] === '!=') { negate = true; next(); }
        if (next() !== 'local') throw new Error(`cannot read fib in: ${tokens.join(' ')}`);
        const address = field === 'saddr' ? p.src : p.dst;
        const local = iface === undefined && field === 'daddr' ? isLocalDestination(p) : isOwnAddress(p, address, iface);
        if (local === negate) return undefined;
        break;
      }
      case 'counter':
        if (tokens[i + 1] === 'name') { next(); next(); } // a rule counting into its named counter object
        break;
      case 'jump':
        return { jump: next() };
      case 'log':
        while (tokens[i + 1] === 'prefix' || tokens[i + 1] === 'group') { next(); next(); }
        break;
      case 'comment':
        next();
        break;
      case 'accept':
        return 'pass';
      case 'drop':
      case 'reject':
        return 'block';
      default:
        throw new Error(`cannot read nftables token ${token} in: ${tokens.join(' ')}`);
    }
  }
  throw new Error(`no verdict in: ${tokens.join(' ')}`);
}
