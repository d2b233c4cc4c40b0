/**
 * What multi-WAN routing the kernel was last made to run: the objects (instances, gateways, groups, policies,
 * leaks …) the last successful apply compiled, kept in `service_state` as `multiwan.applied`. A start of Bulwark
 * and a gateway's state change compile from this record, never from stored edits the kernel refused or that were
 * never applied; gateway health stays live (it is not configuration).
 */
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ConfigData } from '../../store/config-store.js';
import { ServiceState } from '../common/service-state.js';

export interface RoutingObject {
  id: string;
  data: ConfigData;
}

/** The lists routing is compiled from, as stored or as last applied. */
export interface RoutingObjects {
  instances: RoutingObject[];
  instanceMembers: RoutingObject[];
  gateways: RoutingObject[];
  groups: RoutingObject[];
  groupMembers: RoutingObject[];
  policies: RoutingObject[];
  leaks: RoutingObject[];
}

export interface AppliedRoutingRecord {
  objects: RoutingObjects;
  /** The configuration version the objects were when applied; null when they were not a recorded version. */
  version: number | null;
  applied_at: string;
}

const KEY = 'multiwan.applied';

export class AppliedRouting {
  private readonly state: ServiceState;

  constructor(private readonly context: AppContext, private readonly collections: Record<keyof RoutingObjects, CollectionModel>) {
    this.state = new ServiceState(context.db, context.clock);
  }

  /** The stored objects now (what a write or POST /multiwan/apply compiles). */
  stored(): RoutingObjects {
    const list = (model: CollectionModel) => model.objects().map((o) => ({ id: o.id, data: o.data }));
    const c = this.collections;
    return {
      instances: list(c.instances), instanceMembers: list(c.instanceMembers), gateways: list(c.gateways), groups: list(c.groups),
      groupMembers: list(c.groupMembers), policies: list(c.policies), leaks: list(c.leaks),
    };
  }

  /** The last applied objects; null when nothing was applied since the record was kept. */
  get(): AppliedRoutingRecord | null {
    const record = this.state.get<Partial<AppliedRoutingRecord>>(KEY, {});
    return record.objects ? (record as AppliedRoutingRecord) : null;
  }

  /** The kernel took routing compiled from these objects. */
  record(objects: RoutingObjects): void {
    this.state.set<AppliedRoutingRecord>(KEY, {
      objects,
      version: this.context.apply.versions.activeIfCurrent()?.version ?? null,
      applied_at: isoTime(this.context.clock.now()),
    });
  }
}
