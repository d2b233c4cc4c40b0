/** The files of one appliance's charon, written by the VPN area before `apply`. */
export interface IpsecFiles {
  /** strongswan.conf of this charon (its plugins and its own VICI socket). */
  strongswanConf: string;
  /** Directory of swanctl.conf and its x509/, x509ca/ and private/ subdirectories. */
  swanctlDir: string;
  viciSocket: string;
  /** Written with the supervised charon's process id. */
  pidFile: string;
}

/** How ESP is carried: by the kernel, or by strongSwan's userspace kernel-libipsec (a TUN device) where the kernel has no ESP. */
export type IpsecDataPath = 'kernel' | 'libipsec';

export interface IpsecChildState {
  name: string;
  /** charon's CHILD_SA state (`INSTALLED`, `REKEYING`, …). */
  state: string;
  mode: string;
  protocol: string;
  encap: boolean;
  spi_in: string | null;
  spi_out: string | null;
  bytes_in: number;
  bytes_out: number;
  packets_in: number;
  packets_out: number;
  local_ts: string[];
  remote_ts: string[];
}

export interface IpsecSaState {
  /** The connection name (Bulwark's `bulwark-<sa id>`). */
  name: string;
  /** charon's IKE_SA state (`CONNECTING`, `ESTABLISHED`, …). */
  ike_state: string;
  local_host: string | null;
  remote_host: string | null;
  established_secs: number | null;
  children: IpsecChildState[];
}

export interface IpsecDaemonStatus {
  running: boolean;
  backend: 'charon' | 'simulated';
  data_path: IpsecDataPath | null;
  pid: number | null;
  restarts: number;
  last_error: string | null;
  sas: IpsecSaState[];
}

/**
 * One strongSwan charon per appliance, supervised in the foreground, configured through swanctl over its own
 * VICI socket. Failures throw HttpErrors: 503 naming the Debian package of what is missing, 409 with the reason
 * charon or swanctl gave; charon keeps the configuration it had loaded.
 */
export interface IpsecControl {
  /** The charon program's own settings section (`charon-systemd` on Debian, `charon` elsewhere). */
  readonly daemon: string;
  /** How ESP is carried on this host (decides the plugins charon loads). */
  dataPath(): Promise<IpsecDataPath>;
  /** charon's kernel-interface plugins for each data path on this OS. */
  readonly kernelPlugins: Record<IpsecDataPath, string[]>;
  /** Starts charon when it does not run and loads every connection and secret (`swanctl --load-all`). */
  apply(files: IpsecFiles): Promise<void>;
  stop(): Promise<void>;
  /** The API process stops: charon keeps running with its SAs and is adopted at the next start. */
  release(): void;
  status(): Promise<IpsecDaemonStatus>;
}
