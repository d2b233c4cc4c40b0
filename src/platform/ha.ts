/**
 * High availability: what the platform runs so two appliances share virtual addresses (VRRP) and their
 * connection state. `linux` runs Debian's keepalived and conntrackd (src/platform/linux/ha.ts); `simulated` keeps
 * the specification and says so; `freebsd` sets CARP addresses and pfsync with `ifconfig` (src/platform/freebsd/carp.ts).
 */
import type { RuntimeConfig } from './daemon-runtime.js';

export type HaRole = 'primary' | 'secondary';

export interface VrrpAddress {
  vhid: number;
  virtualIp: string;
  prefix: number;
  interface: string;
  /** VRRPv2 simple password (at most 8 characters on the wire), opened from its sealed form for the renderer only. */
  password: string;
}

export interface StateSyncSpec {
  syncInterface: string;
  /** The peer's address on the sync link (FTFW over unicast UDP). */
  syncPeer: string;
}

export interface HaSpec {
  role: HaRole;
  addresses: VrrpAddress[];
  /** conntrackd's FTFW state sync, or null when /cluster/pfsync is off. */
  stateSync: StateSyncSpec | null;
  /** Priority adjustment: positive lowers it (240 = demoted, gives the addresses away), negative raises it (promoted). */
  demotion: number;
  /** Number of failing health checks (each lowers the priority by HEALTH_WEIGHT). */
  failingChecks: number;
  runtime: RuntimeConfig;
}

export interface HaStatus {
  /** none: the platform drives no high availability (a standalone node there runs nothing). */
  engine: 'keepalived' | 'carp' | 'simulated' | 'none';
  running: boolean;
  /** master: this node holds every virtual address; backup: none of them; null when there is nothing to hold. */
  vrrp_state: 'master' | 'backup' | 'mixed' | null;
  state_sync: {
    running: boolean; internal_entries: number | null; external_entries: number | null; errors: number | null; last_error: string | null;
    /** Bytes conntrackd sent to and received from the peer on the sync link (null when it does not say). */
    bytes_sent: number | null; bytes_received: number | null;
  } | null;
  last_error: string | null;
}

export interface HaEngine {
  /** Runs VRRP (and state sync) as specified; null stops both. Throws 503 naming the Debian package, 409 with the reason. */
  apply(spec: HaSpec | null): Promise<HaStatus>;
  /** Changes only the priority adjustments (no restart: keepalived watches the track files). */
  adjust(demotion: number, failingChecks: number): Promise<void>;
  status(): Promise<HaStatus>;
  /** The VRRP state as keepalived's notify hook last reported it (cheap: no process is asked); null when none runs. */
  vrrpState(): HaStatus['vrrp_state'];
  /** Lets go of the daemons without stopping them (they outlive the API and are adopted at the next start). */
  close(): Promise<void>;
}
