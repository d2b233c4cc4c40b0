/** The stored kinds of the DNS area. */
export const DNS_KINDS = {
  blocklist: 'dns_blocklist',
  whitelist: 'dns_whitelist',
  customblock: 'dns_customblock',
  host: 'dns_host',
  domain: 'dns_domain',
  acl: 'dns_acl',
  resolver: 'dns_resolver',
  schedule: 'dns_blocklist_schedule',
  system: 'dns_system',
} as const;
