/**
 * What multi-WAN routing the kernel was last made to run: the objects (instances, gateways, groups, policies,
 * leaks …) the last successful apply compiled, kept in `service_state` as `multiwan.applied`. A start of Bulwark
 * and a gateway's state change compile from this record, never from stored edits the kernel refused or that were
 * never applied; gateway health stays live (it is not configuration). Also what /status reports of it: whether
 * this process loaded it and the start could put it back.
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

const hasRouting = (objects: RoutingObjects): boolean => objects.policies.length > 0 || objects.leaks.length > 0;

export class AppliedRouting {
  private readonly state: ServiceState;
  /** Set by the first successful apply: from then on writes and state changes re-apply. */
  private loadedHere = false;
  /** Why the start could not put the applied routing back (for /status); null otherwise. */
  private restoreError: string | null = null;

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

  /** Whether this process loaded routing (a start, an apply). */
  get loadedByThisProcess(): boolean {
    return this.loadedHere;
  }

  /** The kernel took routing compiled from these objects. */
  record(objects: RoutingObjects): void {
    this.loadedHere = true;
    this.restoreError = null;
    this.state.set<AppliedRoutingRecord>(KEY, {
      objects,
      version: this.context.apply.versions.activeIfCurrent()?.version ?? null,
      applied_at: isoTime(this.context.clock.now()),
    });
  }

  /**
   * At start: the routing last applied goes back into the kernel (it forgot it at a reboot). A database from
   * before the applied record was kept (an upgrade) has none: the stored routing is then what ran, when any
   * policy or leak exists. Throws why it could not (the start-up restore reports it in /status).
   */
  async restore(apply: (source: 'applied' | 'stored') => Promise<unknown>): Promise<void> {
    const source = this.get() ? 'applied' : hasRouting(this.stored()) ? 'stored' : null;
    if (!source) return;
    try {
      await apply(source);
    } catch (error) {
      this.restoreError = (error as Error).message;
      throw error;
    }
  }

  /** Whether the start-up restore has routing to put back (the applied record, or stored routing from before it). */
  hasApplied(): boolean {
    const record = this.get();
    return hasRouting(record ? record.objects : this.stored());
  }

  /** The applied routing is in force: this process loaded it (a start, an apply) and nothing failed since. */
  inForce(): boolean {
    return this.loadedHere && this.restoreError === null;
  }
}
