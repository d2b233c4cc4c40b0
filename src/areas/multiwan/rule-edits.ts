/**
 * Edits of the routing rules beyond their collections' CRUD: policy order, copy and toggle; route leaks' guarded
 * delete and the seeded management escapes; the live flows they route and cutting a rule's states.
 */
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import type { ConfigObject } from '../../store/config-store.js';
import { DEFAULT_INSTANCE_ID } from './schema.js';

export class RoutingRuleEdits {
  constructor(private readonly context: AppContext, private readonly collections: { instances: CollectionModel; policies: CollectionModel; leaks: CollectionModel }) {}

  // ---- policies --------------------------------------------------------------------------------------

  reorderPolicies(ids: string[]): number {
    const known = new Set(this.collections.policies.objects().map((o) => o.id));
    const unknown = ids.find((id) => !known.has(id));
    if (unknown) throw notFound(`policy ${unknown} not found`);
    if (new Set(ids).size !== ids.length) throw badRequest('body.policy_ids contains duplicates');
    this.context.store.transaction(() => {
      ids.forEach((id, index) => this.collections.policies.update(id, { priority: index + 1 }));
    });
    return ids.length;
  }

  duplicatePolicy(id: string): ConfigObject {
    const source = this.collections.policies.find(id);
    return this.collections.policies.create({ ...source.data, name: `${String(source.data.name)}-copy`.slice(0, 64), priority: Math.min(65535, Number(source.data.priority) + 1), status: 'disabled' });
  }

  togglePolicy(id: string, enabled: boolean): ConfigObject {
    return this.collections.policies.update(id, { status: enabled ? 'active' : 'disabled' });
  }

  // ---- leaks -----------------------------------------------------------------------------------------

  deleteLeak(id: string): void {
    const leak = this.collections.leaks.find(id);
    const dst = this.context.store.get('mw_instance', String(leak.data.dst_instance_id));
    if (dst?.data.mgmt_reachable === true) throw conflict('this leak keeps a management escape (its destination is management-reachable) and cannot be deleted');
    this.collections.leaks.remove(id);
  }

  /** For every instance except the default, a bidirectional leak back to the default instance; idempotent. */
  seedMgmtLeaks(): number {
    const { instances, leaks } = this.collections;
    let created = 0;
    this.context.store.transaction(() => {
      for (const instance of instances.objects()) {
        if (instance.id === DEFAULT_INSTANCE_ID) continue;
        const exists = leaks.objects().some((l) => l.data.src_instance_id === instance.id && l.data.dst_instance_id === DEFAULT_INSTANCE_ID && l.data.prefix === 'any' && l.data.protocol === 'any');
        if (exists) continue;
        leaks.create({ name: `${String(instance.data.name)}-mgmt-escape`.slice(0, 64), src_instance_id: instance.id, dst_instance_id: DEFAULT_INSTANCE_ID, prefix: 'any', protocol: 'any', ports: null, direction: 'bidirectional', enabled: true });
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
}
