/**
 * Reading `table inet bulwark` back from the kernel: its canonical state (for drift) from the stateless text
 * listing, and per-rule counters from the JSON listing.
 */
import { kernelState } from '../kernel-state.js';
import type { KernelState, RuleCounter } from '../packet-filter.js';
import type { NftObjectName } from '../../compile/nft-table.js';

/**
 * `nft -s list table inet bulwark` (stateless: no counter values, no handles) → canonical state: one object per
 * set and chain, a set's elements sorted (a multi-line element list joined first), a chain's lines in order.
 */
export function canonicalNftState(listing: string): KernelState {
  const objects = new Map<string, { lines: string[]; size: number }>();
  let current: { name: string; lines: string[]; elements?: string[]; collecting: boolean } | undefined;
  const finish = () => {
    if (!current) return;
    const elements = (current.elements ?? []).sort();
    const lines = current.elements ? [...current.lines, `elements = { ${elements.join(', ')} }`] : current.lines;
    objects.set(current.name, { lines, size: current.elements ? elements.length : current.lines.filter((l) => !/^type .* hook /.test(l)).length });
    current = undefined;
  };
  for (const raw of listing.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const header = /^(set|map|chain|counter|quota|limit|ct helper|flowtable) (\S+) \{$/.exec(line);
    if (header && raw.startsWith('\t') && !raw.startsWith('\t\t')) {
      finish();
      current = { name: `${header[1]} ${header[2]}`, lines: [], collecting: false };
      continue;
    }
    if (!current) continue;
    if (line === '}' && raw.startsWith('\t') && !raw.startsWith('\t\t')) {
      finish();
      continue;
    }
    const elements = /^elements = \{(.*)$/.exec(line);
    if (elements || current.collecting) {
      const body = (elements ? elements[1] : line).trim();
      const closes = body.endsWith('}');
      current.elements ??= [];
      current.elements.push(...body.replace(/\}$/, '').split(',').map((e) => e.trim()).filter(Boolean));
      current.collecting = !closes;
      continue;
    }
    current.lines.push(line);
  }
  finish();
  return kernelState(objects);
}

interface JsonItem {
  rule?: { table?: string; family?: string; comment?: string; expr?: { counter?: { packets?: number; bytes?: number } | string }[] };
  counter?: { table?: string; family?: string; name?: string; packets?: number; bytes?: number };
}

/**
 * `nft -j list table inet bulwark` → one counter per rule id: a filter rule's counter object `rule_<id>` (its lines
 * count into it by name), and for NAT the anonymous counters of the lines whose comment is `nat <id>` summed, named
 * `nat_<id>` — as `CompiledRuleset.counters` maps them. A table loaded before rules had counter objects: the
 * anonymous counters of the lines commented `rule <id>`, summed the same way.
 */
export function parseNftRuleCounters(json: string, table = 'bulwark'): RuleCounter[] {
  const items = (JSON.parse(json) as { nftables?: JsonItem[] }).nftables ?? [];
  const counters = new Map<string, RuleCounter>();
  const add = (name: string, packets: unknown, bytes: unknown) => {
    const sum = counters.get(name) ?? { name, packets: 0, bytes: 0 };
    sum.packets += Number(packets ?? 0);
    sum.bytes += Number(bytes ?? 0);
    counters.set(name, sum);
  };
  for (const { rule, counter } of items) {
    if (counter && counter.table === table && counter.family === 'inet' && /^rule_[A-Za-z0-9_-]{1,64}$/.test(counter.name ?? '')) {
      add(counter.name!, counter.packets, counter.bytes);
    }
    if (!rule || rule.table !== table || rule.family !== 'inet') continue;
    const owner = /^(rule|nat) ([A-Za-z0-9_-]{1,64})$/.exec(rule.comment ?? '');
    // A line counting into an object names it (a string), already read from the object itself.
    const anonymous = rule.expr?.map((e) => e.counter).find((c): c is { packets?: number; bytes?: number } => typeof c === 'object' && c !== null);
    if (owner && anonymous) add(`${owner[1]}_${owner[2]}`, anonymous.packets, anonymous.bytes);
  }
  return [...counters.values()];
}

/** The kinds of object a table holds besides rules, as nft lists them (`ct helper` before a one-word kind). */
const OBJECT_HEADER = /^\t(chain|set|map|flowtable|counter|quota|limit|secmark|synproxy|ct helper|ct timeout|ct expectation) ([A-Za-z_][A-Za-z0-9_.\-/]*) \{$/;

/**
 * A listing of `table inet bulwark` (terse: no elements) → the objects it holds, by kind and name, with a set's or
 * map's declaration lines and whether a chain has a hook. Undefined when a line opens an object this cannot name
 * safely (a kind it does not know, a name outside nft's bare-word grammar): the caller then replaces the table whole
 * rather than leave an object behind.
 */
export function parseNftTableObjects(listing: string, table = 'bulwark'): NftObjectName[] | undefined {
  const objects: NftObjectName[] = [];
  let inTable = false;
  let current: NftObjectName | undefined;
  for (const line of listing.split('\n')) {
    const opened = /^table (\S+) (\S+) \{$/.exec(line);
    if (opened) {
      inTable = opened[1] === 'inet' && opened[2] === table;
      current = undefined;
      continue;
    }
    if (!inTable || !line.startsWith('\t')) continue;
    if (line.startsWith('\t\t')) {
      const item = line.trim();
      if (current?.kind === 'chain' && /^type \S+ hook /.test(item)) current.hooked = true;
      else if (current?.declaration && !item.startsWith('elements = ')) current.declaration.push(item);
      continue;
    }
    if (line === '\t}') {
      current = undefined;
      continue;
    }
    const header = OBJECT_HEADER.exec(line);
    if (!header) return undefined;
    current = { kind: header[1], name: header[2], ...(header[1] === 'set' || header[1] === 'map' ? { declaration: [] } : {}) };
    objects.push(current);
  }
  return objects;
}
