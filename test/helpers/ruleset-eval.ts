/**
 * Tiny interpreters for the subset of pf and nftables syntax the compilers emit, so one table of packets can
 * prove that both outputs decide the same way. New connections only (established ones pass by state in both).
 */
import { cidrContains, parseCidr, parseIp, parseRange, type Cidr } from '../../src/compile/addresses.js';

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
}
export type Verdict = 'pass' | 'block';

const familyOf = (address: string) => parseIp(address)!.family;

function inAddress(spec: string, address: string, tables: Map<string, Cidr[]>, local: boolean): boolean {
  const ip = parseIp(address)!;
  if (spec === 'any') return true;
  if (spec === '(self)') return local;
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
    if (side.addr !== 'any' && side.addr !== '(self)' && !side.addr.startsWith('<')) {
      // An explicit address also fixes the address family (pf infers the rule's af from it).
      const spec = side.addr.replace(/\s/g, '');
      const fam = parseRange(spec)?.family ?? parseCidr(spec)?.family;
      if (fam !== familyOf(address)) return false;
    }
    if (inAddress(side.addr, address, tables, !!p.local) === side.not) return false;
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

export function evaluateNftables(text: string, packet: Packet): Verdict {
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
  const chain = chains.get(packet.dir === 'in' ? 'filter_in' : 'filter_out');
  if (!chain) throw new Error('no filter chain');
  for (const line of chain) {
    const verdict = matchNftLine(tokenize(line), packet, sets, protocolSets);
    if (verdict) return verdict;
  }
  return 'pass';
}

function matchNftLine(tokens: string[], p: Packet, sets: Map<string, Cidr[]>, protocolSets: Map<string, string[]>): Verdict | undefined {
  const family = familyOf(p.src);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    const next = () => tokens[++i];
    const names = (value: string) => value.replace(/[{}"]/g, '').split(',').map((s) => s.trim()).filter(Boolean);
    switch (token) {
      case 'ct':
        next(); next(); // "state established,related": never true for a new connection
        return skipToVerdict();
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
        const hit = value.startsWith('@') ? sets.get(value.slice(1))!.some((b) => cidrContains(b, family, parseIp(address)!.value)) : inAddress(value, address, sets, !!p.local);
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
      case 'fib':
        next(); next(); next(); // daddr type local
        if (!p.local) return undefined;
        break;
      case 'counter':
        next(); next();
        break;
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
  function skipToVerdict(): undefined {
    return undefined;
  }
}
