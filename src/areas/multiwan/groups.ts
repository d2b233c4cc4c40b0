/** Gateway groups: their fields, members by tier and weight, and the gateways a group selects now. */
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, notFound } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { selectGateways, type MemberView } from './compile.js';
import type { RoutingObject } from './applied-routing.js';
import type { GatewayHealthStore } from './gateway-health-store.js';

const policyAliases: Record<string, string> = { failover: 'failover', weighted_lb: 'weighted_lb', weighted: 'weighted_lb', adaptive: 'adaptive', load_balance: 'load_balance', 'load-balance': 'load_balance', lb: 'load_balance' };
const stickyAliases: Record<string, string> = { none: 'none', src: 'src', five_tuple: 'five_tuple', 'five-tuple': 'five_tuple', '5tuple': 'five_tuple' };

/** A group's writable fields, with the policy and stickiness aliases turned into their stored names. */
export function groupFields(body: ConfigData): ConfigData {
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

/** Group members (of one group, or all), by tier then heaviest first. */
export function groupMemberViews(members: readonly RoutingObject[], groupId?: string): MemberView[] {
  return members
    .filter((m) => groupId === undefined || m.data.group_id === groupId)
    .map((m) => ({ group_id: String(m.data.group_id), gateway_id: String(m.data.gateway_id), tier: Number(m.data.tier), weight: Number(m.data.weight) }))
    .sort((a, b) => a.tier - b.tier || b.weight - a.weight);
}

export class GatewayGroups {
  constructor(
    private readonly context: AppContext,
    private readonly collections: { groups: CollectionModel; groupMembers: CollectionModel },
    private readonly health: GatewayHealthStore,
  ) {}

  createGroup(body: ConfigData): ConfigObject {
    return this.collections.groups.create(groupFields(body));
  }

  updateGroup(id: string, body: ConfigData): ConfigObject {
    return this.collections.groups.update(id, groupFields(body));
  }

  deleteGroup(id: string): void {
    this.context.store.transaction(() => {
      const group = this.collections.groups.find(id);
      for (const member of this.collections.groupMembers.objects().filter((m) => m.data.group_id === id)) this.context.store.remove('mw_group_member', member.id);
      this.context.models.assertNotReferenced(group);
      this.context.store.remove('mw_group', id);
    });
  }

  listGroupMembers(groupId: string) {
    this.collections.groups.find(groupId);
    return groupMemberViews(this.collections.groupMembers.objects(), groupId);
  }

  /** Adds a gateway to a group, or changes its tier and weight when it is already a member. */
  upsertGroupMember(groupId: string, body: { gateway_id: string; tier: number; weight: number }) {
    this.collections.groups.find(groupId);
    const existing = this.collections.groupMembers.objects().find((m) => m.data.group_id === groupId && m.data.gateway_id === body.gateway_id);
    const data = { group_id: groupId, gateway_id: body.gateway_id, tier: body.tier, weight: body.weight };
    if (existing) this.collections.groupMembers.update(existing.id, data);
    else this.collections.groupMembers.create(data);
    return data;
  }

  removeGroupMember(groupId: string, gatewayId: string): void {
    this.collections.groups.find(groupId);
    const existing = this.collections.groupMembers.objects().find((m) => m.data.group_id === groupId && m.data.gateway_id === gatewayId);
    if (!existing) throw notFound(`gateway ${gatewayId} is not a member of group ${groupId}`);
    this.context.store.remove('mw_group_member', existing.id);
  }

  activeGateways(groupId: string) {
    const group = this.collections.groups.find(groupId);
    const { selection, gateways } = selectGateways(group.data, groupMemberViews(this.collections.groupMembers.objects(), groupId), this.health.gatewayViews());
    return { selection, gateways };
  }

  /** Group id → the gateways it selects now (as text), to see which groups a state change moved. */
  selections(): Map<string, string> {
    return new Map(this.collections.groups.objects().map((group) => [group.id, JSON.stringify(this.activeGateways(group.id))]));
  }
}
