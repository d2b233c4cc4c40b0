/**
 * When a started daemon counts as running: not merely a live process, but one that answers on its own control
 * channel — which each of them opens only after it has read its configuration and opened its sockets. A daemon
 * that exits, or does not answer in time, did not start.
 */
import type { DaemonName } from './daemons.js';
import { runCommand } from './exec.js';
import { keaCommand, readKeaConfig } from './kea-control.js';

/** How long each daemon may take to come up (Unbound loads its blocklists first). */
export const READY_TIMEOUT_MS: Record<DaemonName, number> = { unbound: 60_000, 'kea-dhcp4': 20_000, 'kea-dhcp-ddns': 20_000, chronyd: 20_000 };

/** The unix command socket of a rendered chrony.conf. */
export function chronySocketOf(configText: string): string | null {
  return /^bindcmdaddress\s+(\/\S+)/m.exec(configText)?.[1] ?? null;
}

/** One probe: does the daemon answer on its control channel now? */
export async function answers(name: DaemonName, configFile: string, configText: string, findProgram: (program: string) => string | null): Promise<boolean> {
  switch (name) {
    case 'unbound': {
      const control = findProgram('unbound-control');
      if (!control) return false;
      return (await runCommand(control, ['-c', configFile, 'status'], { timeoutMs: 3000 })).code === 0;
    }
    case 'kea-dhcp4':
    case 'kea-dhcp-ddns': {
      const { socket } = readKeaConfig(configText);
      if (!socket) return false;
      return keaCommand(socket, 'version-get', undefined, 2000).then((answer) => answer.result === 0, () => false);
    }
    case 'chronyd': {
      const socket = chronySocketOf(configText);
      const chronyc = findProgram('chronyc');
      if (!socket || !chronyc) return false;
      return (await runCommand(chronyc, ['-h', socket, '-c', 'tracking'], { timeoutMs: 3000 })).code === 0;
    }
  }
}
