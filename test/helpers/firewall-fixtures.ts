/** Building blocks for compiler tests: stored-shape rules, aliases and NAT with defaults filled in. */
import type { AliasData, FirewallConfig, NatData, RuleData, ScheduleData, WithId } from '../../src/compile/firewall-types.js';

let counter = 0;
/** Deterministic ids so golden files are stable. */
export const fixtureId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export type RuleInput = Partial<Omit<RuleData, 'rule_match'>> & { src?: string; dst?: string; sport?: [number, number]; dport?: [number, number] | number; id?: string };

export function rule(input: RuleInput): WithId<RuleData> {
  const { src, dst, sport, dport, id, ...rest } = input;
  const port = (p?: [number, number] | number) => (p === undefined ? null : typeof p === 'number' ? { start: p, end: p } : { start: p[0], end: p[1] });
  return {
    id: id ?? fixtureId(++counter),
    data: {
      priority: 100, action: 'pass', direction: 'in', ip_version: 'both', interface: null, protocol: 'tcp',
      rule_match: { src_addr: src ?? 'any', src_port: port(sport), dst_addr: dst ?? 'any', dst_port: port(dport) },
      src_invert: false, dst_invert: false, log: false, quick: true, label: null, description: null, gateway: null,
      state_options: { tracking: 'keep_state', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null },
      status: 'active', schedule_id: null,
      ...rest,
    },
  };
}

export function alias(name: string, alias_type: AliasData['alias_type'], entries: string[], enabled = true): WithId<AliasData> {
  return { id: `alias-${name}`, data: { name, alias_type, entries, description: null, enabled } };
}

export function schedule(id: string, name: string, time_ranges: string, days_of_week = 'mon,tue,wed,thu,fri,sat,sun', enabled = true): WithId<ScheduleData> {
  return { id, data: { name, description: null, time_ranges, days_of_week, enabled } };
}

export function nat(id: string, input: Partial<NatData> & Pick<NatData, 'nat_type' | 'interface'>): WithId<NatData> {
  return {
    id,
    data: {
      protocol: 'any', src_addr: 'any', src_port: null, dst_addr: 'any', dst_port: null, redirect: { address: 'any', port: null },
      label: null, status: 'active', static_port: false, ...input,
    },
  };
}

export function config(parts: Partial<FirewallConfig> = {}): FirewallConfig {
  return {
    rules: [], aliases: [], schedules: [], nat: [],
    settings: { block_logging: true },
    system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 1 },
    time: { day: 'wed', minute: 10 * 60 },
    ...parts,
  };
}
