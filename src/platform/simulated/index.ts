import { createSimulatedIpsec } from './ipsec.js';
import type { Platform } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { SimulatedPacketFilter } from './packet-filter.js';
import { createSimulatedWireguard } from './wireguard.js';
import { createSimulatedIdsEngine } from './ids-engine.js';
import { createSimulatedRouting } from './routing.js';
import { createSimulatedReverseProxy } from './reverse-proxy.js';
import { SimulatedTraffic } from './traffic.js';
import { createSimulatedDaemons } from './daemons.js';
import { createSimulatedNetwork } from './network.js';
import { createSimulatedMaintenance } from './maintenance.js';
import { createSimulatedHostSettings } from './host-settings.js';
import { createSimulatedFlowExport } from './flow-export.js';
import { createSimulatedHa } from './ha.js';

/** The embedded default: keeps state in memory and the data directory so the whole API works anywhere. */
export function createSimulatedPlatform(): Platform {
  const traffic = new SimulatedTraffic();
  return {
    name: 'simulated',
    simulated: true,
    description: 'simulated platform: no packet filter or daemon is touched; state is kept in memory and the data directory',
    packetFilter: new SimulatedPacketFilter(() => traffic.slots, () => traffic.interfaces()),
    system: { info: async () => readSystemInfo() },
    wireguard: createSimulatedWireguard(),
    ipsec: createSimulatedIpsec(),
    idsEngine: createSimulatedIdsEngine(),
    routing: createSimulatedRouting(),
    reverseProxy: createSimulatedReverseProxy(),
    traffic,
    daemons: createSimulatedDaemons(),
    network: createSimulatedNetwork(),
    maintenance: createSimulatedMaintenance(),
    hostSettings: (site) => createSimulatedHostSettings(site.dataDir),
    flowExport: createSimulatedFlowExport(),
    ha: createSimulatedHa(),
    close: () => traffic.close(),
  };
}
