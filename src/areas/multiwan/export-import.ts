/** Configuration as code: the multi-WAN export (YAML or JSON) and its all-or-nothing import. */
import { parse } from 'yaml';
import { yamlDocument } from '../../render/yaml-document.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import type { MultiWanCollections } from './collections.js';
import { groupFields, groupMemberViews } from './groups.js';

/** The lists an export carries, and an import must name at least one of. */
const MULTIWAN_DOCUMENT_LISTS = ['instances', 'instance_members', 'gateways', 'groups', 'group_members', 'policies', 'leaks'] as const;

export class MultiWanDocument {
  constructor(private readonly context: AppContext, private readonly collections: MultiWanCollections) {}

  private recordsOf(collection: CollectionModel) {
    return collection.objects().map((o) => ({ id: o.id, ...o.data, created_at: o.created_at, updated_at: o.updated_at }));
  }

  exportDocument() {
    const c = this.collections;
    return {
      instances: this.recordsOf(c.instances),
      instance_members: c.instanceMembers.objects().map((o) => o.data),
      gateways: this.recordsOf(c.gateways),
      groups: this.recordsOf(c.groups),
      group_members: groupMemberViews(c.groupMembers.objects()),
      policies: this.recordsOf(c.policies),
      leaks: this.recordsOf(c.leaks),
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
    const c = this.collections;
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
        upsert(c.instances, 'instances', item, i);
      });
      list('gateways').forEach((item, i) => upsert(c.gateways, 'gateways', item, i));
      list('groups').forEach((item, i) => upsert(c.groups, 'groups', { ...groupFields(item), id: item.id }, i));
      const groupMembers = list('group_members');
      for (const groupId of new Set(groupMembers.map((m) => String(m.group_id)))) {
        for (const member of c.groupMembers.objects().filter((m) => m.data.group_id === groupId)) this.context.store.remove('mw_group_member', member.id);
      }
      groupMembers.forEach((member, i) => {
        try {
          c.groupMembers.create({ group_id: member.group_id, gateway_id: member.gateway_id, tier: member.tier ?? 1, weight: member.weight ?? 1 });
        } catch (error) {
          throw badRequest(`group_members[${i}]: ${(error as Error).message}`);
        }
      });
      const instanceMembers = list('instance_members');
      instanceMembers.forEach((member, i) => {
        for (const old of c.instanceMembers.objects().filter((m) => m.data.interface === member.interface)) this.context.store.remove('mw_instance_member', old.id);
        try {
          c.instanceMembers.create({ instance_id: member.instance_id, interface: member.interface });
        } catch (error) {
          throw badRequest(`instance_members[${i}]: ${(error as Error).message}`);
        }
      });
      list('policies').forEach((item, i) => upsert(c.policies, 'policies', item, i));
      list('leaks').forEach((item, i) => upsert(c.leaks, 'leaks', item, i));
    });
    return {
      message: `imported ${counts.instances} instances, ${counts.gateways} gateways, ${counts.groups} groups, ${counts.policies} policies, ${counts.leaks} leaks`,
      ...counts,
    };
  }
}
