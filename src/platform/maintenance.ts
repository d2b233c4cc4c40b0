/** OS/package updates and power control of the appliance. */
export interface OsUpdateStatus {
  os_version: string;
  pending_os_updates: boolean;
  pending_packages: string[];
  needs_reboot: boolean;
}

/** One change an upgrade would make (apt: `Inst name [old] (new …)`, `Remv name [old]`). */
export interface PackageChange {
  action: 'upgrade' | 'install' | 'remove';
  name: string;
  from: string | null;
  to: string | null;
}

export interface PowerRequest {
  action: 'reboot' | 'shutdown';
  at: string;
  delay_seconds: number;
  reason: string;
}

export interface Maintenance {
  osStatus(): Promise<OsUpdateStatus>;
  /** Refreshes the package index and reports what is pending. */
  checkUpdates(): Promise<{ status: OsUpdateStatus; message: string }>;
  /** What installing would change, computed without changing anything (apt-get -s). */
  previewUpdates(): Promise<{ changes: PackageChange[]; message: string }>;
  /** Installs every pending update. */
  installUpdates(): Promise<{ status: OsUpdateStatus; installed: string[]; message: string }>;
  /** Schedules a reboot or shutdown after a delay; the simulation only records it. */
  power(request: PowerRequest): Promise<{ message: string; executed: boolean }>;
  /** Power requests seen by this process (newest last). */
  powerRequests(): PowerRequest[];
}
