/** Interfaces and routes of the host. On `linux` they are read with `ip -j` and changed with `ip -batch`. */
export interface InterfaceCounters {
  bytes_in: number;
  bytes_out: number;
  packets_in: number;
  packets_out: number;
  errors_in: number;
  errors_out: number;
}

export interface NetInterface {
  name: string;
  mac: string | null;
  mtu: number;
  up: boolean;
  loopback: boolean;
  /** First IPv4 address and its prefix length. */
  ipv4: string | null;
  ipv4_prefix: number | null;
  /** First global (non-link-local) IPv6 address. */
  ipv6: string | null;
  /** Every address of the interface except link-local ones, when the platform reads them all. */
  addresses?: string[];
  vlan_id: number | null;
  vlan_parent: string | null;
  description: string | null;
  counters: InterfaceCounters;
}

export interface SystemRoute {
  destination: string;
  gateway: string | null;
  interface: string | null;
  flags: string;
  metric: number | null;
  table: number;
}

/** What PUT /interfaces/config/{name} asks of the host. */
export interface InterfaceChange {
  ipv4_mode?: 'dhcp' | 'static' | 'none';
  ipv4_address?: string | null;
  ipv6_address?: string | null;
  mtu?: number;
  enabled?: boolean;
  description?: string | null;
}

/** A VLAN device as the host should have it (`vlan<ID>` on its parent). */
export interface VlanDevice {
  device: string;
  parent: string;
  vlan_id: number;
  mtu: number;
}

export interface ApplyOutcome {
  applied: boolean;
  message: string;
}

export interface Network {
  interfaces(): Promise<NetInterface[]>;
  routes(table: number): Promise<SystemRoute[]>;
  /** Applies an interface change to the host, when the platform may. */
  configureInterface(name: string, change: InterfaceChange): Promise<ApplyOutcome>;
  /** Creates (present) or removes a VLAN device, when the platform may. */
  setVlan(vlan: VlanDevice, present: boolean): Promise<ApplyOutcome>;
  /** Installs or withdraws a static route, when the platform may. */
  setStaticRoute(route: { destination: string; gateway: string; interface: string | null; metric: number; table: number }, present: boolean): Promise<ApplyOutcome>;
}
