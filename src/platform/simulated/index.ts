import type { Platform } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { SimulatedTraffic } from './traffic.js';

/** The embedded default: keeps state in memory and the data directory so the whole API works anywhere. */
export function createSimulatedPlatform(): Platform {
  const traffic = new SimulatedTraffic();
  return {
    name: 'simulated',
    simulated: true,
    description: 'simulated platform: no packet filter or daemon is touched; state is kept in memory and the data directory',
    packetFilter: {
      async status() {
        return { running: true, backend: 'simulated', rules: 0, states: traffic.slots, packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0 };
      },
    },
    system: { info: async () => readSystemInfo() },
    traffic,
    close: () => traffic.close(),
  };
}
