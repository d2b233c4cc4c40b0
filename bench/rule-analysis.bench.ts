import { analyseRules } from '../src/compile/rule-analysis.js';
import { compileNftables } from '../src/compile/nftables.js';
import type { AliasData, RuleData, WithId } from '../src/compile/firewall-types.js';
import { benchFirewallConfig, fmt, time as timeMedian } from './harness.js';

/**
 * Rule analysis at scale (target < 2 s for 10,000 rules): never-matching, redundant and conflicting rules,
 * empty aliases and silent schedules over 10,000 rules and 1,000 aliases, with the baseline of compiling the
 * same configuration to nftables in the same run. Also one rule's findings (what a rule write answers).
 */
const RULES = 10_000;
const ALIASES = 1_000;

const time = (fn: () => unknown, runs = 5) => timeMedian(fn, runs);

const aliases: WithId<AliasData>[] = Array.from({ length: ALIASES }, (_, i) => ({
  id: `alias-${i}`,
  data: {
    name: `net${i}`, alias_type: 'network', description: null, enabled: true,
    entries: [`10.${i % 250}.${(i * 7) % 256}.0/24`, `172.${16 + (i % 16)}.${i % 256}.0/25`, `2001:db8:${i.toString(16)}::/48`],
  },
}));
const actions = ['pass', 'pass', 'block', 'blockdrop'] as const;
const protocols = ['tcp', 'udp', 'tcp/udp', 'any'] as const;
/**
 * A site's worth of rules: hosts and networks of many subnets and service ports, quick exceptions, and (every
 * 500th rule) a broad non-quick block of a whole network, as policies end.
 */
function ruleData(i: number): RuleData {
  const broad = i % 500 === 499;
  const protocol = broad ? 'any' : protocols[i % protocols.length];
  const ports = protocol !== 'any';
  return {
    priority: i, action: broad ? 'block' : actions[i % actions.length], direction: (['in', 'out', 'any'] as const)[i % 3],
    ip_version: 'both', interface: i % 5 === 0 ? `eth${i % 4}` : null, protocol,
    rule_match: {
      src_addr: broad ? 'any' : i % 3 === 0 ? `<net${i % ALIASES}>` : i % 3 === 1 ? `10.${i % 250}.${(i >> 3) % 256}.0/24` : `192.168.${i % 256}.${i % 200}`,
      src_port: null,
      dst_addr: broad ? `10.${i % 250}.0.0/16` : i % 4 === 0 ? `<net${(i * 13) % ALIASES}>` : i % 4 === 1 ? `10.${(i * 3) % 250}.${i % 256}.${i % 250}` : 'any',
      dst_port: ports ? { start: 1000 + (i % 5000), end: 1000 + (i % 5000) + (i % 3) } : null,
    },
    src_invert: false, dst_invert: false, log: false, quick: !broad, label: null, description: null, gateway: null,
    state_options: { tracking: 'keep_state', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null },
    status: 'active', schedule_id: null,
  };
}
const config = benchFirewallConfig(RULES, ruleData, aliases);
const { rules } = config;

const baseline = time(() => compileNftables(config));
const analysisMs = time(() => analyseRules(config), 3);
const found = analyseRules(config);
const oneMs = time(() => analyseRules(config, { only: rules[RULES / 2].id }));
console.log(`analyse ${RULES} rules / ${ALIASES} aliases: ${fmt(analysisMs)} ms (target < 2000 ms)   baseline compile to nftables: ${fmt(baseline)} ms`);
console.log(`  found: ${found.never_matches.length} never matching, ${found.redundant.length} redundant, ${found.conflicts.length} conflicts, ${found.not_analysed.length} not analysed`);
console.log(`one rule's findings (a rule write's warnings) among ${RULES}: ${fmt(oneMs)} ms`);
if (analysisMs > 2000) process.exitCode = 1;
