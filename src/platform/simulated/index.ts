import type { Platform } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { SimulatedPacketFilter } from './packet-filter.js';
import { createSimulatedWireguard } from './wireguard.js';
import { createSimulatedIdsEngine } from './ids-engine.js';
import { createSimulatedRouting } from './routing.js';
import { createSimulatedReverseProxy } from './reverse-proxy.js';
import { createSimulatedDaemons } from './daemons.js';
import { createSimulatedNetwork } from './network.js';
import { createSimulatedMaintenance } from './maintenance.js';

/** The embedded default: keeps state in memory and the data directory so the whole API works anywhere. */
export function createSimulatedPlatform(): Platform {
  return {
    name: 'simulated',
    simulated: true,
    description: 'simulated platform: no packet filter or daemon is touched; state is kept in memory and the data directory',
    packetFilter: new SimulatedPacketFilter(),
    system: { info: async () => readSystemInfo() },
    wireguard: createSimulatedWireguard(),
    idsEngine: createSimulatedIdsEngine(),
    routing: createSimulatedRouting(),
    reverseProxy: createSimulatedReverseProxy(),
    daemons: createSimulatedDaemons(),
    network: createSimulatedNetwork(),
    maintenance: createSimulatedMaintenance(),
    async close() {},
  };
}
