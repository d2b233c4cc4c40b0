import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AppContext } from '../../context.js';
import { HttpError } from '../../core/errors.js';
import type { ConfigObject } from '../../store/config-store.js';
import type { PacketFilterService } from '../packet-filter/service.js';
import type { VpnService } from './service.js';
import type { ObjectWrite } from '../../model/declarations.js';
import { notKept, revertWrites } from '../../model/revert-writes.js';

/** Tunnel fields that the running interface is built from: a change of one re-applies the whole interface. */
const INTERFACE_FIELDS = ['listen_port', 'address', 'mtu', 'private_key', 'listen_interface'];

/**
 * The WireGuard tunnels' life on the platform: start and stop, live peer changes, the tunnels that are enabled
 * (stored status `up`) brought up at server start and taken down at its stop, and the packet filter's system
 * rule for each enabled tunnel's UDP port. One change at a time.
 */
export class WireguardRuntime {
  private serial: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly context: AppContext,
    private readonly vpn: VpnService,
    private readonly packetFilter?: PacketFilterService,
  ) {
    packetFilter?.useWireguardTunnels(() => this.enabled().map((tunnel) => ({
      interface: String(tunnel.data.interface),
      port: Number(tunnel.data.listen_port),
      listenInterface: typeof tunnel.data.listen_interface === 'string' ? tunnel.data.listen_interface : null,
    })));
    // Tunnels are applied as they are written (no pending state): the enabled ones are brought back (adopted) by boot().
    context.restore.register({
      name: 'wireguard',
      daemon: 'wireguard-go',
      enabled: () => this.enabled().length > 0,
      running: async () => {
        for (const tunnel of this.enabled()) if (!(await context.platform.wireguard.status(String(tunnel.data.interface))).running) return false;
        return true;
      },
      appliedVersion: () => context.apply.versions.activeIfCurrent()?.version ?? null,
    });
    context.models.onChanged([vpn.tunnels, vpn.peers], (change) => this.one(async () => {
      if (change.cause === 'replace') return this.reconcileAll();
      try {
        await this.applyWrites(change.objects);
      } catch (error) {
        // The running tunnels keep the configuration in force: the writes are undone and re-applied as they were.
        revertWrites(context.store, change.objects);
        await this.applyWrites(change.objects.map(({ kind, before, after }) => ({ kind, before: after, after: before })))
          .catch((again: Error) => context.log.error({ err: again.message }, 'WireGuard configuration could not be put back'));
        throw notKept(error);
      }
    }));
  }

  /** Applies tunnel and peer writes to the running interfaces they concern. */
  private async applyWrites(objects: readonly ObjectWrite[]): Promise<void> {
    const retune = new Set<string>();
    const peersOf = new Set<string>();
    for (const { kind, before, after } of objects) {
      if (kind === 'wg_tunnel' && before && after && INTERFACE_FIELDS.some((field) => JSON.stringify(before.data[field]) !== JSON.stringify(after.data[field]))) retune.add(after.id);
      if (kind === 'wg_peer') peersOf.add(String((after ?? before)!.data.tunnel_id));
    }
    for (const id of retune) {
      const tunnel = this.vpn.tunnels.objects().find((t) => t.id === id);
      if (tunnel?.data.status === 'up') await this.bringUp(tunnel);
    }
    if (retune.size) await this.refreshFilter();
    for (const id of peersOf) {
      const tunnel = this.vpn.tunnels.objects().find((t) => t.id === id);
      if (tunnel?.data.status === 'up' && !retune.has(id)) await this.context.platform.wireguard.syncPeers(this.vpn.interfaceSpec(tunnel));
    }
  }

  private one<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work);
    this.serial = run.catch(() => undefined);
    return run;
  }

  private enabled(): ConfigObject[] {
    return this.vpn.tunnels.objects().filter((tunnel) => tunnel.data.status === 'up');
  }

  /** Renders the interface's `wg setconf` file (kept 0600 beside the database for inspection) and brings it up. */
  private async bringUp(tunnel: ConfigObject): Promise<void> {
    const spec = this.vpn.interfaceSpec(tunnel);
    mkdirSync(dirname(spec.setconfFile), { recursive: true, mode: 0o700 });
    writeFileSync(spec.setconfFile, spec.setconf, { mode: 0o600 });
    await this.context.platform.wireguard.up(spec);
  }

  private setStatus(tunnel: ConfigObject, status: 'up' | 'down'): void {
    const current = this.context.store.get('wg_tunnel', tunnel.id);
    if (current && current.data.status !== status) this.context.store.update('wg_tunnel', tunnel.id, { ...current.data, status });
  }

  /** Loads the system rules for the enabled tunnels; a refusal is the caller's failure (409/503). */
  private async refreshFilter(): Promise<void> {
    const outcome = await this.packetFilter?.reapplySystemRules();
    if (outcome && !outcome.ok) throw new HttpError(outcome.status, `the packet filter refused the WireGuard system rule: ${outcome.error}`);
  }

  start(id: string): Promise<void> {
    return this.one(async () => {
      const tunnel = this.vpn.tunnels.find(id);
      const wasEnabled = tunnel.data.status === 'up';
      await this.bringUp(tunnel);
      this.setStatus(tunnel, 'up');
      try {
        await this.refreshFilter();
      } catch (error) {
        // The port could not be let in: the tunnel goes back to how it was.
        if (!wasEnabled) {
          this.setStatus(tunnel, 'down');
          await this.context.platform.wireguard.down(String(tunnel.data.interface)).catch(() => undefined);
        }
        throw error;
      }
    });
  }

  stop(id: string): Promise<void> {
    return this.one(async () => {
      const tunnel = this.vpn.tunnels.find(id);
      await this.context.platform.wireguard.down(String(tunnel.data.interface));
      this.setStatus(tunnel, 'down');
      await this.refreshFilter();
    });
  }

  /** Deletes a tunnel (409 while peers use it), taking its interface down first. */
  deleteTunnel(id: string): Promise<void> {
    return this.one(async () => {
      const tunnel = this.vpn.tunnels.find(id);
      this.context.models.assertNotReferenced(tunnel);
      await this.context.platform.wireguard.down(String(tunnel.data.interface));
      this.vpn.tunnels.remove(id);
      if (tunnel.data.status === 'up') await this.refreshFilter();
    });
  }

  async status(id: string) {
    const tunnel = this.vpn.tunnels.find(id);
    const live = await this.context.platform.wireguard.status(String(tunnel.data.interface));
    const simulated = this.context.platform.simulated;
    const supervision = { backend: live.backend ?? 'kernel', pid: live.pid ?? null, restarts: live.restarts ?? 0, last_error: live.last_error ?? null };
    if (!live.running) {
      const lastError = supervision.last_error ?? (tunnel.data.status === 'up' ? `${live.interface} is enabled but not running` : null);
      return { running: false, interface: live.interface, simulated, peers: [], ...supervision, last_error: lastError };
    }
    return {
      running: true, interface: live.interface, simulated, ...supervision,
      listen_port: tunnel.data.listen_port as number, public_key: String(tunnel.data.public_key), peer_count: live.peers.length, peers: live.peers,
    };
  }

  /**
   * Every enabled tunnel up, every other one down (server start, and after an import or restore replaced the
   * configuration). Failures are logged per tunnel; one broken tunnel does not keep the others down.
   */
  private async reconcileAll(): Promise<void> {
    for (const tunnel of this.vpn.tunnels.objects()) {
      const name = String(tunnel.data.interface);
      try {
        if (tunnel.data.status === 'up') await this.bringUp(tunnel);
        else if ((await this.context.platform.wireguard.status(name)).running) await this.context.platform.wireguard.down(name);
      } catch (error) {
        this.context.log.error({ interface: name, err: (error as Error).message }, 'WireGuard tunnel could not be brought to its configured state');
      }
    }
    await this.refreshFilter().catch((error: Error) => this.context.log.error({ err: error.message }, 'WireGuard system rules not loaded'));
  }

  /** Server start: enabled tunnels come up. */
  boot(): Promise<void> {
    return this.one(() => this.reconcileAll());
  }

  /**
   * Server stop: every tunnel stays up (the API is not the appliance); the next start adopts the interfaces and
   * brings them to the stored configuration in place.
   */
  shutdown(): Promise<void> {
    return this.one(async () => this.context.platform.wireguard.release());
  }
}
