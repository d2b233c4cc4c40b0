/** One entry of the packet filter's state table, as the multi-WAN and AI areas see it. */
export interface FlowState {
  id: number;
  protocol: string;
  src: string;
  dst: string;
  iface: string | null;
  rtable: number | null;
  bytes: number;
  packets: number;
  age_secs: number;
  /** TCP state text (e.g. ESTABLISHED, SYN_SENT), or null for connectionless protocols. */
  state: string | null;
  /** Label of the rule that created the state, when known. */
  label: string | null;
}

export interface ProbeResult {
  success: boolean;
  rtt_ms: number | null;
  error: string | null;
}

export interface ProbeTarget {
  kind: 'icmp' | 'tcp' | 'http' | 'dns';
  target: string;
  port: number | null;
  expect: string | null;
  timeout_ms: number;
  interface: string;
}

/** Policy routing: FIBs, interface pinning, policy anchors, gateway probes and the state table. */
export interface RoutingControl {
  fibs(): Promise<{ net_fibs: number }>;
  /** Arranges for `fibs` routing tables; answers whether it was already so and whether a reboot is scheduled. */
  enableFibs(fibs: number, reboot: boolean): Promise<{ already_enabled: boolean; reboot_scheduled: boolean; net_fibs: number }>;
  pinInterface(interfaceName: string, fib: number): Promise<void>;
  /** Loads the given anchors (name → rule text), replacing their previous contents. */
  loadAnchors(anchors: Record<string, string>): Promise<void>;
  /** The text each anchor holds now. */
  anchors(): Promise<Record<string, string>>;
  probe(target: ProbeTarget): Promise<ProbeResult>;
  flows(limit: number): Promise<FlowState[]>;
  /** Kills every state created by a rule with this label; answers how many. */
  killStates(label: string): Promise<number>;
}
