/**
 * The 37-permission catalogue in bit order (wire-format.md §1.12): the position of a permission is its bit
 * in the 64-bit mask carried by access tokens. Never reorder; only append.
 */
export const PERMISSIONS = [
  'dashboard:view', 'rules:read', 'rules:write', 'nat:read', 'nat:write', 'vpn:read', 'vpn:write',
  'geoip:read', 'geoip:write', 'ids:read', 'ids:write', 'dns:read', 'dns:write', 'dhcp:read', 'dhcp:write',
  'aliases:read', 'aliases:write', 'interfaces:read', 'interfaces:write', 'connections:view', 'logs:view',
  'users:read', 'users:write', 'settings:read', 'settings:write', 'plugins:read', 'plugins:write',
  'updates:read', 'updates:install', 'backup:read', 'backup:write', 'system:reboot', 'proxy:read',
  'proxy:write', 'multiwan:read', 'multiwan:write', 'ha:manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];
/** What a route requires: a permission, any valid credential, or nothing. */
export type RouteAccess = Permission | 'authenticated' | 'public';

const PERMISSION_SET = new Set<string>(PERMISSIONS);
export const isPermission = (value: string): value is Permission => PERMISSION_SET.has(value);

export const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  'dashboard:view': 'View dashboard widgets, status, metrics and the live stream',
  'rules:read': 'List and read packet-filter rules and schedules',
  'rules:write': 'Create, change, delete, reorder and apply packet-filter rules and schedules',
  'nat:read': 'List and read NAT rules',
  'nat:write': 'Create, change, delete and reorder NAT rules',
  'vpn:read': 'Read WireGuard tunnels, peers and IPsec SAs',
  'vpn:write': 'Change and control WireGuard tunnels, peers and IPsec SAs',
  'geoip:read': 'Read geo-IP rules and look up addresses',
  'geoip:write': 'Change geo-IP rules and refresh geo data',
  'ids:read': 'Read IDS/IPS configuration, alerts, rulesets and rules',
  'ids:write': 'Change IDS/IPS configuration, rulesets, rule overrides and suppressions',
  'dns:read': 'Read DNS resolver, blocklist and forwarding configuration and status',
  'dns:write': 'Change and control the DNS resolver and blocklists',
  'dhcp:read': 'Read DHCP configuration, leases and status',
  'dhcp:write': 'Change and control the DHCP server',
  'aliases:read': 'List and read aliases',
  'aliases:write': 'Create, change and delete aliases',
  'interfaces:read': 'Read interfaces, VLANs, routes and dynamic DNS',
  'interfaces:write': 'Change interfaces, VLANs, routes and dynamic DNS',
  'connections:view': 'View the live state table and blocked traffic',
  'logs:view': 'Read packet-filter, audit and system logs',
  'users:read': 'Read users, roles and the audit log',
  'users:write': 'Create, change and delete users, roles and API keys',
  'settings:read': 'Read system settings, OAuth providers and AI configuration',
  'settings:write': 'Change system settings, OAuth providers and AI configuration',
  'plugins:read': 'Read plugins and their configuration',
  'plugins:write': 'Enable, disable and configure plugins',
  'updates:read': 'Check for and view updates',
  'updates:install': 'Install updates',
  'backup:read': 'Read configuration history and backups',
  'backup:write': 'Create, restore, import and export configuration',
  'system:reboot': 'Reboot or shut down the appliance',
  'proxy:read': 'Read reverse-proxy configuration and status',
  'proxy:write': 'Change and control the reverse proxy',
  'multiwan:read': 'Read multi-WAN instances, gateways, groups and policies',
  'multiwan:write': 'Change multi-WAN configuration and apply it',
  'ha:manage': 'High-availability demote, snapshot and failover',
};

export function toMask(permissions: Iterable<Permission>): bigint {
  let mask = 0n;
  for (const permission of permissions) mask |= 1n << BigInt(PERMISSIONS.indexOf(permission));
  return mask;
}

export function fromMask(mask: bigint): Permission[] {
  return PERMISSIONS.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
}

const ALL: readonly Permission[] = PERMISSIONS;
const except = (excluded: Permission[]) => ALL.filter((p) => !excluded.includes(p));

/**
 * What the fleet agent's API key on an appliance may do: every section a template can own (agent/section-catalogue.ts)
 * and commit-confirm, nothing more. `settings` is for time sources and remote syslog.
 */
export const FLEET_AGENT_PERMISSIONS: readonly Permission[] = [
  'dashboard:view', 'rules:read', 'rules:write', 'aliases:read', 'aliases:write', 'nat:read', 'nat:write', 'dns:read', 'dns:write',
  'dhcp:read', 'dhcp:write', 'vpn:read', 'vpn:write', 'settings:read', 'settings:write', 'backup:read', 'backup:write',
];

/**
 * Built-in roles: the specification's table, plus two for locked accounts no person holds (`system` for the daemon
 * and cluster peers, `fleet-agent` for the owner of the agent's key after an enrolment at start). Immutable.
 */
export const BUILTIN_ROLES: Record<'admin' | 'operator' | 'viewer' | 'system' | 'fleet-agent', readonly Permission[]> = {
  admin: ALL,
  operator: except(['users:write', 'settings:write', 'updates:install', 'system:reboot', 'ha:manage']),
  viewer: ALL.filter(
    (p) => (p.endsWith(':read') || p.endsWith(':view')) && !['users:read', 'settings:read', 'backup:read'].includes(p),
  ),
  system: ['ha:manage'],
  'fleet-agent': FLEET_AGENT_PERMISSIONS,
};
