import type { HaEngine, HaSpec, HaStatus } from '../ha.js';

/** The simulated platform runs no VRRP: it keeps the specification and reports the role it asks for, marked simulated. */
export function createSimulatedHa(): HaEngine {
  let current: HaSpec | null = null;
  const vrrpState = (): HaStatus['vrrp_state'] =>
    current ? (current.role === 'primary' && current.demotion < 240 && current.failingChecks === 0) || current.demotion < 0 ? 'master' : 'backup' : null;
  const status = async (): Promise<HaStatus> => ({ engine: 'simulated', running: current !== null, vrrp_state: vrrpState(), state_sync: null, last_error: null });
  return {
    async apply(spec) {
      current = spec && spec.addresses.length ? spec : null;
      return status();
    },
    async adjust(demotion, failingChecks) {
      if (current) current = { ...current, demotion, failingChecks };
    },
    status,
    vrrpState,
    async close() {},
  };
}
