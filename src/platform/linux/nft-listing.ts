/**
 * Reading `table inet bulwark` back from the kernel: its canonical state (for drift) from the stateless text
 * listing, and per-rule counters from the JSON listing.
 */
import { kernelState } from '../kernel-state.js';
import type { KernelState, RuleCounter } from '../packet-filter.js';

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

interface JsonRule {
  rule?: { table?: string; family?: string; chain?: string; comment?: string; expr?: { counter?: { packets?: number; bytes?: number } }[] };
}

/**
 * `nft -j list table inet bulwark` (or one chain of it) → one counter per rule id (and, `perChain`, per chain): the
 * anonymous counters of the lines whose comment is `rule <id>` (or `nat <id>`) summed, named `rule_<id>` /
 * `nat_<id>` as `CompiledRuleset.counters` maps them.
 */
export function parseNftRuleCounters(json: string, table = 'bulwark', perChain = false): RuleCounter[] {
  const items = (JSON.parse(json) as { nftables?: JsonRule[] }).nftables ?? [];
  const counters = new Map<string, RuleCounter>();
  for (const { rule } of items) {
    if (!rule || rule.table !== table || rule.family !== 'inet') continue;
    const owner = /^(rule|nat) ([A-Za-z0-9_-]{1,64})$/.exec(rule.comment ?? '');
    const counter = rule.expr?.find((e) => e.counter)?.counter;
    if (!owner || !counter) continue;
    const name = `${owner[1]}_${owner[2]}`;
    const chain = perChain ? rule.chain ?? '' : undefined;
    const key = chain === undefined ? name : `${name} ${chain}`;
    const sum = counters.get(key) ?? { name, ...(chain === undefined ? {} : { chain }), packets: 0, bytes: 0 };
    sum.packets += Number(counter.packets ?? 0);
    sum.bytes += Number(counter.bytes ?? 0);
    counters.set(key, sum);
  }
  return [...counters.values()];
}
