/** The main navigation: one link per area, named as the area (screen readers and tests rely on the names). */
export interface NavItem {
  label: string;
  path: string;
  /** Shown only to an account holding it. */
  permission?: string;
}

export const NAV_ITEMS: readonly NavItem[] = [
  { label: 'Dashboard', path: '/' },
  { label: 'Rules', path: '/rules' },
  { label: 'NAT', path: '/nat' },
  { label: 'Aliases', path: '/aliases' },
  { label: 'Schedules', path: '/schedules' },
  { label: 'VPN', path: '/vpn' },
  { label: 'DNS', path: '/dns' },
  { label: 'DHCP', path: '/dhcp' },
  { label: 'IDS', path: '/ids' },
  { label: 'Multi-WAN', path: '/multiwan' },
  { label: 'Certificates', path: '/certificates' },
  { label: 'Networking', path: '/networking' },
  { label: 'Logs', path: '/logs' },
  { label: 'Diagnostics', path: '/diagnostics' },
  { label: 'Users', path: '/users' },
  { label: 'Configuration', path: '/configuration' },
  { label: 'System', path: '/system' },
  { label: 'Time service', path: '/time' },
  { label: 'Geo-IP', path: '/geoip' },
  { label: 'Plugins', path: '/plugins' },
  { label: 'Updates', path: '/updates' },
  { label: 'Reverse proxy', path: '/reverse-proxy' },
  { label: 'Assertions', path: '/assertions' },
  { label: 'Notifications', path: '/notifications', permission: 'settings:read' },
  { label: 'Flow export', path: '/flow-export', permission: 'settings:read' },
  { label: 'Cluster', path: '/cluster', permission: 'ha:manage' },
];
