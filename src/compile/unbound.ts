/**
 * Renders the resolver configuration for Unbound. Pure: configuration in, text out (golden-tested, and
 * checked with `unbound-checkconf` where it is installed).
 */

export interface UnboundResolver {
  listen_interfaces: string[];
  port: number;
  dnssec: boolean;
  dhcp_domain: string;
  local_zone_type: string;
  outgoing_interface: string | null;
  num_threads: number;
  msg_cache_size: string | number;
  rrset_cache_size: string | number;
  cache_max_ttl: number;
  cache_min_ttl: number;
  prefetch: boolean;
  prefetch_key: boolean;
  infra_host_ttl: number;
  unwanted_reply_threshold: number;
  log_queries: boolean;
  log_replies: boolean;
  log_verbosity: number;
  hide_identity: boolean;
  hide_version: boolean;
  rebind_protection: boolean;
  private_addresses: string[];
  forwarding_enabled: boolean;
  forwarding_servers: string[];
  use_system_nameservers: boolean;
  dot_enabled: boolean;
  dot_upstream: string[];
  custom_options: string;
}

export interface UnboundHost {
  hostname: string;
  domain: string;
  record_type: string;
  value: string;
  mx_priority?: number | null;
  enabled: boolean;
}

export interface UnboundDomainOverride {
  domain: string;
  server: string;
  enabled: boolean;
}

export interface UnboundAcl {
  network: string;
  action: 'allow' | 'deny' | 'refuse' | 'allow_snoop';
}

export interface UnboundInput {
  resolver: UnboundResolver;
  hosts: UnboundHost[];
  domains: UnboundDomainOverride[];
  acls: UnboundAcl[];
  /** DHCP leases and reservations to publish when `register_dhcp` is on. */
  dhcpNames: { hostname: string; ip: string }[];
  /** Nameservers of the host, used when `use_system_nameservers` is on. */
  systemNameservers: string[];
  /** Files of `local-zone` lines (blocklists, whitelist, custom blocks), included in the server clause. */
  includes: string[];
  paths: { directory: string; pidfile: string; controlSocket: string; trustAnchorFile: string; logfile: string };
}

/** Options that custom_options may not set: they would move files, drop privileges or open control. */
const RESERVED_OPTIONS = [
  'include', 'include-toplevel', 'chroot', 'username', 'directory', 'pidfile', 'logfile', 'auto-trust-anchor-file',
  'trust-anchor-file', 'module-config', 'python-script', 'dynlib-file', 'remote-control', 'control-enable',
  'control-interface', 'control-port', 'control-use-cert', 'server-key-file', 'server-cert-file',
  'control-key-file', 'control-cert-file', 'tls-service-key', 'tls-service-pem',
];

/** The reserved option a custom_options text sets, if any. */
export function reservedCustomOption(text: string): string | null {
  for (const line of text.split('\n')) {
    const key = /^\s*([A-Za-z0-9-]+)\s*:/.exec(line)?.[1]?.toLowerCase();
    if (key && RESERVED_OPTIONS.includes(key)) return key;
  }
  return null;
}

const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);

/** `10.0.0.1:5353` or `[::1]:53` → Unbound's `addr@port`. */
export function forwardAddress(server: string): string {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  if (bracketed) return bracketed[2] ? `${bracketed[1]}@${bracketed[2]}` : bracketed[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(server);
  if (v4) return `${v4[1]}@${v4[2]}`;
  return server;
}

/** The `local-data` lines of one host override. */
export function hostRecords(host: UnboundHost): string[] {
  const name = fqdn(host.domain ? `${host.hostname}.${host.domain}` : host.hostname);
  const type = host.record_type.toUpperCase();
  switch (type) {
    case 'A':
    case 'AAAA':
      return [`local-data: ${quote(`${name} 300 IN ${type} ${host.value}`)}`, `local-data-ptr: ${quote(`${host.value} ${name}`)}`];
    case 'MX':
      return [`local-data: ${quote(`${name} 300 IN MX ${host.mx_priority ?? 10} ${fqdn(host.value)}`)}`];
    case 'TXT': {
      // TXT strings are at most 255 bytes each: longer text is split into several strings.
      const chunks = host.value.match(/[\s\S]{1,255}/g) ?? [''];
      return [`local-data: '${name} 300 IN TXT ${chunks.map((c) => `"${c.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(' ')}'`];
    }
    default:
      return [`local-data: ${quote(`${name} 300 IN ${type} ${fqdn(host.value)}`)}`];
  }
}

export function renderUnbound(input: UnboundInput): string {
  const { resolver, paths } = input;
  const lines: string[] = ['# Rendered by Bulwark from the DNS resolver configuration. Changes here are overwritten.', 'server:'];
  const set = (key: string, value: string | number) => lines.push(`    ${key}: ${value}`);
  set('directory', quote(paths.directory));
  set('chroot', '""');
  set('username', '""');
  set('pidfile', quote(paths.pidfile));
  set('use-syslog', 'no');
  set('logfile', quote(paths.logfile));
  set('verbosity', resolver.log_verbosity);
  set('num-threads', resolver.num_threads);
  const listen = resolver.listen_interfaces.length === 0 ? ['0.0.0.0'] : resolver.listen_interfaces;
  for (const address of listen) set('interface', address);
  set('port', resolver.port);
  if (resolver.outgoing_interface) set('outgoing-interface', resolver.outgoing_interface);
  set('msg-cache-size', String(resolver.msg_cache_size));
  set('rrset-cache-size', String(resolver.rrset_cache_size));
  set('cache-max-ttl', resolver.cache_max_ttl);
  set('cache-min-ttl', resolver.cache_min_ttl);
  set('prefetch', yesNo(resolver.prefetch));
  set('prefetch-key', yesNo(resolver.prefetch_key));
  set('infra-host-ttl', resolver.infra_host_ttl);
  set('unwanted-reply-threshold', resolver.unwanted_reply_threshold);
  set('log-queries', yesNo(resolver.log_queries));
  set('log-replies', yesNo(resolver.log_replies));
  set('hide-identity', yesNo(resolver.hide_identity));
  set('hide-version', yesNo(resolver.hide_version));
  set('qname-minimisation', 'yes');
  set('module-config', quote(resolver.dnssec ? 'validator iterator' : 'iterator'));
  if (resolver.dnssec) set('auto-trust-anchor-file', quote(paths.trustAnchorFile));
  if (resolver.rebind_protection) {
    for (const network of resolver.private_addresses) set('private-address', network);
    // The appliance's own local names legitimately resolve to private addresses.
    if (resolver.dhcp_domain) set('private-domain', quote(resolver.dhcp_domain));
  }
  set('access-control', '127.0.0.0/8 allow');
  set('access-control', '::1/128 allow');
  for (const acl of input.acls) set('access-control', `${acl.network} ${acl.action}`);
  if (resolver.dhcp_domain) set('local-zone', `${quote(fqdn(resolver.dhcp_domain))} ${resolver.local_zone_type}`);
  for (const host of input.hosts.filter((h) => h.enabled)) for (const record of hostRecords(host)) lines.push(`    ${record}`);
  if (resolver.dhcp_domain) {
    for (const entry of input.dhcpNames) {
      const name = fqdn(`${entry.hostname}.${resolver.dhcp_domain}`);
      lines.push(`    local-data: ${quote(`${name} 300 IN A ${entry.ip}`)}`, `    local-data-ptr: ${quote(`${entry.ip} ${name}`)}`);
    }
  }
  for (const file of input.includes) set('include', quote(file));
  const custom = resolver.custom_options.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  if (custom.length > 0) {
    lines.push('    # custom options');
    for (const line of custom) lines.push(`    ${line}`);
  }
  lines.push('', 'remote-control:');
  set('control-enable', 'yes');
  set('control-interface', quote(paths.controlSocket));
  set('control-use-cert', 'no');
  for (const override of input.domains.filter((d) => d.enabled)) {
    lines.push('', 'forward-zone:');
    set('name', quote(fqdn(override.domain)));
    set('forward-addr', forwardAddress(override.server));
  }
  const upstream = resolver.dot_enabled
    ? resolver.dot_upstream
    : resolver.use_system_nameservers
      ? input.systemNameservers
      : resolver.forwarding_enabled
        ? resolver.forwarding_servers
        : [];
  if (upstream.length > 0) {
    lines.push('', 'forward-zone:');
    set('name', '"."');
    if (resolver.dot_enabled) set('forward-tls-upstream', 'yes');
    for (const server of upstream) set('forward-addr', resolver.dot_enabled ? server : forwardAddress(server));
    // With plain forwarders, fall back to full recursion when they fail; DoT must not leak in clear text.
    if (!resolver.dot_enabled) set('forward-first', 'yes');
  }
  return `${lines.join('\n')}\n`;
}

export type BlockAction = 'nxdomain' | 'nodata' | 'drop' | 'redirect' | 'passthru';

const ZONE_TYPES: Record<BlockAction, string> = {
  nxdomain: 'always_nxdomain',
  nodata: 'always_nodata',
  drop: 'deny',
  redirect: 'redirect',
  passthru: 'always_transparent',
};

/** One include file of `local-zone` lines: a blocklist, the whitelist (passthru) or the custom blocks. */
export function renderLocalZones(title: string, domains: readonly string[], action: BlockAction, redirectIp?: string | null): string {
  const lines = [`# ${title}: ${domains.length} names, action ${action}. Rendered by Bulwark.`];
  const type = ZONE_TYPES[action];
  const family = redirectIp?.includes(':') ? 'AAAA' : 'A';
  for (const domain of domains) {
    lines.push(`local-zone: "${domain}." ${type}`);
    if (action === 'redirect' && redirectIp) lines.push(`local-data: "${domain}. 300 IN ${family} ${redirectIp}"`);
  }
  return `${lines.join('\n')}\n`;
}

/** The bootstrap DS records of the root zone (KSK-2017 and KSK-2024) for a fresh auto-trust-anchor file. */
export const ROOT_TRUST_ANCHORS = [
  '. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D',
  '. IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16',
].join('\n');
