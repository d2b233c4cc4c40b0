import { createFreebsdIpsec } from './ipsec.js';
import type { Platform, PacketFilterStatus } from '../platform.js';
import { readSystemInfo } from '../os-info.js';
import { FreebsdTraffic } from './traffic.js';
import { runCommand } from '../exec.js';
import { PfPacketFilter } from './packet-filter.js';
import { notDriven } from '../not-driven.js';
import { createFreebsdCarp } from './carp.js';
import { createProcessDaemons } from '../process-daemons.js';
import { createFreebsdNetwork } from './network.js';
import { createFreebsdRouting } from './routing.js';
import { createFreebsdMaintenance } from './maintenance.js';
import { createFreebsdWireguard } from './wireguard.js';
import { createFreebsdHostSettings } from './host-settings.js';

export const PF_ANCHOR = 'bulwark';

/** Parses `pfctl -s info` for the enabled flag and the state-table size. */
export function parsePfInfo(text: string): { running: boolean; states: number } {
  const running = /Status:\s+Enabled/i.test(text);
  const states = Number(/current entries\s+(\d+)/i.exec(text)?.[1] ?? 0);
  return { running, states };
}

async function pfStatus(): Promise<PacketFilterStatus> {
  const base: PacketFilterStatus = { running: false, backend: 'pf', rules: 0, states: 0, packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0 };
  const info = await runCommand('pfctl', ['-s', 'info']);
  if (info.code !== 0) return { ...base, error: info.stderr.trim() || `pfctl exited ${info.code}` };
  const rules = await runCommand('pfctl', ['-a', PF_ANCHOR, '-s', 'rules']);
  const ruleCount = rules.code === 0 ? rules.stdout.split('\n').filter((l) => l.trim()).length : 0;
  return { ...base, ...parsePfInfo(info.stdout), rules: ruleCount };
}

/** FreeBSD: pfctl and rc.d. Tested with fake tools on PATH, since FreeBSD is not available here. */
export function createFreebsdPlatform(options: { hostRoot?: string } = {}): Platform {
  const daemons = createProcessDaemons();
  const traffic = new FreebsdTraffic();
  return {
    name: 'freebsd',
    simulated: false,
    description: 'freebsd: pf through pfctl anchors, services through rc.d',
    packetFilter: new PfPacketFilter(pfStatus),
    system: { info: async () => readSystemInfo() },
    wireguard: createFreebsdWireguard(),
    ipsec: createFreebsdIpsec(),
    idsEngine: notDriven('freebsd', 'the IDS engine'),
    routing: createFreebsdRouting(),
    reverseProxy: notDriven('freebsd', 'the reverse proxy'),
    traffic,
    daemons,
    network: createFreebsdNetwork(),
    maintenance: createFreebsdMaintenance(),
    hostSettings: (site) => createFreebsdHostSettings(options.hostRoot ?? '/', site.log),
    flowExport: notDriven('freebsd', 'flow export'),
    ha: createFreebsdCarp(),
    close: async () => {
      await traffic.close();
      daemons.release();
    },
    stopServices: () => daemons.closeAll(),
  };
}
