import { buildModel } from '../src/compile/firewall-model.js';
import type { AliasData, RuleData, WithId } from '../src/compile/firewall-types.js';
import { judgeTransit, type NetFacts } from '../src/areas/assertions/transit.js';
import type { AssertionData } from '../src/areas/assertions/schema.js';
import { benchFirewallConfig, fmt, time } from './harness.js';

/**
 * Judging 1,000 transit assertions over 10,000 rules (what the pre-apply gate and GET /pending do for each
 * candidate): the model built once, then every assertion's packet (in on its interface, out on the egress one)
 * decided by the simulator's steps. Half the assertions name a host, a quarter a CIDR, a quarter an alias (each
 * judged at one address of every part the rules tell apart, at most 16 per side). No target: the figure is reported (issue 33's closing note).
 */
const RULES = 10_000;
const ASSERTIONS = 1_000;
const ALIASES = 200;

const aliases: WithId<AliasData>[] = Array.from({ length: ALIASES }, (_, i) => ({
  id: `alias-${i}`,
  data: { name: `net${i}`, alias_type: 'network', description: null, enabled: true, entries: [`10.${i % 250}.${(i * 7) % 256}.0/24`, `172.${16 + (i % 16)}.${i % 256}.0/25`] },
}));
const protocols = ['tcp', 'udp', 'tcp/udp', 'any'] as const;
function ruleData(i: number): RuleData {
  const protocol = protocols[i % protocols.length];
  return {
    priority: i, action: (['pass', 'pass', 'block', 'blockdrop'] as const)[i % 4], direction: (['in', 'out', 'any'] as const)[i % 3],
    ip_version: 'both', interface: i % 5 === 0 ? `eth${i % 2}` : null, protocol,
    rule_match: {
      src_addr: i % 3 === 0 ? `<net${i % ALIASES}>` : i % 3 === 1 ? `10.${i % 250}.${(i >> 3) % 256}.0/24` : `192.168.${i % 256}.${i % 200}`,
      src_port: null,
      dst_addr: i % 4 === 0 ? `<net${(i * 13) % ALIASES}>` : i % 4 === 1 ? `10.${(i * 3) % 250}.${i % 256}.${i % 250}` : 'any',
      dst_port: protocol !== 'any' ? { start: 1000 + (i % 5000), end: 1000 + (i % 5000) + (i % 3) } : null,
    },
    src_invert: false, dst_invert: false, log: false, quick: i % 7 !== 0, label: null, description: null, gateway: null,
    state_options: { tracking: 'keep_state', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null },
    status: 'active', schedule_id: null,
  };
}
const config = benchFirewallConfig(RULES, ruleData, aliases);
const assertions: AssertionData[] = Array.from({ length: ASSERTIONS }, (_, i) => ({
  name: `a${i}`, description: null, kind: 'transit', enabled: true, expect: 'pass', interface: 'eth0', egress_interface: 'eth1',
  protocol: i % 2 ? 'tcp' : 'udp',
  source: i % 4 === 0 ? `<net${i % ALIASES}>` : i % 4 === 1 ? `192.168.${i % 256}.0/24` : `192.168.${i % 256}.${i % 200}`,
  destination: `10.${(i * 3) % 250}.${i % 256}.${i % 250}`, port: 1000 + (i % 5000),
  probe: null, target: null, query: null, source_interface: null, timeout_ms: 2000, interval_seconds: 60,
}));
const facts: NetFacts = { host: { loopback: 'lo', byInterface: new Map([['eth0', ['203.0.113.2']], ['eth1', ['192.0.2.1']]]) }, interfaces: [], roles: new Map() };

// Cold: the first judgement after a change builds the model and each crossing's candidate rules. CPU time is
// reported beside the wall clock: on a shared machine the latter includes the time spent waiting for a core.
const cpuBefore = process.cpuUsage();
let started = performance.now();
const model = buildModel(config);
const modelMs = performance.now() - started;
started = performance.now();
const held = assertions.filter((a) => judgeTransit(a, model, facts).outcome === 'pass').length;
const coldMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const cpuMs = (cpu.user + cpu.system) / 1000;
// Warm: the same configuration judged again (GET /pending after an assertion changed, the next minute).
const warmCpuBefore = process.cpuUsage();
const warmMs = time(() => assertions.forEach((a) => judgeTransit(a, model, facts)), 3);
const warmCpu = process.cpuUsage(warmCpuBefore);
const warmCpuMs = (warmCpu.user + warmCpu.system) / 1000 / 4; // time() runs it once to warm up, then 3 times
console.log(`${ASSERTIONS} transit assertions over ${RULES} rules, after a change: ${fmt(modelMs + coldMs)} ms (model ${fmt(modelMs)} ms, judging ${fmt(coldMs)} ms, ${fmt((coldMs * 1000) / ASSERTIONS)} µs each); ${held} pass, ${ASSERTIONS - held} block; CPU time ${fmt(cpuMs)} ms`);
console.log(`  judged again, same configuration: ${fmt(warmMs)} ms (CPU time ${fmt(warmCpuMs)} ms per run)`);
