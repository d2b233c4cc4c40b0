import type { PlatformName } from '../config.js';
import type { PacketFilter } from './packet-filter.js';
import type { WireguardControl } from './wireguard.js';
import type { IpsecControl } from './ipsec.js';
import type { IdsEngine } from './ids-engine.js';
import type { RoutingControl } from './routing.js';
import type { ReverseProxyControl } from './reverse-proxy.js';
import type { TrafficSource } from './connections.js';
import type { Daemons } from './daemons.js';
import type { Network } from './network.js';
import type { Maintenance } from './maintenance.js';
import type { HostSettings, HostSite } from './host-settings.js';
import type { FlowExporter } from './flow-export.js';
import type { HaEngine } from './ha.js';

export interface PacketFilterStatus {
  running: boolean;
  backend: 'nftables' | 'pf' | 'simulated';
  /** Rules loaded in the kernel (Bulwark's table or anchor). */
  rules: number;
  /** Size of the connection-state table. */
  states: number;
  packets_in: number;
  packets_out: number;
  bytes_in: number;
  bytes_out: number;
  /** Why the status could not be read, when it could not. */
  error?: string;
  /** What stops the loaded ruleset from taking effect (pf disabled, a pf.conf hook missing), with the fix. */
  problems?: string[];
}

export interface SystemInfo {
  hostname: string;
  os: string;
  kernel: string;
  arch: string;
  cpus: number;
  memory_total_bytes: number;
  memory_free_bytes: number;
  uptime_seconds: number;
  load_average: number[];
}

/**
 * Everything that touches the operating system goes through this interface. `simulated` keeps state in
 * memory and the data directory; `linux` drives nftables, iproute2, conntrack and Debian's daemons;
 * `freebsd` drives pfctl and rc.d. Later areas add their drivers here.
 */
export interface Platform {
  readonly name: PlatformName;
  /** True only for the simulated platform; /about and /status say so. */
  readonly simulated: boolean;
  readonly description: string;
  readonly packetFilter: PacketFilter;
  readonly system: {
    info(): Promise<SystemInfo>;
  };
  readonly wireguard: WireguardControl;
  /** strongSwan's charon, configured through swanctl (src/platform/ipsec.ts). */
  readonly ipsec: IpsecControl;
  readonly idsEngine: IdsEngine;
  readonly routing: RoutingControl;
  readonly reverseProxy: ReverseProxyControl;
  /** Connection table, interface and rule counters, blocked packets (connections.ts). */
  readonly traffic: TrafficSource;
  /** Unbound, Kea and chrony: checkers, lifecycle, logs and live state (src/platform/daemons.ts). */
  readonly daemons: Daemons;
  /** Interfaces and routes of the host (src/platform/network.ts). */
  readonly network: Network;
  /** OS updates and power control (src/platform/maintenance.ts). */
  readonly maintenance: Maintenance;
  /** Hostname, timezone, login texts, sshd, resolvers, state-table sysctls, kernel console (src/platform/host-settings.ts). */
  hostSettings(site: HostSite): HostSettings;
  /** NetFlow v9 / IPFIX export of the flows through the box (src/platform/flow-export.ts). */
  readonly flowExport: FlowExporter;
  /** High availability: VRRP virtual addresses and connection state sync (src/platform/ha.ts). */
  readonly ha: HaEngine;
  /**
   * The API process stops. What the platform runs for the appliance — daemons, tunnels, the reverse proxy, the
   * kernel's rules and routes — keeps running (ARCHITECTURE decision 9): the next start adopts it. Only this
   * process's own readers and sessions end.
   */
  close(): Promise<void>;
  /** Stops every daemon and tunnel the platform started or adopted (a test's teardown; uninstall). */
  stopServices?(): Promise<void>;
}
