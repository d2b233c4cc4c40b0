/**
 * The intermediate model a foreign configuration is mapped into: plain objects with clear kind names,
 * independent of how the Bulwark areas that will own them store their objects. The writer turns each into a
 * store object (through the owning area's declared collection when one declares the kind, otherwise as an
 * intermediate `thirdparty.<kind>` object).
 */
export type MappedKind =
  | 'interface' | 'vlan' | 'gateway' | 'route' | 'alias' | 'rule' | 'nat_port_forward' | 'nat_outbound'
  | 'dhcp_static_mapping' | 'dns_host_override' | 'wg_tunnel' | 'wg_peer' | 'imported_user';

export const MAPPED_KINDS: readonly MappedKind[] = [
  'interface', 'vlan', 'gateway', 'route', 'alias', 'rule', 'nat_port_forward', 'nat_outbound',
  'dhcp_static_mapping', 'dns_host_override', 'wg_tunnel', 'wg_peer', 'imported_user',
];

/** Fields holding secrets in the intermediate model (sealed when stored, redacted in previews and exports). */
export const MAPPED_SECRETS: Partial<Record<MappedKind, readonly string[]>> = {
  wg_tunnel: ['private_key'],
  wg_peer: ['preshared_key'],
};

/** An address match: `any`, an address or CIDR, or an alias name; `invert` for "not". */
export interface AddressMatch {
  address: string;
  port: string | null;
  invert: boolean;
}

export interface MappedObject {
  kind: MappedKind;
  /** A stable reference inside the plan (`wg_tunnel:<uuid>`), used by objects that point at others. */
  ref: string;
  /** Where in the source file it came from, e.g. `filter/rule[3]`. */
  source: string;
  data: Record<string, unknown>;
  /** Fields whose value is the ref of another mapped object (resolved to its id when stored). */
  links?: Record<string, string>;
  /** Approximations made while mapping, shown in the preview. */
  notes?: string[];
}

export interface SkippedElement {
  source: string;
  element: string;
  reason: string;
}

export interface MappingPlan {
  kind: 'opnsense' | 'pfsense';
  version: string | null;
  system: { hostname: string | null; domain: string | null; dns_servers: string[]; timezone: string | null };
  interfaces_found: string[];
  objects: MappedObject[];
  skipped: SkippedElement[];
}
