/**
 * The one encoding function per slot of Caddy's JSON configuration. The document is built as an object and
 * serialised with JSON.stringify, so no value can add a key; what remains is Caddy's own interpretation of
 * some strings: `{…}` placeholders are expanded in header values, rewrites, redirects and realms (a value
 * `{env.SECRET}` would read the daemon's environment), and `*` is a wildcard in matchers. Values are refused,
 * not escaped, when they carry either.
 */
import { isCidr, isHostName, isIpAddress } from '../grammar.js';

/** A model feature Caddy cannot express, or a value it would not take literally; the message names it. */
export class ProxyRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProxyRefusal';
  }
}

const PLACEHOLDER_OR_CONTROL = /[{}\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A string Caddy must take literally (header values, realms, prefixes): no placeholder braces or control characters. */
export function caddyLiteral(value: unknown, where: string, maxLength = 4096): string {
  if (typeof value !== 'string') throw new ProxyRefusal(`${where} must be a string`);
  if (PLACEHOLDER_OR_CONTROL.test(value) || value.length > maxLength) throw new ProxyRefusal(`${where} must not contain { } or control characters (at most ${maxLength} characters)`);
  return value;
}

/** A URL path prefix taken literally: starts with /, no wildcard, placeholder or control characters. */
export function caddyPathPrefix(value: unknown, where: string): string {
  const text = caddyLiteral(value, where, 1024);
  if (!text.startsWith('/') || text.includes('*') || /\s/.test(text)) throw new ProxyRefusal(`${where} must be a path starting with / without spaces or *`);
  return text;
}

/** `host:port` of an upstream, from a `http(s)://host[:port]` server URL without path or credentials. */
export function caddyUpstream(url: unknown, where: string): { dial: string; tls: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new ProxyRefusal(`${where} must be an http:// or https:// URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ProxyRefusal(`${where} must be an http:// or https:// URL`);
  if (parsed.username || parsed.password || parsed.search || parsed.hash || (parsed.pathname !== '/' && parsed.pathname !== '')) {
    throw new ProxyRefusal(`${where} must be scheme://host[:port] only (a path, query or credentials in a server URL are not supported by Caddy's reverse_proxy)`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!isHostName(host) && !isIpAddress(host)) throw new ProxyRefusal(`${where} host is not a host name or IP address`);
  const tls = parsed.protocol === 'https:';
  const port = parsed.port || (tls ? '443' : '80');
  return { dial: `${host.includes(':') ? `[${host}]` : host}:${port}`, tls };
}

/** Caddy's `listen` address from the model's `[host]:port[/tcp]`; UDP entry points are refused. */
export function caddyListen(address: unknown, where: string): string {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):([0-9]{1,5})(\/(tcp|udp))?$/.exec(String(address));
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) throw new ProxyRefusal(`${where} must be [host]:port`);
  if (match[4] === 'udp') throw new ProxyRefusal(`${where} is a UDP address; Caddy serves HTTP over TCP only (UDP entry points are not supported)`);
  const host = match[1].replace(/^\[|\]$/g, '');
  if (host && !isHostName(host) && !isIpAddress(host)) throw new ProxyRefusal(`${where} host is not a host name or IP address`);
  return `${match[1]}:${match[2]}`;
}

/** A Caddy duration from a Traefik one: seconds as a number, or Go duration text such as `30s` or `1m30s`. */
export function caddyDuration(value: unknown, where: string): string {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 86_400) return `${value}s`;
  if (typeof value === 'string' && /^([0-9]{1,6}(ns|us|ms|s|m|h))+$/.test(value)) return value;
  throw new ProxyRefusal(`${where} must be a whole number of seconds or a duration such as 30s`);
}

/** IP ranges of an allow or deny list. */
export function caddyRanges(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string' && isCidr(item))) {
    throw new ProxyRefusal(`${where} must be a non-empty list of IP addresses or CIDRs`);
  }
  return value as string[];
}

/** An HTTP header name (RFC 9110 token). */
export function caddyHeaderName(value: unknown, where: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$/.test(value)) throw new ProxyRefusal(`${where} is not a header name`);
  return value;
}

/** Only these keys of an object may be given; the first other one is named. */
export function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const extra = Object.keys(value).find((key) => !allowed.includes(key));
  if (extra !== undefined) throw new ProxyRefusal(`${where}.${extra} is not supported by Caddy (supported: ${allowed.length ? allowed.join(', ') : 'none'})`);
}
