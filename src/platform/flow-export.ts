/**
 * Flow export (NetFlow v9 / IPFIX): what the platform runs so the flows of traffic through the box reach the
 * administrator's collectors. `linux` runs Debian's softflowd, one supervised process per exporting interface
 * (src/platform/linux/softflowd.ts); `simulated` keeps the specification and says so; `freebsd` is not driven.
 */
import type { RuntimeConfig } from './daemon-runtime.js';

export type FlowProtocol = 'netflow9' | 'ipfix';

export interface FlowCollector {
  /** An IP address literal: the area resolves names through the outbound guard before the exporter sees them. */
  address: string;
  port: number;
}

export interface FlowExportSpec {
  protocol: FlowProtocol;
  collectors: FlowCollector[];
  /** A long flow is exported (and started anew) after this many seconds. */
  activeTimeoutSecs: number;
  /** A flow with no packet for this many seconds is exported. */
  inactiveTimeoutSecs: number;
  /** 1 = every packet; N = one packet in N (softflowd's periodic sampling; the collector must scale by N). */
  sampling: number;
  /** The interfaces whose traffic is exported (each flow is seen on the interfaces it crosses). */
  interfaces: string[];
  /** The appliance's data and runtime directories (the exporter's files live in the daemons' runtime tree). */
  runtime: RuntimeConfig;
}

export interface FlowExportInterfaceStatus {
  interface: string;
  /** The kernel's index of the interface, as the exported records carry it. */
  ifindex: number | null;
  running: boolean;
  pid: number | null;
  restarts: number;
  last_error: string | null;
}

export interface FlowExportStatus {
  exporter: 'softflowd' | 'simulated';
  /** Every configured interface has its exporter running (false when export is off). */
  running: boolean;
  interfaces: FlowExportInterfaceStatus[];
}

export interface FlowExporter {
  /** Runs the export as specified (null: stops it). Throws 503 naming the Debian package when the exporter is missing, 409 with the reason it refused. */
  apply(spec: FlowExportSpec | null): Promise<FlowExportStatus>;
  status(): Promise<FlowExportStatus>;
  /** The API process stops: lets go of the exporters without stopping them (linux: the next start adopts them). */
  close(): Promise<void>;
}
