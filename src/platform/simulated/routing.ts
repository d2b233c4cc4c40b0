import type { FlowState, LinuxRoutingPlan, RoutingControl } from '../routing.js';

/** Simulated policy routing. `flowTable` is the state table; tests and demos may fill it. */
export interface SimulatedRouting extends RoutingControl {
  flowTable: FlowState[];
  pinned: Map<string, number>;
  plan: LinuxRoutingPlan | undefined;
}

export function createSimulatedRouting(): SimulatedRouting {
  let netFibs = 16;
  let anchors: Record<string, string> = {};
  const routing: SimulatedRouting = {
    // The simulation keeps the pf anchors (its dialect); a plan given anyway is only kept.
    dialect: 'pf',
    plan: undefined,
    async commandsFor(plan) {
      return [{ command: 'nft -f -', input: plan.nft }];
    },
    async applyPlan(plan) {
      routing.plan = plan;
    },
    flowTable: [],
    pinned: new Map(),
    async fibs() {
      return { net_fibs: netFibs };
    },
    async enableFibs(fibs) {
      if (fibs <= netFibs) return { already_enabled: true, reboot_scheduled: false, net_fibs: netFibs };
      netFibs = fibs;
      // Nothing to reboot: the simulated kernel takes the new table count at once.
      return { already_enabled: false, reboot_scheduled: false, net_fibs: netFibs };
    },
    async pinInterface(name, fib) {
      if (fib === 0) routing.pinned.delete(name);
      else routing.pinned.set(name, fib);
    },
    async loadAnchors(next) {
      anchors = { ...anchors, ...next };
    },
    async anchors() {
      return { ...anchors };
    },
    async probe(target) {
      // A simulated link answers every probe after a delay proportional to nothing: a steady 10 ms.
      return { success: true, rtt_ms: 10, error: null, ...(target.target === '' ? { success: false, rtt_ms: null, error: 'no target' } : {}) };
    },
    async flows(limit) {
      return routing.flowTable.slice(0, limit);
    },
    async killStates(label) {
      const before = routing.flowTable.length;
      routing.flowTable = routing.flowTable.filter((flow) => flow.label !== label);
      return before - routing.flowTable.length;
    },
  };
  return routing;
}
