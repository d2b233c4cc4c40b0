/** One peer as the interface is given it: keys in clear (never logged). */
export interface WireguardPeerSpec {
  public_key: string;
  preshared_key: string | null;
  allowed_ips: string[];
  endpoint: string | null;
  persistent_keepalive: number | null;
}

/** What a WireGuard interface is brought up with: the tunnel and every peer, keys in clear (never logged). */
export interface WireguardInterfaceSpec {
  interface: string;
  private_key: string;
  public_key: string;
  listen_port: number;
  /** The tunnel's own address with prefix (`10.8.0.1/24`). */
  address: string;
  mtu: number | null;
  peers: WireguardPeerSpec[];
  /** The `wg setconf` file of the interface, rendered through the WireGuard writer (keys, port, peers). */
  setconf: string;
  /**
   * Where that file is written (0600, in a 0700 directory): `wg` reads keys from files, never from its
   * arguments. A peer's preshared key is written beside it for the moment `wg set` reads it.
   */
  setconfFile: string;
}

export interface WireguardPeerStatus {
  public_key: string;
  endpoint: string | null;
  allowed_ips: string;
  /** Seconds since the last handshake; -1 = never. */
  latest_handshake_secs_ago: number;
  transfer_rx: number;
  transfer_tx: number;
  persistent_keepalive: number | null;
}

/** How the interface is provided, and the supervision of the userspace implementation when it is the one. */
export interface WireguardBackendStatus {
  /** `kernel` (Linux module or FreeBSD if_wg), `wireguard-go` (supervised userspace process) or `simulated`. */
  backend: 'kernel' | 'wireguard-go' | 'simulated';
  /** The wireguard-go process, when it runs. */
  pid: number | null;
  /** Automatic restarts of wireguard-go after it died. */
  restarts: number;
  /** Why the interface is not up as configured (wireguard-go died, a restart failed); null while all is well. */
  last_error: string | null;
}

export interface WireguardInterfaceStatus extends Partial<WireguardBackendStatus> {
  running: boolean;
  interface: string;
  listen_port?: number;
  public_key?: string;
  peers: WireguardPeerStatus[];
}

/**
 * Brings WireGuard interfaces up and down, applies peer changes to a running interface, and reads their live
 * state (`wg show <if> dump`). Failures throw HttpErrors: 503 naming the Debian package of a missing tool, 409
 * with the reason a tool refused.
 */
export interface WireguardControl {
  /** Creates the interface when it does not exist and applies keys, port, peers, address, MTU and routes. */
  up(spec: WireguardInterfaceSpec): Promise<void>;
  /** Brings a running interface's peers (and their routes) to the spec with `wg set`, leaving unchanged peers alone. */
  syncPeers(spec: WireguardInterfaceSpec): Promise<void>;
  down(interfaceName: string): Promise<void>;
  status(interfaceName: string): Promise<WireguardInterfaceStatus>;
  /** Takes every interface this driver brought up down (tests, uninstall). */
  closeAll(): Promise<void>;
  /**
   * The API process stops: every interface stays up and its userspace process (wireguard-go) keeps running, to be
   * adopted by the next start (ARCHITECTURE decision 9). No watching or restarting from here on.
   */
  release(): void;
}
