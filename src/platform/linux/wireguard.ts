import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { conflict, unavailable } from '../../core/errors.js';
import { findProgram } from '../daemon-tools.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { SupervisedProcess } from '../supervised-process.js';
import { readProcessRecord, recordedProcessRuns, recordFile } from '../process-record.js';
import type { WireguardControl, WireguardInterfaceSpec, WireguardInterfaceStatus } from '../wireguard.js';
import { mustRun, peerRoutes, readDump, runTool, setconf, syncAdopted, syncPeersWithWg } from '../wireguard-tool.js';

export { parseWgDump } from '../wireguard-tool.js';

/** Where wireguard-go (and wg) keep an interface's control socket: one directory for every namespace. */
const SOCKET_DIR = '/var/run/wireguard';

interface Running {
  spec: WireguardInterfaceSpec;
  backend: 'kernel' | 'wireguard-go';
  process: SupervisedProcess | null;
  /** Routes installed for the peers' networks, removed when they are no longer needed. */
  routes: string[];
  /** Found running at start (left by an earlier API process): configured in place, never recreated. */
  adopted: boolean;
}

const linkExists = async (name: string) => (await runTool('ip', ['link', 'show', 'dev', name])).code === 0;
const isKernelWireguard = async (name: string) => / wireguard /.test((await runTool('ip', ['-d', 'link', 'show', 'dev', name])).stdout);
/**
 * The global addresses an interface holds now (`10.8.0.1/24`). The IPv6 link-local address the kernel gives a
 * wireguard-go (tun) interface when it comes up is not one Bulwark set, and is left out.
 */
const addressesOf = async (name: string) => [...(await runTool('ip', ['-o', 'address', 'show', 'dev', name, 'scope', 'global'])).stdout.matchAll(/\sinet6?\s+(\S+)/g)].map((m) => m[1]);

/** Where wireguard-go's pid record and output live: beside the interface's setconf file (root only, 0700). */
const processFiles = (spec: WireguardInterfaceSpec) => ({ dir: dirname(spec.setconfFile), name: `${spec.interface}.wireguard-go`, configHash: null });

/**
 * WireGuard on Linux: the kernel module when the kernel has it (`ip link add … type wireguard`), otherwise
 * `wireguard-go -f IF` as a supervised foreground process (restarted, and its configuration put back, when it
 * dies). Keys, port and peers through `wg setconf`/`wg set`; address, MTU and peer routes through `ip`.
 */
export function createLinuxWireguard(log?: FastifyBaseLogger): WireguardControl {
  const running = new Map<string, Running>();

  /** Address, MTU, link up and peer routes: what `wg` does not configure. */
  const configureLink = async (entry: Running) => {
    const { spec } = entry;
    const name = spec.interface;
    // The address it already holds is never taken away (an adopted tunnel carries traffic meanwhile: a moment without
    // it drops what arrives). Any other global address goes first (deleting a primary address takes the secondaries
    // of its subnet with it), then a missing one is added.
    const current = await addressesOf(name);
    for (const other of current.filter((address) => address !== spec.address)) await mustRun(`addressing ${name}`, 'ip', ['address', 'del', other, 'dev', name]);
    if (!current.includes(spec.address)) await mustRun(`addressing ${name}`, 'ip', ['address', 'add', spec.address, 'dev', name]);
    await mustRun(`setting the MTU of ${name}`, 'ip', ['link', 'set', 'dev', name, 'mtu', String(spec.mtu ?? 1420)]);
    await mustRun(`bringing ${name} up`, 'ip', ['link', 'set', 'dev', name, 'up']);
    await syncRoutes(entry);
  };

  const syncRoutes = async (entry: Running) => {
    const name = entry.spec.interface;
    const wanted = peerRoutes(entry.spec);
    for (const route of entry.routes.filter((r) => !wanted.includes(r))) await runTool('ip', ['route', 'del', route, 'dev', name]);
    for (const route of wanted) await mustRun(`routing ${route} through ${name}`, 'ip', ['route', 'replace', route, 'dev', name]);
    entry.routes = wanted;
  };

  /**
   * Creates the link: the kernel's when it can, otherwise a supervised wireguard-go (detached: it outlives the API
   * process). A link left running by an earlier API process — a kernel interface, or a wireguard-go whose pid
   * record still matches — is adopted as it is.
   */
  const createLink = async (spec: WireguardInterfaceSpec): Promise<Running> => {
    const name = spec.interface;
    if (!findProgram('ip')) throw unavailable(describeMissing(missingTool('ip')));
    if (!findProgram('wg')) throw unavailable(describeMissing(missingTool('wg')));
    const files = processFiles(spec);
    const recorded = readProcessRecord(recordFile(files.dir, files.name));
    const goRuns = recorded !== null && recordedProcessRuns(recorded);
    if (!goRuns) {
      if ((await linkExists(name)) && (await isKernelWireguard(name))) return { spec, backend: 'kernel', process: null, routes: [], adopted: true };
      const kernel = await runTool('ip', ['link', 'add', 'dev', name, 'type', 'wireguard']);
      if (kernel.code === 0) return { spec, backend: 'kernel', process: null, routes: [], adopted: false };
    }
    const program = findProgram('wireguard-go');
    if (!program) throw unavailable(`this kernel has no WireGuard module and ${describeMissing(missingTool('wireguard-go'))}`);
    // A link or socket left by a run that ended without cleaning up would make wireguard-go refuse the name.
    if (!goRuns && (await linkExists(name))) await runTool('ip', ['link', 'del', 'dev', name]);
    const entry: Running = { spec, backend: 'wireguard-go', process: null, routes: [], adopted: false };
    entry.process = new SupervisedProcess({
      label: `wireguard-go ${name}`,
      command: program,
      args: ['-f', name],
      // Never WG_PROCESS_FOREGROUND=0: with it wireguard-go forks itself again and again.
      env: { LOG_LEVEL: 'error' },
      ready: async () => existsSync(`${SOCKET_DIR}/${name}.sock`) && (await linkExists(name)),
      onLine: (line) => log?.info({ interface: name }, `wireguard-go: ${line.slice(0, 300)}`),
      afterRestart: async () => {
        // The interface died with the process: keys, peers, address and routes go back on.
        entry.routes = [];
        await setconf(entry.spec);
        await configureLink(entry);
        log?.warn({ interface: name }, 'wireguard-go was restarted and its tunnel configured again');
      },
      detached: files,
    });
    const outcome = await entry.process.start().catch((error: Error) => {
      throw conflict(error.message);
    });
    entry.adopted = outcome === 'adopted';
    return entry;
  };

  const down = async (name: string) => {
    const entry = running.get(name);
    running.delete(name);
    if (entry?.process) await entry.process.stop();
    if (findProgram('ip') && (await linkExists(name))) await mustRun(`removing ${name}`, 'ip', ['link', 'del', 'dev', name]);
  };

  return {
    async up(spec) {
      let entry = running.get(spec.interface);
      const fresh = !entry || !(await linkExists(spec.interface));
      if (fresh) {
        if (entry) await down(spec.interface);
        entry = await createLink(spec);
        running.set(spec.interface, entry);
      }
      entry!.spec = spec;
      try {
        // An adopted interface is brought to the spec in place, keeping its sessions; a new one gets it whole.
        if (entry!.adopted) await syncAdopted(spec);
        else await setconf(spec);
        await configureLink(entry!);
      } catch (error) {
        // A tunnel that could not be configured is not left half up.
        if (fresh) await down(spec.interface).catch(() => undefined);
        throw error;
      }
    },
    async syncPeers(spec) {
      const entry = running.get(spec.interface);
      await syncPeersWithWg(spec);
      if (entry) {
        entry.spec = spec;
        await syncRoutes(entry);
      }
    },
    down,
    async status(name): Promise<WireguardInterfaceStatus> {
      const entry = running.get(name);
      const supervision = entry?.process?.state();
      const backend = {
        backend: entry?.backend ?? 'kernel',
        pid: supervision?.pid ?? null,
        restarts: supervision?.restarts ?? 0,
        last_error: supervision?.last_error ?? null,
      } as const;
      const live = findProgram('wg') ? await readDump(name) : null;
      if (!live) return { running: false, interface: name, peers: [], ...backend };
      const { presharedKeys: _keys, privateKey: _privateKey, ...status } = live;
      return { ...status, ...backend };
    },
    async closeAll() {
      for (const name of [...running.keys()]) await down(name).catch(() => undefined);
    },
    release() {
      for (const entry of running.values()) entry.process?.release();
      running.clear();
    },
  };
}
