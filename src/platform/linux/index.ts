import { createLinuxIpsec } from './ipsec.js';
import { readFile } from 'node:fs/promises';
import type { Platform, PacketFilterStatus } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { LinuxTraffic } from './traffic.js';
import { runCommand } from '../exec.js';
import { NftablesPacketFilter } from './packet-filter.js';
import { notDriven } from '../not-driven.js';
import { NFT_TRAFFIC_COUNTERS } from '../../compile/nftables.js';
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

/** Reads the state of Bulwark's own nftables table and the kernel's conntrack count. */
async function nftablesStatus(): Promise<PacketFilterStatus> {
  const base: PacketFilterStatus = { running: false, backend: 'nftables', rules: 0, states: 0, packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0 };
  const states = await readFile('/proc/sys/net/netfilter/nf_conntrack_count', 'utf8').then(Number, () => 0);
  const listed = await runCommand('nft', ['-j', 'list', 'table', 'inet', NFT_TABLE]);
  if (listed.code !== 0) return { ...base, states, error: listed.stderr.trim() || `nft exited ${listed.code}` };
  const items = (JSON.parse(listed.stdout) as { nftables: Record<string, unknown>[] }).nftables;
  return { ...base, running: true, states, rules: items.filter((item) => 'rule' in item).length, ...trafficCounted(items) };
}

/** packets_in/out and bytes_in/out: the table's own traffic counters (NFT_TRAFFIC_COUNTERS), 0 before they exist. */
function trafficCounted(items: Record<string, unknown>[]): Pick<PacketFilterStatus, 'packets_in' | 'packets_out' | 'bytes_in' | 'bytes_out'> {
  const read = (name: string) => {
    const found = items.map((item) => item.counter as { name?: string; packets?: number; bytes?: number } | undefined).find((counter) => counter?.name === name);
    return { packets: Number(found?.packets ?? 0), bytes: Number(found?.bytes ?? 0) };
  };
  const [inbound, outbound] = [read(NFT_TRAFFIC_COUNTERS.in), read(NFT_TRAFFIC_COUNTERS.out)];
  return { packets_in: inbound.packets, packets_out: outbound.packets, bytes_in: inbound.bytes, bytes_out: outbound.bytes };
}

/** The real product on Linux: nftables, iproute2, conntrack and Debian's daemons. */
export function createLinuxPlatform(options: { aptRoot?: string; hostRoot?: string } = {}): Platform {
  const daemons = createProcessDaemons();
  const traffic = new LinuxTraffic();
  const wireguard = createLinuxWireguard();
  const ipsec = createLinuxIpsec();
  const reverseProxy = createCaddyProxy();
  const idsEngine = createSuricataEngine();
  const packetFilter = new NftablesPacketFilter(nftablesStatus);
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
