/**
 * Renders the resolver configuration for Unbound. Pure: configuration in, text out (golden-tested, and
 * checked with `unbound-checkconf` where it is installed). Every value goes through unbound-syntax.ts, which
 * refuses (RenderRefusal) anything that could end its string or token.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';
import { unboundName, unboundSingleQuoted, unboundString, unboundToken, unboundTxtData } from './unbound-syntax.js';
import { CustomOptionError, parseCustomOptions } from './unbound-custom-options.js';

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
  /**
   * Bulwark's blocklist filter script (unbound-blocklist.ts), loaded as Unbound's Python module in front of the
   * resolver; null when nothing is blocked or allowed.
   */
  blocklistFilter?: string | null;
  paths: { directory: string; pidfile: string; controlSocket: string; trustAnchorFile: string; logfile: string };
}

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

const RECORD_TYPES = new Set(['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'PTR']);
const ACL_ACTIONS = new Set(['allow', 'deny', 'refuse', 'allow_snoop']);
const LOCAL_ZONE_TYPES = new Set([
  'transparent', 'typetransparent', 'static', 'redirect', 'deny', 'refuse', 'inform', 'inform_deny', 'inform_redirect',
  'always_transparent', 'always_refuse', 'always_nxdomain', 'nodefault',
]);

function oneOf(value: string, allowed: ReadonlySet<string>, field: string): string {
  if (!allowed.has(value)) throw new RenderRefusal(field, 'is not one of the allowed values');
  return value;
}

function whole(value: number, field: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RenderRefusal(field, 'is not a whole number');
  return String(value);
}

function address(value: string, field: string, family?: 4 | 6): string {
  const found = isIP(value);
  if (!found || (family && found !== family)) throw new RenderRefusal(field, `is not an IPv${family ?? '4/6'} address`);
  return value;
}

function cidr(value: string, field: string): string {
  const [ip, prefix, extra] = value.split('/');
  const family = isIP(ip);
  const max = family === 6 ? 128 : 32;
  if (!family || extra !== undefined || (prefix !== undefined && !(/^\d{1,3}$/.test(prefix) && Number(prefix) <= max))) throw new RenderRefusal(field, 'is not an IP address or CIDR');
  return value;
}

/** `10.0.0.1:5353` or `[::1]:53` → Unbound's `addr@port`. */
export function forwardAddress(server: string): string {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(server);
  if (bracketed) return bracketed[2] ? `${bracketed[1]}@${bracketed[2]}` : bracketed[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(server);
  if (v4) return `${v4[1]}@${v4[2]}`;
  return server;
}

/** A forwarder as `addr[@port]`, refused unless the address part is an IP address. */
function forwarder(server: string, field: string): string {
  const value = forwardAddress(server);
  const [ip, port, extra] = value.split('@');
  if (!isIP(ip) || extra !== undefined || (port !== undefined && !/^\d{1,5}$/.test(port))) throw new RenderRefusal(field, 'is not an IP address with an optional port');
  return unboundToken(value, field);
}

/** A DNS-over-TLS upstream `ip@port#tls-name`. */
function tlsUpstream(value: string, field: string): string {
  const match = /^([^@#]+)@(\d{1,5})#(.+)$/.exec(value);
  if (!match || !isIP(match[1])) throw new RenderRefusal(field, 'is not ip@port#tls-name');
  unboundName(match[3], field);
  return unboundToken(value, field);
}

/** The `local-data` lines of one host override. */
export function hostRecords(host: UnboundHost, field = 'hosts'): string[] {
  const name = unboundName(host.domain ? `${host.hostname}.${host.domain}` : host.hostname, `${field}.hostname`);
  const type = oneOf(host.record_type.toUpperCase(), RECORD_TYPES, `${field}.record_type`);
  const value = `${field}.value`;
  switch (type) {
    case 'A':
    case 'AAAA': {
      const ip = address(host.value, value, type === 'A' ? 4 : 6);
      return [`local-data: ${unboundString(`${name} 300 IN ${type} ${ip}`, value)}`, `local-data-ptr: ${unboundString(`${ip} ${name}`, value)}`];
    }
    case 'MX':
      return [`local-data: ${unboundString(`${name} 300 IN MX ${whole(host.mx_priority ?? 10, `${field}.mx_priority`)} ${unboundName(host.value, value)}`, value)}`];
    case 'TXT':
      // The TXT data carries its own double quotes, so the record is single-quoted; its bytes are \DDD-escaped.
      return [`local-data: ${unboundSingleQuoted(`${name} 300 IN TXT ${unboundTxtData(host.value)}`, value)}`];
    default:
      return [`local-data: ${unboundString(`${name} 300 IN ${type} ${unboundName(host.value, value)}`, value)}`];
  }
}

/** The custom options as canonical lines rebuilt from their parsed tokens; refuses a text the parser refuses. */
function customOptionLines(text: string): string[] {
  try {
    return parseCustomOptions(text).map((option) => `${option.keyword}: ${option.value}`);
  } catch (error) {
    if (error instanceof CustomOptionError) throw new RenderRefusal('custom_options', error.message);
    throw error;
  }
}

export function renderUnbound(input: UnboundInput): string {
  const { resolver, paths } = input;
  const lines: string[] = ['# Rendered by Bulwark from the DNS resolver configuration. Changes here are overwritten.', 'server:'];
  const set = (key: string, value: string) => lines.push(`    ${key}: ${value}`);
  set('directory', unboundString(paths.directory, 'paths.directory'));
  set('chroot', '""');
  // Bulwark starts Unbound as its own user (setpriv), so it has no root privileges to drop.
  set('username', '""');
  set('pidfile', unboundString(paths.pidfile, 'paths.pidfile'));
  set('use-syslog', 'no');
  set('logfile', unboundString(paths.logfile, 'paths.logfile'));
  set('verbosity', whole(resolver.log_verbosity, 'log_verbosity'));
  set('num-threads', whole(resolver.num_threads, 'num_threads'));
  const listen = resolver.listen_interfaces.length === 0 ? ['0.0.0.0'] : resolver.listen_interfaces;
  listen.forEach((ip, index) => set('interface', address(ip, `listen_interfaces.${index}`)));
  set('port', whole(resolver.port, 'port'));
  if (resolver.outgoing_interface) set('outgoing-interface', address(resolver.outgoing_interface, 'outgoing_interface'));
  set('msg-cache-size', unboundToken(resolver.msg_cache_size, 'msg_cache_size'));
  set('rrset-cache-size', unboundToken(resolver.rrset_cache_size, 'rrset_cache_size'));
  set('cache-max-ttl', whole(resolver.cache_max_ttl, 'cache_max_ttl'));
  set('cache-min-ttl', whole(resolver.cache_min_ttl, 'cache_min_ttl'));
  set('prefetch', yesNo(resolver.prefetch));
  set('prefetch-key', yesNo(resolver.prefetch_key));
  set('infra-host-ttl', whole(resolver.infra_host_ttl, 'infra_host_ttl'));
  set('unwanted-reply-threshold', whole(resolver.unwanted_reply_threshold, 'unwanted_reply_threshold'));
  set('log-queries', yesNo(resolver.log_queries));
  set('log-replies', yesNo(resolver.log_replies));
  set('hide-identity', yesNo(resolver.hide_identity));
  set('hide-version', yesNo(resolver.hide_version));
  set('qname-minimisation', 'yes');
  const modules = [...(input.blocklistFilter ? ['python'] : []), ...(resolver.dnssec ? ['validator'] : []), 'iterator'];
  set('module-config', `"${modules.join(' ')}"`);
  if (resolver.dnssec) set('auto-trust-anchor-file', unboundString(paths.trustAnchorFile, 'paths.trustAnchorFile'));
  const domain = resolver.dhcp_domain ? unboundName(resolver.dhcp_domain, 'dhcp_domain') : null;
  if (resolver.rebind_protection) {
    resolver.private_addresses.forEach((network, index) => set('private-address', unboundToken(cidr(network, `private_addresses.${index}`), `private_addresses.${index}`)));
    // The appliance's own local names legitimately resolve to private addresses.
    if (domain) set('private-domain', unboundString(domain.replace(/\.$/, ''), 'dhcp_domain'));
  }
  set('access-control', '127.0.0.0/8 allow');
  set('access-control', '::1/128 allow');
  input.acls.forEach((acl, index) => set('access-control', `${unboundToken(cidr(acl.network, `acls.${index}.network`), `acls.${index}.network`)} ${oneOf(acl.action, ACL_ACTIONS, `acls.${index}.action`)}`));
  if (domain) set('local-zone', `${unboundString(domain, 'dhcp_domain')} ${oneOf(resolver.local_zone_type, LOCAL_ZONE_TYPES, 'local_zone_type')}`);
  input.hosts.forEach((host, index) => {
    if (host.enabled) for (const record of hostRecords(host, `hosts.${index}`)) lines.push(`    ${record}`);
  });
  if (domain) {
    input.dhcpNames.forEach((entry, index) => {
      const field = `dhcp_names.${index}`;
      const name = unboundName(`${entry.hostname}.${domain}`, `${field}.hostname`);
      const ip = address(entry.ip, `${field}.ip_address`);
      lines.push(`    local-data: ${unboundString(`${name} 300 IN ${isIP(ip) === 6 ? 'AAAA' : 'A'} ${ip}`, field)}`, `    local-data-ptr: ${unboundString(`${ip} ${name}`, field)}`);
    });
  }
  const custom = customOptionLines(resolver.custom_options);
  if (custom.length > 0) {
    lines.push('    # custom options');
    for (const line of custom) lines.push(`    ${line}`);
  }
  if (input.blocklistFilter) {
    lines.push('', 'python:');
    set('python-script', unboundString(input.blocklistFilter, 'paths.blocklistFilter'));
  }
  lines.push('', 'remote-control:');
  set('control-enable', 'yes');
  set('control-interface', unboundString(paths.controlSocket, 'paths.controlSocket'));
  set('control-use-cert', 'no');
  input.domains.forEach((override, index) => {
    if (!override.enabled) return;
    lines.push('', 'forward-zone:');
    set('name', unboundString(unboundName(override.domain, `domains.${index}.domain`), `domains.${index}.domain`));
    set('forward-addr', forwarder(override.server, `domains.${index}.server`));
  });
  const [upstream, upstreamField] = resolver.dot_enabled
    ? [resolver.dot_upstream, 'dot_upstream']
    : resolver.use_system_nameservers
      ? [input.systemNameservers, 'system_nameservers']
      : resolver.forwarding_enabled
        ? [resolver.forwarding_servers, 'forwarding_servers']
        : [[], ''];
  if (upstream.length > 0) {
    lines.push('', 'forward-zone:');
    set('name', '"."');
    if (resolver.dot_enabled) set('forward-tls-upstream', 'yes');
    upstream.forEach((server, index) => set('forward-addr', resolver.dot_enabled ? tlsUpstream(server, `${upstreamField}.${index}`) : forwarder(server, `${upstreamField}.${index}`)));
    // With plain forwarders, fall back to full recursion when they fail; DoT must not leak in clear text.
    if (!resolver.dot_enabled) set('forward-first', 'yes');
  }
  return `${lines.join('\n')}\n`;
}

/** The bootstrap DS records of the root zone (KSK-2017 and KSK-2024) for a fresh auto-trust-anchor file. */
export const ROOT_TRUST_ANCHORS = [
  '. IN DS 20326 8 2 E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D',
  '. IN DS 38696 8 2 683D2D0ACB8C9B712A1948B27F741219298D0A450D612C483AF444A4C0FB2B16',
].join('\n');
