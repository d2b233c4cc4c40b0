/**
 * Applying multi-WAN routing: the stored (or last applied) objects compiled for the platform (pf anchors, or the
 * Linux nftables table with ip rules and gateway routes), loaded one apply at a time, re-applied after writes,
 * and the dry run of proposed policies. What the kernel took is kept by applied-routing.ts.
 */
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { HttpError } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import { compileLeaks, compilePolicies, withoutLabel } from './compile.js';
import { compileLinuxRouting, withoutNftLabel, type LinuxCompileInput } from './compile-nftables.js';
import { MWAN_TABLE, type RoutingCommand } from '../../platform/routing.js';
import type { AppliedRouting, RoutingObjects } from './applied-routing.js';
import type { GatewayHealthStore } from './gateway-health-store.js';
import { groupMemberViews } from './groups.js';
import { normalisePortField, POLICY_PORT_FIELDS } from './port-fields.js';

const ANCHORS = { pbr: 'bulwark-pbr', reply: 'bulwark-mwan-reply', leak: 'bulwark-mwan-leak' } as const;

const policiesOf = (objects: RoutingObjects) => objects.policies.map((o) => ({ ...o.data, id: o.id }));

export class RoutingApply {
  /** One apply at a time. */
  private applying: Promise<unknown> = Promise.resolve();
  /**
   * The plan the kernel refused last time (as text). A gateway's state change does not retry it unchanged: each
   * retry would load and put back the routing again, cutting traffic for a moment, for the same refusal.
   */
  private refusedPlan: string | undefined;
  /** The plan this process last loaded (as text): a state change that compiles to the same plan loads nothing. */
  private planInForce: string | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly collections: { instances: CollectionModel },
    /** The objects the kernel's routing was last compiled from (a start and a gateway's state change use them). */
    readonly applied: AppliedRouting,
    private readonly health: GatewayHealthStore,
  ) {}

  /** What the compilers take: `policies` with the other objects (stored ones unless given, e.g. the applied record). */
  private compileInput(policies: (ConfigData & { id: string })[], objects: RoutingObjects = this.applied.stored()) {
    return {
      policies,
      instances: new Map(objects.instances.map((o) => [o.id, o.data])),
      gateways: this.health.gatewayViews(objects.gateways),
      groups: new Map(objects.groups.map((o) => [o.id, o.data])),
      members: groupMemberViews(objects.groupMembers),
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
    this.planInForce = plan;
    this.applied.record(objects);
  }

  /** After a write of policies, leaks, groups or gateways: apply again once applied (a refusal is the write's 409). */
  async reapplyAfterWrite(): Promise<void> {
    if (!this.applied.loadedByThisProcess) return;
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
    const instances = new Map(this.collections.instances.objects().map((o) => [o.id, o.data]));
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
}
