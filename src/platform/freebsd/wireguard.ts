import type { WireguardControl, WireguardInterfaceSpec } from '../wireguard.js';
import { parseCidr } from '../../net/address.js';
import { mustRun, peerRoutes, readDump, runTool, setconf, syncPeersWithWg } from '../wireguard-tool.js';

/**
 * WireGuard on FreeBSD: the kernel's if_wg (`ifconfig wg create name IF`), keys and peers through `wg`, address
 * and MTU through `ifconfig`, peer routes through `route`. Nothing to supervise: the interface is the kernel's.
 */
export function createFreebsdWireguard(): WireguardControl {
  const routes = new Map<string, string[]>();
  const specs = new Map<string, WireguardInterfaceSpec>();

  const exists = async (name: string) => (await runTool('ifconfig', [name])).code === 0;

  const syncRoutes = async (spec: WireguardInterfaceSpec) => {
    const name = spec.interface;
    const wanted = peerRoutes(spec);
    const installed = routes.get(name) ?? [];
    for (const route of installed.filter((r) => !wanted.includes(r))) {
      await runTool('route', ['-q', '-n', 'delete', familyFlag(route), route, '-interface', name]);
    }
    for (const route of wanted.filter((r) => !installed.includes(r))) {
      await mustRun(`routing ${route} through ${name}`, 'route', ['-q', '-n', 'add', familyFlag(route), route, '-interface', name]);
    }
    routes.set(name, wanted);
  };

  const down = async (name: string) => {
    routes.delete(name);
    specs.delete(name);
    if (await exists(name)) await mustRun(`removing ${name}`, 'ifconfig', [name, 'destroy']);
  };

  return {
    async up(spec) {
      const name = spec.interface;
      const fresh = !(await exists(name));
      if (fresh) await mustRun(`creating ${name}`, 'ifconfig', ['wg', 'create', 'name', name]);
      try {
        await setconf(spec);
        const address = parseCidr(spec.address);
        await mustRun(`addressing ${name}`, 'ifconfig', [name, address?.family === 6 ? 'inet6' : 'inet', spec.address]);
        await mustRun(`bringing ${name} up`, 'ifconfig', [name, 'mtu', String(spec.mtu ?? 1420), 'up']);
        specs.set(name, spec);
        await syncRoutes(spec);
      } catch (error) {
        if (fresh) await down(name).catch(() => undefined);
        throw error;
      }
    },
    async syncPeers(spec) {
      await syncPeersWithWg(spec);
      specs.set(spec.interface, spec);
      await syncRoutes(spec);
    },
    down,
    async status(name) {
      const backend = { backend: 'kernel', pid: null, restarts: 0, last_error: null } as const;
      const live = await readDump(name);
      if (!live) return { running: false, interface: name, peers: [], ...backend };
      const { presharedKeys: _keys, privateKey: _privateKey, ...status } = live;
      return { ...status, ...backend };
    },
    async closeAll() {
      for (const name of [...specs.keys()]) await down(name).catch(() => undefined);
    },
    // The kernel's wg(4) interfaces outlive the API process: nothing to let go of.
    release() {},
  };
}

const familyFlag = (route: string) => (route.includes(':') ? '-inet6' : '-inet');
