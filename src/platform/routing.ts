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
  /**
   * Special addresses (loopback, private, …) a tcp, http or dns probe may connect to: the administrator's
   * outbound allow-list and the gateway's own next hop (src/areas/multiwan/gateway-monitor.ts). ICMP is not guarded.
   */
  allow_list?: readonly string[];
}

/* ---- the Linux multi-WAN layout: a table of its own, marks, rules and gateway tables (compile-nftables.ts) ---- */

export const MWAN_TABLE = 'bulwark_mwan';
export const GATEWAY_TABLE_BASE = 0x10000;
export const GATEWAY_MARK_BIT = 0x10000;
/** ip rule priorities: the main-table escape, the marks in their order, then instance members. */
export const RULE_PRIORITY = { suppress: 14990, marks: 15000, sources: 15800, members: 15900, last: 15999 } as const;
/** Conntrack marks naming a rule's label: below the packet filter's schedule marks (top bit set). */
export const LABEL_MARK_BASE = 0x15000000;
export const MAIN_TABLE = 254;

export interface IpRuleSpec {
  priority: number;
  /** The selector words: `fwmark 0x10000`, `iif eth1`, `from 192.0.2.1`. */
  selector: string[];
  table: number;
  /** Words after the table (`suppress_prefixlength 0`). */
  suffix?: string[];
}

export interface TableRoute {
  table: number;
  family: 4 | 6;
  destination: 'default';
  via: string;
  dev: string;
}

export interface GatewayTable {
  gateway_id: string;
  table: number;
  interface: string;
  next_hop: string;
  family: 4 | 6;
}

export interface LinuxRoutingPlan {
  /** The script `nft -f -` loads: it replaces `table inet bulwark_mwan` in one transaction. */
  nft: string;
  /** The rule lines of the chain in order (for a preview comparing by meaning). */
  ruleLines: string[];
  rules: IpRuleSpec[];
  routes: TableRoute[];
  gateways: GatewayTable[];
  /** Label (`pbr:<id>`, `leak:<id>`) → conntrack mark and the table its traffic takes. */
  labels: Record<string, { mark: number; table: number }>;
}

/** The `ip rule` words after `add` (selector, table, priority). */
export const ruleWords = (rule: IpRuleSpec): string[] => [...rule.selector, 'lookup', rule.table === MAIN_TABLE ? 'main' : String(rule.table), ...(rule.suffix ?? []), 'priority', String(rule.priority)];

/** One command apply runs, with the text it is fed (what POST /multiwan/preview shows). */
export interface RoutingCommand {
  command: string;
  input: string;
}

/**
 * Policy routing: FIBs, interface pinning, policy anchors (pf) or a marks-and-rules plan (nftables), gateway
 * probes and the state table.
 */
export interface RoutingControl {
  /** Which compilation this platform loads: pf anchors, or the nftables marks and ip rules of compile-nftables.ts. */
  readonly dialect: 'pf' | 'nftables';
  /** nftables: the commands applying this plan runs, read against the kernel's state now. */
  commandsFor(plan: LinuxRoutingPlan): Promise<RoutingCommand[]>;
  /**
   * nftables: replaces the multi-WAN table in one nft transaction, then the rules and gateway routes in one
   * batch per family; when any step is refused the previous table, rules and routes are put back (409).
   */
  applyPlan(plan: LinuxRoutingPlan): Promise<void>;
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
