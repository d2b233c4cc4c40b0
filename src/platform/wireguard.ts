/** What a WireGuard interface is brought up with: the tunnel and every peer, keys in clear (never logged). */
export interface WireguardInterfaceSpec {
  interface: string;
  private_key: string;
  public_key: string;
  listen_port: number;
  address: string;
  mtu: number | null;
  peers: {
    public_key: string;
    preshared_key: string | null;
    allowed_ips: string[];
    endpoint: string | null;
    persistent_keepalive: number | null;
  }[];
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

export interface WireguardInterfaceStatus {
  running: boolean;
  interface: string;
  listen_port?: number;
  public_key?: string;
  peers: WireguardPeerStatus[];
}

/** Brings WireGuard interfaces up and down and reads their live state (`wg show <if> dump` on linux). */
export interface WireguardControl {
  up(spec: WireguardInterfaceSpec): Promise<void>;
  down(interfaceName: string): Promise<void>;
  status(interfaceName: string): Promise<WireguardInterfaceStatus>;
}
