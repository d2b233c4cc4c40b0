import { spawnSync } from 'node:child_process';
import { GeoDatabase } from '../src/areas/geoip/database.js';
import { cidrElements, compileGeoIp, geoIpVerdict, mergeIntervals, nftElements, type GeoIpSet } from '../src/compile/geoip-sets.js';
import { nftGeoIpChains, nftGeoIpJump, nftGeoIpSets } from '../src/compile/geoip-rulesets.js';
import { renderChain, renderSet } from '../src/compile/nft-table.js';
const fmt = (n: number) => n.toLocaleString('en');

/**
 * Geo-IP "block every country but one" (issue 15): the rule set compiled from the shipped country data into
 * the packet filter's interval sets, then loaded into nftables in a network namespace this benchmark creates.
 * Figures: compile time, set elements, load time (`nft -f`, one transaction). Baselines in the same run: an
 * empty table (what any load costs) and the rejected layout — one set per country holding its CIDR blocks
 * (what per-country pf-style tables give) — loaded by the same nft.
 */
const KEPT = 'DE';
const NAMESPACE = `b15bench-${process.pid}`;

const database = new GeoDatabase();
const countries = database.countries();
const rules = countries.filter((c) => c !== KEPT).map((country, i) => ({ id: String(i), country, action: 'block' as const, status: 'active' as const }));

const started = performance.now();
const geo = compileGeoIp(rules, (c) => database.ranges(c));
const compileMs = performance.now() - started;
const mergedElements = geo.sets.reduce((n, set) => n + set.intervals.length, 0);
const rawRanges = rules.reduce((n, r) => n + database.ranges(r.country).v4.length + database.ranges(r.country).v6.length, 0);

const table = (body: string[], jump: string[]) => ['table inet b15bench {', ...body, '\tchain in {', '\t\ttype filter hook prerouting priority 0; policy accept;', ...jump.map((l) => `\t\t${l}`), '\t}', '}', ''].join('\n');
const merged = table([...nftGeoIpSets(geo).flatMap(renderSet), ...nftGeoIpChains(geo).flatMap(renderChain)], nftGeoIpJump(geo));

// Baseline layout: a set per country of CIDR blocks, one rule per set.
const perCountry: string[] = [];
const perCountryRules: string[] = [];
let perCountryElements = 0;
for (const rule of rules) {
  const ranges = database.ranges(rule.country);
  for (const family of [4, 6] as const) {
    const intervals = (family === 4 ? ranges.v4 : ranges.v6).map(([first, last]) => ({ first, last }));
    if (!intervals.length) continue;
    const set: GeoIpSet = { action: 'block', family, countries: [rule.country], intervals: mergeIntervals(intervals) };
    const blocks = cidrElements(set);
    perCountryElements += blocks.length;
    const name = `cc_${rule.country.toLowerCase()}_v${family}`;
    perCountry.push(`\tset ${name} {`, `\t\ttype ${family === 4 ? 'ipv4_addr' : 'ipv6_addr'}`, '\t\tflags interval', `\t\telements = { ${blocks.join(', ')} }`, '\t}');
    perCountryRules.push(`\t\t${family === 4 ? 'ip' : 'ip6'} saddr @${name} drop`);
  }
}
const baseline = ['table inet b15bench {', ...perCountry, '\tchain in {', '\t\ttype filter hook prerouting priority 0; policy accept;', ...perCountryRules, '\t}', '}', ''].join('\n');
const empty = table([], []);

// Membership as the packet simulator asks it.
const lookups = 100_000;
const lookupStart = performance.now();
let blocked = 0;
for (let i = 0; i < lookups; i++) if (geoIpVerdict(geo, `${(i * 2654435761) >>> 24}.${(i >>> 8) & 255}.${i & 255}.1`) === 'block') blocked++;
const lookupUs = ((performance.now() - lookupStart) * 1000) / lookups;

console.log(`countries blocked: ${rules.length} (all but ${KEPT}); dataset ranges: ${fmt(rawRanges)}`);
console.log(`merged sets: ${geo.sets.map((s) => `${s.family === 4 ? 'v4' : 'v6'} ${fmt(s.intervals.length)}`).join(', ')} = ${fmt(mergedElements)} elements, ${fmt(nftElements(geo.sets[0]).length)} written for v4; compiled in ${compileMs.toFixed(0)} ms; script ${(merged.length / 1e6).toFixed(1)} MB`);
console.log(`baseline (a set per country, CIDR blocks): ${perCountry.length / 5} sets, ${fmt(perCountryElements)} elements; script ${(baseline.length / 1e6).toFixed(1)} MB`);
console.log(`membership lookup (simulator): ${lookupUs.toFixed(2)} µs per address (${blocked} of ${lookups} blocked)`);

if (process.getuid?.() !== 0 || spawnSync('nft', ['--version']).status !== 0) {
  console.log('load: skipped (needs root and nft)');
  process.exit(0);
}
spawnSync('ip', ['netns', 'add', NAMESPACE]);
try {
  const load = (text: string) => {
    spawnSync('ip', ['netns', 'exec', NAMESPACE, 'nft', 'flush', 'ruleset']);
    const t0 = performance.now();
    const result = spawnSync('ip', ['netns', 'exec', NAMESPACE, 'nft', '-f', '-'], { input: text, encoding: 'utf8', maxBuffer: 1 << 28 });
    const ms = performance.now() - t0;
    if (result.status !== 0) throw new Error(result.stderr.slice(0, 400));
    return ms;
  };
  const best = (text: string) => Math.min(load(text), load(text), load(text));
  const emptyMs = best(empty);
  const mergedMs = best(merged);
  const baselineMs = best(baseline);
  console.log(`load (nft -f, best of 3): empty table ${emptyMs.toFixed(0)} ms; merged sets ${mergedMs.toFixed(0)} ms; baseline per-country sets ${baselineMs.toFixed(0)} ms (${(baselineMs / mergedMs).toFixed(1)}x the merged load)`);
} finally {
  spawnSync('ip', ['netns', 'del', NAMESPACE]);
}
