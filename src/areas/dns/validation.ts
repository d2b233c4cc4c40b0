import { isIP } from 'node:net';
import { Cron } from 'croner';
import { badRequest } from '../../core/errors.js';
import { isDomainName, isIpOrCidr } from '../../core/ip.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { adminDestinationProblem, type SingletonReader } from '../../net/admin-allow-list.js';
import { CustomOptionError, parseCustomOptions } from '../../render/unbound/unbound-custom-options.js';

// Validation of the DNS collections and singletons (pure; used by the declarations in routes.ts).

export function validateHost(data: ConfigData): void {
  const hostname = String(data.hostname);
  const domain = String(data.domain);
  const what = 'must be DNS labels (letters, digits, - and _, 1-63 each, no leading or trailing -) joined by dots';
  if (!isDomainName(hostname)) throw badRequest(`body.hostname ${what}`);
  if (!isDomainName(domain)) throw badRequest(`body.domain ${what}`);
  if (hostname.length + domain.length + 1 > 253) throw badRequest('body.hostname and body.domain together must be at most 253 characters');
  const value = String(data.value);
  switch (data.record_type) {
    case 'A':
      if (isIP(value) !== 4) throw badRequest('body.value must be an IPv4 address for an A record');
      break;
    case 'AAAA':
      if (isIP(value) !== 6) throw badRequest('body.value must be an IPv6 address for an AAAA record');
      break;
    case 'TXT':
      // Any other character is rendered as a \DDD escape inside one TXT string (see render/unbound/unbound-syntax.ts).
      if (value.length > 4096 || /[\x00-\x1f\x7f]/.test(value)) throw badRequest('body.value must be at most 4096 characters on one line (no control characters) for a TXT record');
      break;
    default:
      if (!isDomainName(value.replace(/\.$/, ''))) throw badRequest(`body.value must be a domain name for a ${String(data.record_type)} record`);
  }
}

export function validateDomainOverride(data: ConfigData): void {
  if (!isDomainName(String(data.domain).replace(/\.$/, ''))) throw badRequest('body.domain must be a domain name');
  const server = String(data.server);
  const ok = isIP(server) || /^\d+\.\d+\.\d+\.\d+:\d{1,5}$/.test(server) && isIP(server.split(':')[0]) === 4 || /^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(server) && isIP(server.slice(1, server.indexOf(']'))) === 6;
  if (!ok) throw badRequest('body.server must be an IP address, IPv4:port or [IPv6]:port');
}

export function validateAcl(data: ConfigData): void {
  if (!isIpOrCidr(String(data.network))) throw badRequest('body.network must be an IP address or IP/prefix');
}

export function validatePattern(data: ConfigData): void {
  const pattern = String(data.pattern).toLowerCase();
  if (!isDomainName(pattern, { wildcard: true, requireDot: true }) || /(^-|-\.|\.-|-$)/.test(pattern.replace(/^\*\./, ''))) {
    throw badRequest('body.pattern must be a domain name with at least one dot (optionally starting with *.), labels of 1-63 letters, digits or -');
  }
}

export function validateResolver(data: ConfigData): void {
  const listFields: [string, (v: string) => boolean, string][] = [
    ['listen_interfaces', (v) => isIP(v) !== 0, 'an IP address'],
    ['forwarding_servers', (v) => isIP(v.replace(/^\[|\](:\d+)?$/g, '').replace(/:\d+$/, '')) !== 0 || isIP(v) !== 0, 'an IP address (optionally with :port)'],
    ['private_addresses', isIpOrCidr, 'an IP address or CIDR'],
  ];
  for (const [field, ok, what] of listFields) {
    const values = (data[field] as string[] | undefined) ?? [];
    values.forEach((value, index) => {
      if (!ok(value)) throw badRequest(`body.${field}.${index} must be ${what}`);
    });
  }
  ((data.dot_upstream as string[] | undefined) ?? []).forEach((value, index) => {
    const match = /^([^@#]+)@(\d{1,5})#(.+)$/.exec(value);
    if (!match || !isIP(match[1]) || Number(match[2]) > 65535 || !isDomainName(match[3])) throw badRequest(`body.dot_upstream.${index} must be ip@port#tls-name`);
  });
  if (data.outgoing_interface && !isIP(String(data.outgoing_interface))) throw badRequest('body.outgoing_interface must be an IP address');
  if (data.blocklist_redirect_ip && !isIP(String(data.blocklist_redirect_ip))) throw badRequest('body.blocklist_redirect_ip must be an IP address');
  if (data.dhcp_domain && !isDomainName(String(data.dhcp_domain))) throw badRequest('body.dhcp_domain must be a domain name');
  if (Number(data.cache_min_ttl) > Number(data.cache_max_ttl)) throw badRequest('body.cache_min_ttl must not exceed cache_max_ttl');
  try {
    parseCustomOptions(String(data.custom_options ?? ''));
  } catch (error) {
    if (error instanceof CustomOptionError) throw badRequest(`body.custom_options ${error.message}`);
    throw error;
  }
}

/** Create-time checks of a blocklist source URL: a web URL, and no literal blocked address unless allow-listed. */
export function validateBlocklistSource(data: ConfigData, store: SingletonReader, existing?: ConfigObject): void {
  let url: URL;
  try {
    url = new URL(String(data.url));
  } catch {
    throw badRequest('body.url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('body.url must start with http:// or https://');
  if (/[\x00-\x1f\x7f]/.test(String(data.name))) throw badRequest('body.name must not contain control characters');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = adminDestinationProblem(host, store);
  if (refused) throw badRequest(`body.url: ${refused}`);
  if (data.action === 'redirect' && !(typeof data.redirect_ip === 'string' && isIP(data.redirect_ip))) {
    throw badRequest('body.redirect_ip must be an IP address when action is redirect');
  }
  if (data.redirect_ip === '') data.redirect_ip = null;
  if (existing ? data.built_in !== existing.data.built_in : data.built_in === true) {
    throw badRequest('body.built_in is set by the appliance and cannot be changed');
  }
}

/** Validates a 6-field cron expression (seconds first); throws 400 naming it. */
export function validateCron(expression: string): void {
  if (expression.trim().split(/\s+/).length !== 6) throw badRequest(`body.cron: invalid cron: "${expression}" must have 6 fields (sec min hour dom mon dow)`);
  try {
    new Cron(expression, { paused: true });
  } catch (error) {
    throw badRequest(`body.cron: invalid cron: ${(error as Error).message}`);
  }
}
