/**
 * The configuration sections a template may own (docs/fleet.md, "Templates and desired state"): the appliance
 * collection (or settings section) its objects live in, and the fields that name an object there — how the agent
 * finds the local object a template object is.
 */
export interface SectionSpec {
  /** The collection's path (a create posts here, an object is `<path>/<id>`), or the settings section's path. */
  path: string;
  /** The fields naming an object, joined with `/` (a DNS host: `www/example.com/A`); none for a settings section. */
  key: readonly string[];
  /** A settings section: one document, owned field by field (updated, never created or deleted). */
  singleton?: true;
  /**
   * Write-only fields (the appliance seals them and never answers them), each with the field of the read that
   * tells whether one is stored. A template sets them only as `${secret:name}`.
   */
  secrets?: Readonly<Record<string, string>>;
  /** How a key value is compared, as the appliance's uniqueness compares it (a MAC's spelling, a name's case). */
  keyForm?: (value: string) => string;
  /**
   * A collection under each object of `path` (a WireGuard tunnel's peers: `<path>/<tunnel id>/<child>`): a template
   * object names its parent by the parent's `name` in `field`, since the parent's id differs per appliance.
   */
  parent?: { field: string; child: string };
  /** Fields the appliance sets itself (a blocklist's download status): a template object may not set them. */
  readOnly?: readonly string[];
  /** An object the appliance keeps (a built-in blocklist source): no longer owned, it stays as it is (never deleted). */
  kept?: (object: Record<string, unknown>) => boolean;
  /** A collection without an update (its routes create and delete only): an object that differs is deleted and created again. */
  replaced?: true;
  /** The request body of a write, when the appliance's write shape is not its read shape (template objects are in the read shape). */
  toBody?: (object: Record<string, unknown>, op: 'create' | 'update') => Record<string, unknown>;
}

const lowerCase = (value: string) => value.toLowerCase();
/** `AA-BB-…` and `aa:bb:…` are one client, as the DHCP reservations' own uniqueness check has it. */
export const macForm = (value: string) => value.toLowerCase().replace(/-/g, ':');

/**
 * A WireGuard peer as its routes take it: `allowed_ips` a comma-separated string (read back as a list),
 * `keepalive` (read back as `persistent_keepalive`); the public key names the peer and is fixed once created.
 */
function wireguardPeerBody(object: Record<string, unknown>, op: 'create' | 'update'): Record<string, unknown> {
  const { tunnel: _tunnel, public_key: publicKey, allowed_ips: allowed, persistent_keepalive: keepalive, ...rest } = object;
  return {
    ...rest,
    ...(op === 'create' ? { public_key: publicKey } : {}),
    ...(allowed === undefined ? {} : { allowed_ips: Array.isArray(allowed) ? allowed.join(',') : allowed }),
    ...(keepalive === undefined ? {} : { keepalive }),
  };
}

export const TEMPLATE_SECTIONS = {
  aliases: { path: '/api/v1/aliases', key: ['name'] },
  assertions: { path: '/api/v1/assertions', key: ['name'] },
  schedules: { path: '/api/v1/schedules', key: ['name'] },
  rules: { path: '/api/v1/rules', key: ['label'] },
  nat: { path: '/api/v1/nat', key: ['label'] },
  dns_hosts: { path: '/api/v1/dns/resolver/hosts', key: ['hostname', 'domain', 'record_type'] },
  dns_domains: { path: '/api/v1/dns/resolver/domains', key: ['domain'] },
  dns_resolver: { path: '/api/v1/dns/resolver/config', key: [], singleton: true },
  dns_acls: { path: '/api/v1/dns/resolver/acls', key: ['network'] },
  dns_blocklists: {
    path: '/api/v1/dns/blocklists', key: ['name'], keyForm: lowerCase,
    readOnly: ['built_in', 'last_updated', 'last_sha256', 'rule_count', 'last_error', 'names_active', 'last_result'],
    kept: (object) => object.built_in === true,
  },
  dns_whitelist: { path: '/api/v1/dns/whitelist', key: ['pattern'], keyForm: lowerCase, replaced: true },
  dns_customblocks: { path: '/api/v1/dns/customblocks', key: ['pattern'], keyForm: lowerCase, replaced: true },
  dhcp_settings: { path: '/api/v1/dhcp/v4/config', key: [], singleton: true },
  dhcp_subnets: { path: '/api/v1/dhcp/v4/subnets', key: ['network'] },
  dhcp_ddns: { path: '/api/v1/dhcp/ddns', key: [], singleton: true, secrets: { tsig_secret: 'tsig_secret_set' } },
  dhcp_reservations: { path: '/api/v1/dhcp/v4/reservations', key: ['mac_address'], keyForm: macForm },
  time_settings: { path: '/api/v1/time/config', key: [], singleton: true },
  time_sources: { path: '/api/v1/time/sources', key: ['address'], keyForm: lowerCase },
  syslog: { path: '/api/v1/settings/syslog', key: [], singleton: true },
  ipsec: { path: '/api/v1/vpn/ipsec', key: ['name'], keyForm: lowerCase, secrets: { psk: 'has_psk' } },
  wg_peers: {
    path: '/api/v1/vpn/wg', key: ['tunnel', 'public_key'], parent: { field: 'tunnel', child: 'peers' },
    secrets: { preshared_key: 'has_preshared_key' }, toBody: wireguardPeerBody,
  },
} as const satisfies Record<string, SectionSpec>;
export type TemplateSection = keyof typeof TEMPLATE_SECTIONS;

export const sectionSpec = (section: string): SectionSpec | undefined =>
  Object.hasOwn(TEMPLATE_SECTIONS, section) ? TEMPLATE_SECTIONS[section as TemplateSection] : undefined;

/** An object's name within its section: its key fields, joined with `/`; a settings section's one document is named by the section. */
export function objectName(section: string, object: Record<string, unknown>): string {
  const spec = sectionSpec(section);
  if (spec?.singleton) return section;
  const form = spec?.keyForm ?? ((value: string) => value);
  return (spec?.key ?? ['name']).map((field) => form(String(object[field]))).join('/');
}

/** The section whose collection (or settings section) an operation's path is in. */
export const sectionOfPath = (path: string): TemplateSection | undefined =>
  (Object.keys(TEMPLATE_SECTIONS) as TemplateSection[]).find((section) => path === TEMPLATE_SECTIONS[section].path || path.startsWith(`${TEMPLATE_SECTIONS[section].path}/`));
