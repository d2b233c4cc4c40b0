import { isIP } from 'node:net';
import { parse } from 'yaml';
import { EVENT_TOPICS } from '../../core/events.js';
import { yamlDocument } from '../../render/yaml-document.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, conflict, HttpError, notFound } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { parseCidr } from '../../net/address.js';
import { isCidr } from '../../render/grammar.js';
import { DEFAULT_INSTANCE_ID, Gateway, GatewayHealth, Group, GroupMember, Instance, InstanceMember, Leak, Policy } from './schema.js';
import { applySample, initialHealth, type HealthState } from './health.js';
import { normalisePortField } from './port-fields.js';
import { compileLeaks, compilePolicies, selectGateways, withoutLabel, type GatewayView, type MemberView } from './compile.js';
import { compileLinuxRouting, withoutNftLabel, type LinuxCompileInput } from './compile-nftables.js';
import { MWAN_TABLE, type RoutingCommand } from '../../platform/routing.js';
import { probeFieldProblem, type ProbeKind } from '../../platform/probe-arguments.js';
import { adminAllowList, adminDestinationProblem } from '../../net/admin-allow-list.js';
import { AppliedRouting, type RoutingObject, type RoutingObjects } from './applied-routing.js';
import { allowListOf } from '../../net/special-addresses.js';

interface HealthRow {
  gateway_id: string; state: HealthState['state']; consec_ok: number; consec_fail: number; rtts: string;
  last_rtt_ms: number | null; last_jitter_ms: number | null; last_loss_pct: number | null; last_mos: number | null; last_probe_ts: string | null;
}

/** Next hops a probe is never let reach without the administrator's list: loopback and IPv4 link-local (metadata). */
const NEVER_A_GATEWAY = allowListOf(['127.0.0.0/8', '::1', '169.254.0.0/16', '0.0.0.0/8', '::']);

/** The literal address a tcp, http or dns probe connects to (null for icmp, or a host name: checked when probed). */
function probeHost(data: ConfigData): string | null {
  if (!['tcp', 'http', 'dns'].includes(String(data.monitor_kind))) return null;
  const target = String(data.monitor_target ?? data.next_hop);
  const host = /^https?:\/\//.test(target) ? (URL.canParse(target) ? new URL(target).hostname.replace(/^\[|\]$/g, '') : '') : target;
  return isIP(host) ? host : null;
}

const WINDOWS: Record<string, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };
/** The lists an export carries, and an import must name at least one of. */
const MULTIWAN_DOCUMENT_LISTS = ['instances', 'instance_members', 'gateways', 'groups', 'group_members', 'policies', 'leaks'] as const;
const ANCHORS = { pbr: 'bulwark-pbr', reply: 'bulwark-mwan-reply', leak: 'bulwark-mwan-leak' } as const;

const policyAliases: Record<string, string> = { failover: 'failover', weighted_lb: 'weighted_lb', weighted: 'weighted_lb', adaptive: 'adaptive', load_balance: 'load_balance', 'load-balance': 'load_balance', lb: 'load_balance' };
const stickyAliases: Record<string, string> = { none: 'none', src: 'src', five_tuple: 'five_tuple', 'five-tuple': 'five_tuple', '5tuple': 'five_tuple' };

function checkAddress(value: unknown, field: string): void {
  if (value === undefined || value === null || value === 'any') return;
  if (!isCidr(String(value))) throw badRequest(`body.${field}: "${String(value)}" is not an IP address, CIDR or any`);
}

const policiesOf = (objects: RoutingObjects) => objects.policies.map((o) => ({ ...o.data, id: o.id }));

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Multi-WAN: routing instances, gateways with live health, groups, policy routing, leaks and flows. */
/** The port fields of policies and leaks: pf tokens when stored, any form of common/port-input.ts in a request. */
export const POLICY_PORT_FIELDS = ['src_port', 'dst_port'] as const;
export const LEAK_PORT_FIELDS = ['ports'] as const;

export class MultiWanService {
  readonly instances: CollectionModel;
  readonly instanceMembers: CollectionModel;
  readonly gateways: CollectionModel;
  readonly groups: CollectionModel;
  readonly groupMembers: CollectionModel;
  readonly policies: CollectionModel;
  readonly leaks: CollectionModel;
  /** Gateways whose probe is running (a slow probe never overlaps the next tick's). */
  private readonly probing = new Set<string>();
  /** Set by the first successful apply: from then on writes and state changes re-apply. */
  private appliedOnce = false;
  /** One apply at a time. */
  private applying: Promise<unknown> = Promise.resolve();
  /**
   * The plan the kernel refused last time (as text). A gateway's state change does not retry it unchanged: each
   * retry would load and put back the routing again, cutting traffic for a moment, for the same refusal.
   */
  private refusedPlan: string | undefined;
  /** The plan this process last loaded (as text): a state change that compiles to the same plan loads nothing. */
  private planInForce: string | undefined;
  /** The objects the kernel's routing was last compiled from (a start and a gateway's state change use them). */
  readonly applied: AppliedRouting;
  /** Why the start could not put the applied routing back (for /status); null otherwise. */
  private restoreError: string | null = null;

  constructor(private readonly context: AppContext) {
    const { models } = context;
    const writeAccess = 'multiwan:write';
    // Names a person reads (instances, gateways, groups) are unique regardless of case.
    const name = { field: 'name', caseInsensitive: true } as const;
    this.instances = models.collection({ kind: 'mw_instance', noun: 'routing instance', writeAccess, schema: Instance, unique: [name, 'fib_number'] });
    this.instanceMembers = models.collection({
      kind: 'mw_instance_member', noun: 'instance member', writeAccess, schema: InstanceMember, references: [{ field: 'instance_id', kind: 'mw_instance' }],
    });
    this.gateways = models.collection({
      kind: 'mw_gateway', noun: 'gateway', writeAccess, schema: Gateway, unique: [name],
      references: [{ field: 'instance_id', kind: 'mw_instance' }],
      computed: { schema: GatewayHealth, add: (object) => this.healthView(object.id) },
      validate: (data) => {
        const hop = isCidr(String(data.next_hop)) ? parseCidr(String(data.next_hop)) : null;
        if (!hop || hop.prefix !== undefined) throw badRequest(`body.next_hop: "${String(data.next_hop)}" is not an IP address`);
        if ((hop.family === 6) !== (data.ip_version === 'v6')) throw badRequest('body.next_hop does not match ip_version');
        // Values that reach ping's and dig's argument vectors (and the probe's connections): one grammar each.
        const problem = probeFieldProblem({
          kind: (data.monitor_kind ?? 'icmp') as ProbeKind, target: (data.monitor_target as string | null) ?? null,
          expect: (data.monitor_expect as string | null) ?? null, interface: String(data.interface),
        });
        if (problem) throw badRequest(`body.${problem.field} ${problem.message}`);
        // tcp, http and dns probes connect: a literal special address needs the administrator's allow-list.
        const host = probeHost(data);
        if (host !== null && !allowListOf(this.probeAllowList(data)).check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4')) {
          const refused = adminDestinationProblem(host, this.context.store);
          if (refused) throw badRequest(`body.monitor_target: ${refused}`);
        }
      },
    });
    this.groups = models.collection({ kind: 'mw_group', noun: 'gateway group', writeAccess, schema: Group, unique: [name] });
    this.groupMembers = models.collection({
      kind: 'mw_group_member', noun: 'group member', writeAccess, schema: GroupMember,
      references: [{ field: 'group_id', kind: 'mw_group' }, { field: 'gateway_id', kind: 'mw_gateway' }],
    });
    const target = (kind: string, actionKind: string) => ({
      field: 'target_id', kind, values: (data: ConfigData) => (data.action_kind === actionKind ? [data.target_id] : []),
    });
    this.policies = models.collection({
      kind: 'mw_policy', noun: 'policy', writeAccess, schema: Policy,
      references: [target('mw_instance', 'set_instance'), target('mw_gateway', 'set_gateway'), target('mw_group', 'set_group')],
      validate: (data) => {
        checkAddress(data.src_addr, 'src_addr');
        checkAddress(data.dst_addr, 'dst_addr');
        // Requests are normalised by the routes (port-fields.ts); an import brings stored tokens, checked here.
        for (const field of POLICY_PORT_FIELDS) normalisePortField(data[field], field);
      },
    });
    this.leaks = models.collection({
      kind: 'mw_leak', noun: 'route leak', writeAccess, schema: Leak,
      references: [{ field: 'src_instance_id', kind: 'mw_instance' }, { field: 'dst_instance_id', kind: 'mw_instance' }],
      validate: (data) => {
        checkAddress(data.prefix, 'prefix');
        for (const field of LEAK_PORT_FIELDS) normalisePortField(data[field], field);
      },
    });
    this.applied = new AppliedRouting(context, {
      instances: this.instances, instanceMembers: this.instanceMembers, gateways: this.gateways, groups: this.groups,
      groupMembers: this.groupMembers, policies: this.policies, leaks: this.leaks,
    });
  }

  private get db() {
    return this.context.db;
  }

  // ---- instances -----------------------------------------------------------------------------------

  async createInstance(body: ConfigData): Promise<ConfigObject> {
    const { net_fibs: netFibs } = await this.context.platform.routing.fibs();
    if (Number(body.fib_number) >= netFibs) throw badRequest(`body.fib_number must be below the kernel's ${netFibs} routing tables (see POST /multiwan/enable-fibs)`);
    // Linux tables 253-255 are the kernel's default, main and local tables (FIB 0 already stands for main).
    if (this.context.platform.routing.dialect === 'nftables' && [253, 254, 255].includes(Number(body.fib_number))) {
      throw badRequest('body.fib_number 253, 254 and 255 are the kernel\'s own routing tables (default, main, local) on linux; choose another');
    }
    return this.instances.create({ ...body, status: body.status ?? 'idle' });
  }

  deleteInstance(id: string): void {
    if (id === DEFAULT_INSTANCE_ID) throw conflict('the default routing instance cannot be deleted');
    this.context.store.transaction(() => {
      const instance = this.instances.find(id);
      for (const member of this.instanceMembers.objects().filter((m) => m.data.instance_id === id)) this.context.store.remove('mw_instance_member', member.id);
      this.context.models.assertNotReferenced(instance);
      this.context.store.remove('mw_instance', id);
    });
  }

  members(instanceId: string) {
    this.instances.find(instanceId);
    return this.instanceMembers.objects().filter((m) => m.data.instance_id === instanceId).map((m) => ({ instance_id: instanceId, interface: String(m.data.interface) }));
  }

  /** Pins an interface to an instance's FIB; an interface belongs to one instance at a time. */
  async addMember(instanceId: string, name: string) {
    const instance = this.instances.find(instanceId);
    await this.context.platform.routing.pinInterface(name, Number(instance.data.fib_number));
    this.context.store.transaction(() => {
      for (const member of this.instanceMembers.objects().filter((m) => m.data.interface === name)) this.context.store.remove('mw_instance_member', member.id);
      this.instanceMembers.create({ instance_id: instanceId, interface: name });
    });
    return { instance_id: instanceId, interface: name };
  }

  async removeMember(instanceId: string, name: string): Promise<void> {
    this.instances.find(instanceId);
    const member = this.instanceMembers.objects().find((m) => m.data.instance_id === instanceId && m.data.interface === name);
    if (!member) throw notFound(`interface ${name} is not a member of instance ${instanceId}`);
    await this.context.platform.routing.pinInterface(name, 0);
    this.context.store.remove('mw_instance_member', member.id);
  }

  async fibs() {
    const { net_fibs } = await this.context.platform.routing.fibs();
    return { net_fibs, used: this.instances.objects().map((o) => Number(o.data.fib_number)).sort((a, b) => a - b), simulated: this.context.platform.simulated };
  }

  async enableFibs(fibs: number, reboot: boolean) {
    if ((fibs & (fibs - 1)) !== 0) throw badRequest('body.fibs must be a power of two between 2 and 65536');
    const result = await this.context.platform.routing.enableFibs(fibs, reboot);
    const message = result.already_enabled ? `${result.net_fibs} routing tables already available` : `${result.net_fibs} routing tables enabled${result.reboot_scheduled ? '; reboot scheduled' : ''}`;
    return { message, ...result, simulated: this.context.platform.simulated };
  }

  // ---- gateways and health -------------------------------------------------------------------------

  private healthRow(gatewayId: string): HealthRow | undefined {
    return this.db.prepare('SELECT * FROM multiwan_gateway_health WHERE gateway_id = ?').get(gatewayId) as HealthRow | undefined;
  }

  healthView(gatewayId: string) {
    const row = this.healthRow(gatewayId);
    return {
      state: row?.state ?? 'unknown',
      last_rtt_ms: row?.last_rtt_ms ?? null,
      last_jitter_ms: row?.last_jitter_ms ?? null,
      last_loss_pct: row?.last_loss_pct ?? null,
      last_mos: row?.last_mos ?? null,
      last_probe_ts: row?.last_probe_ts ?? null,
    };
  }

  deleteGateway(id: string): void {
    this.context.store.transaction(() => {
      const gateway = this.gateways.find(id);
      this.context.models.assertNotReferenced(gateway);
      this.context.store.remove('mw_gateway', id);
      this.db.prepare('DELETE FROM multiwan_gateway_health WHERE gateway_id = ?').run(id);
    });
  }

  /**
   * What a tcp, http or dns probe may reach although special: the administrator's outbound allow-list, and the
   * gateway's own next hop (probing the router itself is the normal case) unless it is loopback or IPv4
   * link-local (the cloud metadata range), which no gateway is.
   */
  private probeAllowList(data: ConfigData): string[] {
    const hop = String(data.next_hop);
    return [...adminAllowList(this.context.store), ...(isIP(hop) && !NEVER_A_GATEWAY.check(hop, isIP(hop) === 6 ? 'ipv6' : 'ipv4') ? [hop] : [])];
  }

  /** Runs one probe: the given sample, or a real one through the platform when none is given. */
  async probe(id: string, injected?: { success?: boolean; rtt_ms?: number | null; error?: string | null }): Promise<ConfigObject> {
    const gateway = this.gateways.find(id);
    const data = gateway.data;
    let sample: { success: boolean; rtt_ms: number | null; error: string | null };
    if (injected && injected.success !== undefined) {
      sample = { success: injected.success, rtt_ms: injected.rtt_ms ?? null, error: injected.error ?? null };
    } else {
      const kind = data.monitor_kind as 'icmp' | 'tcp' | 'http' | 'dns';
      sample = await this.context.platform.routing.probe({
        kind, target: String(data.monitor_target ?? data.next_hop), interface: String(data.interface),
        port: (data.monitor_port as number | null) ?? (kind === 'tcp' ? 443 : null), expect: (data.monitor_expect as string | null) ?? null,
        timeout_ms: Number(data.timeout_ms),
        allow_list: this.probeAllowList(data),
      });
    }
    const before = this.appliedOnce ? this.groupSelections() : undefined;
    if (this.recordSample(gateway, sample) && before) await this.followStateChange(id, before);
    return this.gateways.find(id);
  }

  /** Records one sample; answers whether the gateway's state changed. */
  private recordSample(gateway: ConfigObject, sample: { success: boolean; rtt_ms: number | null; error: string | null }): boolean {
    const row = this.healthRow(gateway.id);
    const current: HealthState = row ? { ...row, rtts: JSON.parse(row.rtts) as number[] } : initialHealth();
    const limits = gateway.data as unknown as { consec_fail_down: number; consec_ok_up: number; loss_pct_down: number; loss_pct_up: number };
    const { next, changed } = applySample(current, sample, limits);
    const now = isoTime(this.context.clock.now());
    this.db.transaction(() => {
      this.db.prepare(`INSERT INTO multiwan_gateway_health (gateway_id, state, consec_ok, consec_fail, rtts, last_rtt_ms, last_jitter_ms, last_loss_pct, last_mos, last_probe_ts)
        VALUES (@gateway_id, @state, @consec_ok, @consec_fail, @rtts, @last_rtt_ms, @last_jitter_ms, @last_loss_pct, @last_mos, @last_probe_ts)
        ON CONFLICT (gateway_id) DO UPDATE SET state = excluded.state, consec_ok = excluded.consec_ok, consec_fail = excluded.consec_fail, rtts = excluded.rtts,
          last_rtt_ms = excluded.last_rtt_ms, last_jitter_ms = excluded.last_jitter_ms, last_loss_pct = excluded.last_loss_pct, last_mos = excluded.last_mos, last_probe_ts = excluded.last_probe_ts`)
        .run({ gateway_id: gateway.id, ...next, rtts: JSON.stringify(next.rtts), last_probe_ts: now });
      if (changed) {
        const snapshot = { rtt_ms: next.last_rtt_ms, jitter_ms: next.last_jitter_ms, loss_pct: next.last_loss_pct, mos: next.last_mos, consec_fail: next.consec_fail, consec_ok: next.consec_ok };
        this.db.prepare('INSERT INTO multiwan_gateway_events (gateway_id, ts, from_state, to_state, reason, probe_snapshot_json) VALUES (?, ?, ?, ?, ?, ?)')
          .run(gateway.id, now, current.state, next.state, sample.error, JSON.stringify(snapshot));
      }
      // One SLA bucket per minute.
      const bucket = isoTime(Math.floor(this.context.clock.now() / 60_000) * 60_000);
      const existing = this.db.prepare('SELECT rtts FROM multiwan_sla_samples WHERE gateway_id = ? AND bucket_ts = ?').get(gateway.id, bucket) as { rtts: string } | undefined;
      const rtts = existing ? (JSON.parse(existing.rtts) as number[]) : [];
      if (sample.success && sample.rtt_ms !== null) rtts.push(sample.rtt_ms);
      this.db.prepare(`INSERT INTO multiwan_sla_samples (gateway_id, bucket_ts, samples, rtts, jitter_sum, failures, mos_sum, mos_count, up_samples, interval_ms)
        VALUES (@g, @b, 1, @rtts, @jitter, @fail, @mos, @mosCount, @up, @interval)
        ON CONFLICT (gateway_id, bucket_ts) DO UPDATE SET samples = samples + 1, rtts = @rtts, jitter_sum = jitter_sum + @jitter, failures = failures + @fail,
          mos_sum = mos_sum + @mos, mos_count = mos_count + @mosCount, up_samples = up_samples + @up, interval_ms = @interval`)
        .run({
          g: gateway.id, b: bucket, rtts: JSON.stringify(rtts), jitter: next.last_jitter_ms ?? 0, fail: sample.success ? 0 : 1,
          mos: sample.success && next.last_mos !== null ? next.last_mos : 0, mosCount: sample.success && next.last_mos !== null ? 1 : 0,
          up: next.state === 'up' ? 1 : 0, interval: Number(gateway.data.interval_ms),
        });
    })();
    if (changed) {
      this.context.events.emit(EVENT_TOPICS.gatewayState, {
        gateway_id: gateway.id, name: String(gateway.data.name ?? gateway.id), interface: String(gateway.data.interface ?? ''),
        from: current.state, to: next.state, reason: sample.error,
      });
    }
    return changed;
  }

  events(id: string) {
    this.gateways.find(id);
    return this.db.prepare('SELECT * FROM multiwan_gateway_events WHERE gateway_id = ? ORDER BY id DESC LIMIT 100').all(id);
  }

  sla(id: string, window: string) {
    this.gateways.find(id);
    const since = isoTime(this.context.clock.now() - (WINDOWS[window] ?? WINDOWS['24h']));
    const rows = this.db.prepare('SELECT * FROM multiwan_sla_samples WHERE gateway_id = ? AND bucket_ts >= ? ORDER BY bucket_ts').all(id, since) as {
      gateway_id: string; bucket_ts: string; samples: number; rtts: string; jitter_sum: number; failures: number; mos_sum: number; mos_count: number; up_samples: number; interval_ms: number;
    }[];
    return rows.map((row) => {
      const rtts = (JSON.parse(row.rtts) as number[]).sort((a, b) => a - b);
      const secondsPerSample = Math.max(1, row.interval_ms / 1000);
      return {
        gateway_id: row.gateway_id,
        bucket_ts: row.bucket_ts,
        samples: row.samples,
        rtt_avg: rtts.length ? rtts.reduce((a, b) => a + b, 0) / rtts.length : null,
        rtt_p95: percentile(rtts, 95),
        rtt_p99: percentile(rtts, 99),
        jitter_avg: row.samples ? row.jitter_sum / row.samples : null,
        loss_pct: row.samples ? (row.failures / row.samples) * 100 : 0,
        mos_avg: row.mos_count ? row.mos_sum / row.mos_count : null,
        up_seconds: Math.min(60, Math.round(row.up_samples * secondsPerSample)),
      };
    });
  }

  /**
   * Probes every enabled gateway whose interval has elapsed on the service clock (called by the monitor tick),
   * side by side and never twice at once for one gateway. A state change re-applies the routing that was
   * applied, so groups fail over (and back) without anyone calling /apply.
   */
  async monitorTick(): Promise<void> {
    const now = this.context.clock.now();
    const due = this.gateways.objects().filter((gateway) => {
      if (gateway.data.enabled === false || this.probing.has(gateway.id)) return false;
      const last = this.healthRow(gateway.id)?.last_probe_ts;
      return now >= (last ? Date.parse(last) : Date.parse(gateway.created_at)) + Number(gateway.data.interval_ms);
    });
    await Promise.all(due.map(async (gateway) => {
      this.probing.add(gateway.id);
      try {
        await this.probe(gateway.id);
      } catch (error) {
        this.context.log.debug({ gateway: gateway.id, err: (error as Error).message }, 'probe failed');
      } finally {
        this.probing.delete(gateway.id);
      }
    }));
  }

  /**
   * After a gateway changed state: apply again (when routing was applied), then, for groups whose selection
   * moved and that kill states on failover, cut the connections their policies labelled (they re-establish
   * through the gateway now selected).
   */
  private async followStateChange(gatewayId: string, before: Map<string, string>): Promise<void> {
    try {
      if (!(await this.apply({ onlyWhenChanged: true, source: 'applied' }))) return;
    } catch (error) {
      this.context.log.warn({ gateway: gatewayId, err: (error as Error).message }, 'multi-WAN: re-apply after a gateway state change failed');
      return;
    }
    const after = this.groupSelections();
    for (const group of this.groups.objects()) {
      if (before.get(group.id) === after.get(group.id) || group.data.kill_states_on_failover === false) continue;
      for (const policy of this.policies.objects().filter((p) => p.data.action_kind === 'set_group' && p.data.target_id === group.id && p.data.status === 'active')) {
        await this.context.platform.routing.killStates(`pbr:${policy.id}`).catch((error: Error) => this.context.log.warn({ err: error.message }, 'multi-WAN: flows not cut'));
      }
    }
  }

  /** Group id → the gateways it selects now (as text), to see which groups a state change moved. */
  private groupSelections(): Map<string, string> {
    return new Map(this.groups.objects().map((group) => [group.id, JSON.stringify(this.activeGateways(group.id))]));
  }

  // ---- groups ----------------------------------------------------------------------------------------

  private groupFields(body: ConfigData): ConfigData {
    const { id: _id, created_at: _c, updated_at: _u, ...data } = body;
    if (data.policy !== undefined) {
      const policy = policyAliases[String(data.policy).toLowerCase()];
      if (!policy) throw badRequest('body.policy must be one of: failover, weighted_lb, adaptive, load_balance');
      data.policy = policy;
    }
    if (data.sticky !== undefined) {
      const sticky = stickyAliases[String(data.sticky).toLowerCase()];
      if (!sticky) throw badRequest('body.sticky must be one of: none, src, five_tuple');
      data.sticky = sticky;
    }
    return data;
  }

  createGroup(body: ConfigData): ConfigObject {
    return this.groups.create(this.groupFields(body));
  }

  updateGroup(id: string, body: ConfigData): ConfigObject {
    return this.groups.update(id, this.groupFields(body));
  }

  deleteGroup(id: string): void {
    this.context.store.transaction(() => {
      const group = this.groups.find(id);
      for (const member of this.groupMembers.objects().filter((m) => m.data.group_id === id)) this.context.store.remove('mw_group_member', member.id);
      this.context.models.assertNotReferenced(group);
      this.context.store.remove('mw_group', id);
    });
  }

  groupMemberViews(groupId?: string, members: readonly RoutingObject[] = this.groupMembers.objects()): MemberView[] {
    return members
      .filter((m) => groupId === undefined || m.data.group_id === groupId)
      .map((m) => ({ group_id: String(m.data.group_id), gateway_id: String(m.data.gateway_id), tier: Number(m.data.tier), weight: Number(m.data.weight) }))
      .sort((a, b) => a.tier - b.tier || b.weight - a.weight);
  }

  listGroupMembers(groupId: string) {
    this.groups.find(groupId);
    return this.groupMemberViews(groupId);
  }

  /** Adds a gateway to a group, or changes its tier and weight when it is already a member. */
  upsertGroupMember(groupId: string, body: { gateway_id: string; tier: number; weight: number }) {
    this.groups.find(groupId);
    const existing = this.groupMembers.objects().find((m) => m.data.group_id === groupId && m.data.gateway_id === body.gateway_id);
    const data = { group_id: groupId, gateway_id: body.gateway_id, tier: body.tier, weight: body.weight };
    if (existing) this.groupMembers.update(existing.id, data);
    else this.groupMembers.create(data);
    return data;
  }

  removeGroupMember(groupId: string, gatewayId: string): void {
    this.groups.find(groupId);
    const existing = this.groupMembers.objects().find((m) => m.data.group_id === groupId && m.data.gateway_id === gatewayId);
    if (!existing) throw notFound(`gateway ${gatewayId} is not a member of group ${groupId}`);
    this.context.store.remove('mw_group_member', existing.id);
  }

  private gatewayViews(gateways: readonly RoutingObject[] = this.gateways.objects()): Map<string, GatewayView> {
    return new Map(gateways.map((o) => [o.id, { ...o.data, id: o.id, ...this.healthView(o.id) } as GatewayView]));
  }

  activeGateways(groupId: string) {
    const group = this.groups.find(groupId);
    const { selection, gateways } = selectGateways(group.data, this.groupMemberViews(groupId), this.gatewayViews());
    return { selection, gateways };
  }

  // ---- policies --------------------------------------------------------------------------------------

  reorderPolicies(ids: string[]): number {
    const known = new Set(this.policies.objects().map((o) => o.id));
    const unknown = ids.find((id) => !known.has(id));
    if (unknown) throw notFound(`policy ${unknown} not found`);
    if (new Set(ids).size !== ids.length) throw badRequest('body.policy_ids contains duplicates');
    this.context.store.transaction(() => {
      ids.forEach((id, index) => this.policies.update(id, { priority: index + 1 }));
    });
    return ids.length;
  }

  duplicatePolicy(id: string): ConfigObject {
    const source = this.policies.find(id);
    return this.policies.create({ ...source.data, name: `${String(source.data.name)}-copy`.slice(0, 64), priority: Math.min(65535, Number(source.data.priority) + 1), status: 'disabled' });
  }

  togglePolicy(id: string, enabled: boolean): ConfigObject {
    return this.policies.update(id, { status: enabled ? 'active' : 'disabled' });
  }

  /** What the compilers take: `policies` with the other objects (stored ones unless given, e.g. the applied record). */
  private compileInput(policies: (ConfigData & { id: string })[], objects: RoutingObjects = this.applied.stored()) {
    return {
      policies,
      instances: new Map(objects.instances.map((o) => [o.id, o.data])),
      gateways: this.gatewayViews(objects.gateways),
      groups: new Map(objects.groups.map((o) => [o.id, o.data])),
      members: this.groupMemberViews(undefined, objects.groupMembers),
    };
  }

  private linuxInput(policies: (ConfigData & { id: string })[], objects: RoutingObjects = this.applied.stored()): LinuxCompileInput {
    return {
      ...this.compileInput(policies, objects),
      leaks: objects.leaks.map((o) => ({ ...o.data, id: o.id })),
      instanceMembers: objects.instanceMembers.map((m) => ({ instance_id: String(m.data.instance_id), interface: String(m.data.interface) })),
    };
  }

  private storedPolicies() {
    return policiesOf(this.applied.stored());
  }

  /** pf: the three anchors, each loaded with `pfctl -a NAME -f -`. */
  private anchorTexts(policies: (ConfigData & { id: string })[], objects: RoutingObjects = this.applied.stored()): Record<string, string> {
    const compiled = compilePolicies(this.compileInput(policies, objects));
    const instances = new Map(objects.instances.map((o) => [o.id, o.data]));
    const leaks = compileLeaks(objects.leaks.map((o) => ({ ...o.data, id: o.id })), instances);
    const text = (lines: string[]) => lines.join('\n') + (lines.length ? '\n' : '');
    return { [ANCHORS.pbr]: text(compiled.pbr), [ANCHORS.reply]: text(compiled.reply), [ANCHORS.leak]: text(leaks) };
  }

  /** What apply runs for these policies (the stored ones, or a proposal): commands and their input. */
  private async commandsFor(policies: (ConfigData & { id: string })[]): Promise<RoutingCommand[]> {
    const { routing } = this.context.platform;
    if (routing.dialect === 'nftables') return routing.commandsFor(compileLinuxRouting(this.linuxInput(policies)));
    return Object.entries(this.anchorTexts(policies)).map(([anchor, input]) => ({ command: `pfctl -a ${anchor} -f -`, input }));
  }

  /**
   * Compiles the stored policies and leaks and loads them through the platform: pf anchors, or on Linux the
   * multi-WAN nftables table with its rules and gateway routes (atomic, put back when refused). What the kernel
   * took is recorded as the applied routing. `source: 'applied'` compiles the applied record instead (with the
   * gateways' health now): a start, and a gateway's state change, never put in force an edit the kernel refused.
   */
  apply(): Promise<{ message: string; rules: number }>;
  /**
   * With `onlyWhenChanged`: undefined, and nothing done, when the plan is the one the kernel last refused or
   * the one it holds from this process already.
   */
  apply(options: { onlyWhenChanged?: boolean; source?: 'stored' | 'applied' }): Promise<{ message: string; rules: number } | undefined>;
  apply(options: { onlyWhenChanged?: boolean; source?: 'stored' | 'applied' } = {}): Promise<{ message: string; rules: number } | undefined> {
    const run = this.applying.then(() => {
      const objects = (options.source === 'applied' ? this.applied.get()?.objects : undefined) ?? this.applied.stored();
      return this.applyNow(objects, options.onlyWhenChanged === true);
    });
    this.applying = run.catch(() => undefined);
    return run;
  }

  private async applyNow(objects: RoutingObjects, onlyWhenChanged: boolean): Promise<{ message: string; rules: number } | undefined> {
    const { routing } = this.context.platform;
    if (routing.dialect === 'nftables') {
      const plan = compileLinuxRouting(this.linuxInput(policiesOf(objects), objects));
      const planText = JSON.stringify(plan);
      if (onlyWhenChanged && (planText === this.refusedPlan || planText === this.planInForce)) return undefined;
      try {
        await routing.applyPlan(plan);
      } catch (error) {
        if (error instanceof HttpError && error.statusCode === 409) this.refusedPlan = planText;
        throw error;
      }
      this.refusedPlan = undefined;
      this.tookEffect(objects, planText);
      return { message: `multi-WAN table inet ${MWAN_TABLE}, ip rules and gateway tables applied`, rules: plan.ruleLines.length / 2 + plan.rules.length };
    }
    const anchors = this.anchorTexts(policiesOf(objects), objects);
    const anchorText = JSON.stringify(anchors);
    if (onlyWhenChanged && anchorText === this.planInForce) return undefined;
    await routing.loadAnchors(anchors);
    this.tookEffect(objects, anchorText);
    return { message: 'policy-routing anchors reloaded', rules: Object.values(anchors).reduce((n, text) => n + text.split('\n').filter(Boolean).length, 0) };
  }

  private tookEffect(objects: RoutingObjects, plan: string): void {
    this.appliedOnce = true;
    this.planInForce = plan;
    this.restoreError = null;
    this.applied.record(objects);
  }

  /**
   * At start: the routing last applied goes back into the kernel (it forgot it at a reboot). A database from
   * before the applied record was kept (an upgrade) has none: the stored routing is then what ran, when any
   * policy or leak exists. Throws why it could not (the start-up restore reports it in /status).
   */
  async restoreApplied(): Promise<void> {
    const source = this.applied.get() ? 'applied' : this.hasRouting(this.applied.stored()) ? 'stored' : null;
    if (!source) return;
    try {
      await this.apply({ source });
    } catch (error) {
      this.restoreError = (error as Error).message;
      throw error;
    }
  }

  /** Whether the start-up restore has routing to put back (the applied record, or stored routing from before it). */
  hasApplied(): boolean {
    const record = this.applied.get();
    return this.hasRouting(record ? record.objects : this.applied.stored());
  }

  /** The applied routing is in force: this process loaded it (a start, an apply) and nothing failed since. */
  appliedInForce(): boolean {
    return this.appliedOnce && this.restoreError === null;
  }

  private hasRouting(objects: RoutingObjects): boolean {
    return objects.policies.length > 0 || objects.leaks.length > 0;
  }

  /** After a write of policies, leaks, groups or gateways: apply again once applied (a refusal is the write's 409). */
  async reapplyAfterWrite(): Promise<void> {
    if (!this.appliedOnce) return;
    try {
      await this.apply();
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      throw new HttpError(error.statusCode, `the change is stored, but applying it was refused: ${error.message}`);
    }
  }

  /**
   * Dry run: compiles the proposed policies against the current objects and compares with the current compile
   * by meaning (labels stripped), so an unchanged rule is neither new nor removed. Nothing is applied.
   */
  async preview(proposed: ConfigData[]) {
    const validation: { severity: 'info' | 'warning' | 'error'; message: string }[] = [];
    const candidates = proposed.map((policy, index) => {
      const data: ConfigData = { status: 'active', ip_version: 'both', src_addr: 'any', dst_addr: 'any', protocol: 'any', iface_in: null, src_port: null, dst_port: null, ...policy };
      for (const field of POLICY_PORT_FIELDS) data[field] = normalisePortField(data[field], `policies.${index}.${field}`);
      for (const [field, kind, actionKind] of [['target_id', 'mw_instance', 'set_instance'], ['target_id', 'mw_gateway', 'set_gateway'], ['target_id', 'mw_group', 'set_group']] as const) {
        if (data.action_kind === actionKind && !this.context.store.get(kind, String(data[field]))) {
          validation.push({ severity: 'error', message: `policy ${index} (${String(data.name)}): ${actionKind} target ${String(data[field])} does not exist` });
        }
      }
      return { ...data, id: String(policy.id ?? `proposed-${index}`) } as ConfigData & { id: string };
    });
    // Rules compared by meaning: pf lines without labels, nftables lines without their label comment and mark.
    const nftables = this.context.platform.routing.dialect === 'nftables';
    const ruleLines = (policies: (ConfigData & { id: string })[]) =>
      nftables ? compileLinuxRouting(this.linuxInput(policies)).ruleLines : compilePolicies(this.compileInput(policies)).pbr;
    const meaning = nftables ? withoutNftLabel : withoutLabel;
    const current = ruleLines(this.storedPolicies());
    const next = ruleLines(candidates);
    const currentSet = new Set(current.map(meaning));
    const nextSet = new Set(next.map(meaning));
    const newRules = next.filter((line) => !currentSet.has(meaning(line)));
    const removedRules = current.filter((line) => !nextSet.has(meaning(line)));
    const instances = new Map(this.instances.objects().map((o) => [o.id, o.data]));
    let strand = false;
    for (const policy of candidates) {
      if (policy.status !== 'active' || policy.action_kind !== 'set_instance') continue;
      const instance = instances.get(String(policy.target_id));
      if (instance && instance.mgmt_reachable !== true && (policy.src_addr === 'any' || policy.src_addr === '0.0.0.0/0')) {
        strand = true;
        validation.push({ severity: 'error', message: `policy "${String(policy.name)}" sends all sources to instance "${String(instance.name)}", which cannot reach management` });
      }
    }
    if (![...instances.values()].some((i) => i.mgmt_reachable === true)) validation.push({ severity: 'warning', message: 'no routing instance is marked management-reachable' });
    const flows = newRules.length > 0 ? await this.context.platform.routing.flows(50) : [];
    return {
      new_rules: newRules,
      removed_rules: removedRules,
      affected_flows: flows.map((flow) => ({ src: flow.src, dst: flow.dst, protocol: flow.protocol, current_iface: flow.iface, future_iface: null, bytes: flow.bytes })),
      would_strand_mgmt: strand,
      validation,
      // Exactly what POST /apply would run if these policies were stored (read against the kernel now).
      apply_commands: await this.commandsFor(candidates),
    };
  }

  // ---- leaks -----------------------------------------------------------------------------------------

  deleteLeak(id: string): void {
    const leak = this.leaks.find(id);
    const dst = this.context.store.get('mw_instance', String(leak.data.dst_instance_id));
    if (dst?.data.mgmt_reachable === true) throw conflict('this leak keeps a management escape (its destination is management-reachable) and cannot be deleted');
    this.leaks.remove(id);
  }

  /** For every instance except the default, a bidirectional leak back to the default instance; idempotent. */
  seedMgmtLeaks(): number {
    let created = 0;
    this.context.store.transaction(() => {
      for (const instance of this.instances.objects()) {
        if (instance.id === DEFAULT_INSTANCE_ID) continue;
        const exists = this.leaks.objects().some((l) => l.data.src_instance_id === instance.id && l.data.dst_instance_id === DEFAULT_INSTANCE_ID && l.data.prefix === 'any' && l.data.protocol === 'any');
        if (exists) continue;
        this.leaks.create({ name: `${String(instance.data.name)}-mgmt-escape`.slice(0, 64), src_instance_id: instance.id, dst_instance_id: DEFAULT_INSTANCE_ID, prefix: 'any', protocol: 'any', ports: null, direction: 'bidirectional', enabled: true });
        created++;
      }
    });
    return created;
  }

  // ---- flows -----------------------------------------------------------------------------------------

  async flows() {
    const flows = await this.context.platform.routing.flows(500);
    return flows.map(({ id, protocol, src, dst, iface, rtable, bytes, age_secs }) => ({ id, protocol, src, dst, iface, rtable, bytes, age_secs }));
  }

  async migrate(label: string) {
    return { killed: await this.context.platform.routing.killStates(label) };
  }

  // ---- export / import -------------------------------------------------------------------------------

  private recordsOf(collection: CollectionModel) {
    return collection.objects().map((o) => ({ id: o.id, ...o.data, created_at: o.created_at, updated_at: o.updated_at }));
  }

  exportDocument() {
    return {
      instances: this.recordsOf(this.instances),
      instance_members: this.instanceMembers.objects().map((o) => o.data),
      gateways: this.recordsOf(this.gateways),
      groups: this.recordsOf(this.groups),
      group_members: this.groupMemberViews(),
      policies: this.recordsOf(this.policies),
      leaks: this.recordsOf(this.leaks),
    };
  }

  exportYaml(): string {
    return yamlDocument('Bulwark multi-WAN configuration', this.exportDocument(), 'multi-WAN export');
  }

  /**
   * Imports an exported document (YAML text or the same object): upsert by id, management-reachable instances
   * left alone, group and instance members replaced for the groups and instances it names. All or nothing.
   */
  importDocument(input: { yaml?: string } & Record<string, unknown>) {
    let document: Record<string, unknown>;
    if (typeof input.yaml === 'string') {
      try {
        document = parse(input.yaml) as Record<string, unknown>;
      } catch (error) {
        throw badRequest(`body.yaml is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
      }
    } else {
      document = input;
    }
    if (!document || typeof document !== 'object') throw badRequest('body must be a multi-WAN document');
    // An import that names none of the document's lists (`{}`, or no body at all) is a mistake, not a no-op.
    if (!MULTIWAN_DOCUMENT_LISTS.some((key) => key in document)) {
      throw badRequest(`body must carry yaml or at least one of the exported lists: ${MULTIWAN_DOCUMENT_LISTS.join(', ')}`);
    }
    const list = (key: string) => {
      const value = document[key] ?? [];
      if (!Array.isArray(value)) throw badRequest(`body.${key} must be a list`);
      return value as ConfigData[];
    };
    const counts = { instances: 0, gateways: 0, groups: 0, policies: 0, leaks: 0 };
    this.context.store.transaction(() => {
      const upsert = (collection: CollectionModel, key: keyof typeof counts, item: ConfigData, index: number) => {
        const { id, created_at: _c, updated_at: _u, ...data } = item;
        try {
          if (typeof id === 'string' && this.context.store.get(collection.kind, id)) collection.update(id, data);
          else if (typeof id === 'string') this.context.store.insert(collection.kind, {}, id) && collection.update(id, data);
          else collection.create(data);
        } catch (error) {
          throw badRequest(`${key}[${index}]: ${(error as Error).message}`);
        }
        counts[key]++;
      };
      list('instances').forEach((item, i) => {
        const existing = typeof item.id === 'string' ? this.context.store.get('mw_instance', item.id) : undefined;
        if (item.mgmt_reachable === true || existing?.data.mgmt_reachable === true) return;
        upsert(this.instances, 'instances', item, i);
      });
      list('gateways').forEach((item, i) => upsert(this.gateways, 'gateways', item, i));
      list('groups').forEach((item, i) => upsert(this.groups, 'groups', { ...this.groupFields(item), id: item.id }, i));
      const groupMembers = list('group_members');
      for (const groupId of new Set(groupMembers.map((m) => String(m.group_id)))) {
        for (const member of this.groupMembers.objects().filter((m) => m.data.group_id === groupId)) this.context.store.remove('mw_group_member', member.id);
      }
      groupMembers.forEach((member, i) => {
        try {
          this.groupMembers.create({ group_id: member.group_id, gateway_id: member.gateway_id, tier: member.tier ?? 1, weight: member.weight ?? 1 });
        } catch (error) {
          throw badRequest(`group_members[${i}]: ${(error as Error).message}`);
        }
      });
      const instanceMembers = list('instance_members');
      instanceMembers.forEach((member, i) => {
        for (const old of this.instanceMembers.objects().filter((m) => m.data.interface === member.interface)) this.context.store.remove('mw_instance_member', old.id);
        try {
          this.instanceMembers.create({ instance_id: member.instance_id, interface: member.interface });
        } catch (error) {
          throw badRequest(`instance_members[${i}]: ${(error as Error).message}`);
        }
      });
      list('policies').forEach((item, i) => upsert(this.policies, 'policies', item, i));
      list('leaks').forEach((item, i) => upsert(this.leaks, 'leaks', item, i));
    });
    return {
      message: `imported ${counts.instances} instances, ${counts.gateways} gateways, ${counts.groups} groups, ${counts.policies} policies, ${counts.leaks} leaks`,
      ...counts,
    };
  }
}
