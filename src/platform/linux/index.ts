import { createLinuxIpsec } from './ipsec.js';
import type { Platform } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { LinuxTraffic } from './traffic.js';
import { NftablesPacketFilter } from './packet-filter.js';
import { notDriven } from '../not-driven.js';
import { nftablesStatus } from './nft-status.js';
import { createLinuxWireguard } from './wireguard.js';
import { createProcessDaemons } from '../process-daemons.js';
import { createLinuxNetwork } from './network.js';
import { createLinuxRouting } from './routing.js';
import { createLinuxMaintenance } from './maintenance.js';
import { createCaddyProxy } from './caddy.js';
import { createSuricataEngine } from './suricata.js';
import { createLinuxHostSettings } from './host-settings.js';
import { createKeepalivedEngine } from './ha.js';
import { createSoftflowdExporter } from './softflowd.js';

export const NFT_TABLE = 'bulwark';

/** The real product on Linux: nftables, iproute2, conntrack and Debian's daemons. */
export function createLinuxPlatform(options: { aptRoot?: string; hostRoot?: string } = {}): Platform {
  const daemons = createProcessDaemons();
  const traffic = new LinuxTraffic();
  const wireguard = createLinuxWireguard();
  const ipsec = createLinuxIpsec();
  const reverseProxy = createCaddyProxy();
  const idsEngine = createSuricataEngine();
  const packetFilter: NftablesPacketFilter = new NftablesPacketFilter(() => nftablesStatus(packetFilter));
  const flowExport = createSoftflowdExporter();
  const ha = createKeepalivedEngine();
  return {
    name: 'linux',
    simulated: false,
    description: 'linux: nftables, iproute2, conntrack and Debian-packaged daemons',
    packetFilter,
    system: { info: async () => readSystemInfo() },
    wireguard,
    ipsec,
    idsEngine,
    routing: createLinuxRouting(),
    reverseProxy,
    traffic,
    daemons,
    network: createLinuxNetwork(),
    maintenance: createLinuxMaintenance(options.aptRoot),
    flowExport,
    hostSettings: (site) => createLinuxHostSettings(options.hostRoot ?? '/', site.log),
    ha,
    close: async () => {
      await ha.close();
      // The daemons, tunnels, charon, Caddy, ulogd, softflowd and Suricata keep running, adopted by the next start;
      // only this process's readers end.
      await flowExport.close();
      wireguard.release();
      ipsec.release();
      daemons.release();
      await reverseProxy.close();
      await traffic.close();
      await idsEngine.close();
      await packetFilter.close();
    },
    stopServices: async () => {
      await wireguard.closeAll();
      await ipsec.stop();
      await daemons.closeAll();
      await reverseProxy.stopAll();
      await ha.apply(null);
      await flowExport.apply(null);
      await traffic.stopReaders();
      await idsEngine.stopAll();
    },
  };
}
