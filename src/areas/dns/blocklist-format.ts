/**
 * Parses downloaded blocklists into domain names. Formats: `hosts` (`0.0.0.0 name`), `domains` (one name a
 * line), `wildcard` (`*.name`), `adblock` (`||name^`), `unbound` (Unbound's own `local-zone: "name." type`
 * lines) and `rpz` (owner names of the zone's records). `#` starts a comment; adblock also uses `!`. A blocked
 * name blocks its subdomains too, so `*.name` and `name` mean the same.
 */
export type BlocklistFormat = 'hosts' | 'domains' | 'wildcard' | 'adblock' | 'unbound' | 'rpz';
export const BLOCKLIST_FORMATS: readonly BlocklistFormat[] = ['hosts', 'domains', 'wildcard', 'adblock', 'unbound', 'rpz'];

/** Unbound local-zone types that refuse an answer (a list may also carry transparent zones: those allow). */
const BLOCKING_ZONE_TYPES = new Set(['always_null', 'always_nxdomain', 'always_nodata', 'always_refuse', 'always_deny', 'refuse', 'deny', 'static', 'redirect', 'inform_deny']);

const SINK_ADDRESSES = new Set(['0.0.0.0', '127.0.0.1', '::', '::1', '0', '255.255.255.255']);
const NOT_DOMAINS = new Set(['localhost', 'local', 'broadcasthost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Normalises one candidate name; null when it is not a blockable domain. */
export function normaliseDomain(candidate: string): string | null {
  let name = candidate.trim().toLowerCase();
  if (name.startsWith('*.')) name = name.slice(2);
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (!name.includes('.') || NOT_DOMAINS.has(name) || name.length > 253) return null;
  if (!name.split('.').every((label) => LABEL.test(label))) return null;
  return name;
}

function candidateOf(line: string, format: BlocklistFormat, origin: string | null): string | null {
  switch (format) {
    case 'hosts': {
      const tokens = line.split(/\s+/);
      return SINK_ADDRESSES.has(tokens[0]) ? (tokens[1] ?? null) : tokens[0];
    }
    case 'domains':
    case 'wildcard':
      return line.split(/\s+/)[0];
    case 'unbound': {
      const zone = /^local-zone:\s*"([^"\s]+)"\s+([a-z_]+)\s*$/.exec(line);
      return zone && BLOCKING_ZONE_TYPES.has(zone[2]) ? zone[1] : null;
    }
    case 'adblock': {
      if (!line.startsWith('||')) return null;
      const rest = line.slice(2);
      const end = rest.search(/[\^/*$]/);
      // Rules with paths or options beyond the domain anchor are not DNS rules.
      if (end >= 0 && rest[end] !== '^') return null;
      if (end >= 0 && rest.slice(end + 1).replace(/^\$important$/, '') !== '') return null;
      return end >= 0 ? rest.slice(0, end) : rest;
    }
    case 'rpz': {
      if (line.startsWith('$') || /^\S+\s+(?:\d+\s+)?(?:IN\s+)?(SOA|NS)\b/i.test(line)) return null;
      const owner = line.split(/\s+/)[0];
      if (!owner || owner === '@') return null;
      if (owner.endsWith('.')) return owner;
      return origin ? `${owner}.${origin}` : owner;
    }
  }
}

/** Unique names in order of first appearance, whitelist entries (and their subdomains) removed. */
export function parseBlocklist(text: string, format: BlocklistFormat, whitelist: readonly string[] = []): string[] {
  const seen = new Set<string>();
  const allowed = whitelist.map((w) => w.toLowerCase().replace(/^\*\./, ''));
  let origin: string | null = null;
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    if (!line || (format === 'adblock' && line.startsWith('!'))) continue;
    if (format === 'rpz') {
      const directive = /^\$ORIGIN\s+(\S+)/i.exec(line);
      if (directive) origin = directive[1].replace(/\.$/, '');
    }
    const candidate = candidateOf(line, format, format === 'rpz' ? origin : null);
    let name = candidate === null ? null : normaliseDomain(candidate);
    // An RPZ owner name sits inside the policy zone: strip that suffix to get the blocked name.
    if (name && format === 'rpz' && origin && name.endsWith(`.${origin}`)) name = normaliseDomain(name.slice(0, -origin.length - 1));
    if (!name || seen.has(name)) continue;
    if (allowed.some((w) => name === w || name!.endsWith(`.${w}`))) continue;
    seen.add(name);
  }
  return [...seen];
}
