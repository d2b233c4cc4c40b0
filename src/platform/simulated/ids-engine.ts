import type { IdsEngine } from '../ids-engine.js';

/** Keeps the loaded rule count, mode and counters in memory; inspects no packets. */
export function createSimulatedIdsEngine(now: () => number = Date.now): IdsEngine {
  let mode: 'ids' | 'ips' | 'disabled' = 'disabled';
  let loadedRules = 0;
  let startedAt = 0;
  let alerts = 0;
  return {
    kind: 'simulated',
    async reload(options) {
      mode = options.mode;
      loadedRules = mode === 'disabled' ? 0 : options.rules.split('\n').filter((line) => line.trim() && !line.trimStart().startsWith('#')).length;
      startedAt = mode === 'disabled' ? 0 : now();
    },
    async status() {
      const running = mode !== 'disabled';
      return {
        running, mode, loaded_rules: loadedRules, packets_inspected: 0, alerts_total: alerts, drops_total: 0,
        bytes_per_sec: 0, packets_per_sec: 0, flow_count: 0, flow_reassembly_bytes: 0,
        uptime_secs: running ? Math.floor((now() - startedAt) / 1000) : 0, installed: true, engine: 'simulated',
      };
    },
    async countAlerts(count) {
      alerts += count;
    },
    onEve() {
      return () => undefined;
    },
  };
}
