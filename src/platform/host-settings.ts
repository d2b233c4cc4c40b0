/**
 * The host's own settings (hostname, timezone, login texts, sshd, resolvers, state-table sysctls, kernel
 * console): what the system, DNS and settings areas ask the platform to put in force. `linux` and `freebsd`
 * write the host's files under their host root (`--host-root`, default `/`), check them with their own tool,
 * reload what reads them and read the result back; a failure answers 409 and leaves the previous files in
 * place. `simulated` renders the same files into the data directory and says so.
 */
export interface HostGeneral {
  /** One DNS label; empty leaves the host's name alone. */
  hostname: string;
  domain: string;
  /** A zone of the system zone database (checked by the area). */
  timezone: string;
}

export interface HostBanner {
  login_banner: string;
  motd: string;
}

export interface HostSsh {
  enabled: boolean;
  port: number;
  password_auth: boolean;
  permit_root_login: boolean;
}

export interface HostConsole {
  kind: 'video' | 'serial' | 'dual';
  baud: number;
}

export interface HostResolvers {
  servers: string[];
  /** Search domains (the general section's domain). */
  search: string[];
}

/** The state-table tunables, in states and seconds. */
export const STATE_TABLE_FIELDS = ['max_states', 'tcp_established', 'udp', 'udp_stream', 'icmp'] as const;
export type StateTableField = (typeof STATE_TABLE_FIELDS)[number];
/** What the administrator set (a field never set is left at the kernel's value). */
export type StateTableTuning = Partial<Record<StateTableField, number>>;
/** The tunables of a stored pf-tuning section (other keys, e.g. an older release's, are left out). */
export function stateTableTuningOf(data: Record<string, unknown>): StateTableTuning {
  return Object.fromEntries(STATE_TABLE_FIELDS.filter((field) => typeof data[field] === 'number').map((field) => [field, data[field]]));
}
/** What the kernel holds (null: the platform cannot read it). */
export type StateTableLive = Record<StateTableField, number | null>;

/** What one apply did, for the answer. */
export interface HostApplied {
  /** The files written: host paths, or data-directory paths on `simulated`. */
  files: string[];
  /** Set when the change is not (fully) in force yet: rendered only, applies at next boot, daemon not running. */
  warning: string | null;
  requires_reboot: boolean;
}

export interface HostSettings {
  /** `host`: the running system is changed; `data-directory`: the files are only rendered (simulated). */
  readonly target: 'host' | 'data-directory';
  general(desired: HostGeneral): Promise<HostApplied>;
  banner(desired: HostBanner): Promise<HostApplied>;
  /** The sshd drop-in (the area first refuses a lock-out: src/areas/system/ssh-lockout.ts). */
  ssh(desired: HostSsh): Promise<HostApplied>;
  /** Accounts allowed to administer the host (root, the sudo/wheel group) that have at least one authorized SSH key. */
  sshKeyHolders(): Promise<string[]>;
  console(desired: HostConsole): Promise<HostApplied>;
  resolvers(desired: HostResolvers): Promise<HostApplied>;
  /** Puts the set tunables in force (409 naming a value the kernel refuses, the previous values restored). */
  stateTable(desired: StateTableTuning): Promise<HostApplied & { live: StateTableLive }>;
  readStateTable(): Promise<StateTableLive>;
}

/** Where a platform's host settings land: the host root for linux/freebsd, the data directory for simulated. */
export interface HostSite {
  dataDir: string;
  /** Where a failed tool's own output goes (never to the client). */
  log: (detail: string) => void;
}
