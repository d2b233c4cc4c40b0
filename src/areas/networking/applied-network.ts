/**
 * What the networking applier last put into the kernel — static routes, VLANs and the interface settings — kept in
 * `service_state` (operational state, not versioned with the configuration). Every followed write patches exactly
 * the object it put into the kernel, every whole apply replaces the record, and a start of Bulwark brings back
 * this record, never the stored configuration: an edit stored but not applied (a write whose kernel step never ran
 * because the API was killed between the two, an import kept for later) stays pending across a restart.
 */
import type { ConfigData } from '../../store/config-store.js';
import type { Network, VlanDevice } from '../../platform/network.js';

export type StaticRouteSpec = Parameters<Network['setStaticRoute']>[0];

export interface AppliedInterface {
  name: string;
  /** The interface's stored settings as they were applied (PUT /interfaces/config/{name} fields). */
  data: ConfigData;
}

export interface AppliedNetwork {
  /** false until an apply or a followed write recorded it: the stored configuration is then what the kernel holds. */
  recorded: boolean;
  routes: StaticRouteSpec[];
  vlans: VlanDevice[];
  /** Absent in a record written before interface settings were kept: the stored ones are taken then. */
  interfaces?: AppliedInterface[];
  /** The configuration version the record was applied from (null: from changes not recorded as a version). */
  version?: number | null;
  /** Applied during a coordinated apply that has not yet recorded its version. */
  awaiting_version?: boolean;
}

export const APPLIED_KEY = 'networking.applied';
export const NOTHING_APPLIED: AppliedNetwork = { recorded: false, routes: [], vlans: [] };

/** A route is the same kernel route when its table, destination and metric are (`ip route replace` keys). */
export const routeKey = (route: StaticRouteSpec) => `${route.table}|${route.destination}|${route.metric}`;
export const sameVlan = (a: VlanDevice, b: VlanDevice) => a.device === b.device && a.parent === b.parent && a.vlan_id === b.vlan_id && a.mtu === b.mtu;

/** The record after one followed write: `before` (when it was in the kernel) leaves, `after` (when enabled) arrives. */
export function patchRoutes(held: StaticRouteSpec[], before: StaticRouteSpec | null, after: StaticRouteSpec | null): StaticRouteSpec[] {
  const kept = held.filter((route) => (!before || routeKey(route) !== routeKey(before)) && (!after || routeKey(route) !== routeKey(after)));
  return after ? [...kept, after] : kept;
}

export function patchVlans(held: VlanDevice[], before: VlanDevice | null, after: VlanDevice | null): VlanDevice[] {
  const kept = held.filter((vlan) => (!before || vlan.device !== before.device) && (!after || vlan.device !== after.device));
  return after ? [...kept, after] : kept;
}

export function patchInterfaces(held: AppliedInterface[], name: string, data: ConfigData): AppliedInterface[] {
  return [...held.filter((entry) => entry.name !== name), { name, data }];
}
