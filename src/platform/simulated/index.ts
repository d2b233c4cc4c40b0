import type { Platform } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { SimulatedPacketFilter } from './packet-filter.js';

/** The embedded default: keeps state in memory and the data directory so the whole API works anywhere. */
export function createSimulatedPlatform(): Platform {
  return {
    name: 'simulated',
    simulated: true,
    description: 'simulated platform: no packet filter or daemon is touched; state is kept in memory and the data directory',
    packetFilter: new SimulatedPacketFilter(),
    system: { info: async () => readSystemInfo() },
    async close() {},
  };
}
