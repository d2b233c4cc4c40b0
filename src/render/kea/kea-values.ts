/**
 * Checks of the values renderKea puts into kea-dhcp4.conf. The file is built with JSON.stringify, so no value
 * can leave its JSON string; but Kea reads option data as comma-separated fields (csv-format) and some
 * strings as names or hex, so each value must also have the shape its slot expects. A value that does not
 * is refused (RenderRefusal) rather than written.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';

export function keaIpv4(value: string, field: string): string {
  if (isIP(value) !== 4) throw new RenderRefusal(field, 'is not an IPv4 address');
  return value;
}

export function keaIpv4List(values: readonly string[], field: string): string {
  return values.map((value, index) => keaIpv4(value, `${field}.${index}`)).join(', ');
}

const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

/** A DNS name (no commas, spaces or quotes: Kea splits option data on commas). */
export function keaName(value: string, field: string): string {
  const name = value.replace(/\.$/, '');
  if (!name || name.length > 253 || !name.split('.').every((label) => LABEL.test(label))) throw new RenderRefusal(field, 'is not a DNS name');
  return value;
}

/** An interface name, or `*` for all. */
export function keaInterface(value: string, field: string): string {
  if (value !== '*' && !/^[A-Za-z0-9_.:-]{1,15}$/.test(value)) throw new RenderRefusal(field, 'is not an interface name');
  return value;
}

/** `a.b.c.d/len`. */
export function keaCidr(value: string, field: string): string {
  const [ip, prefix, extra] = value.split('/');
  if (isIP(ip) !== 4 || extra !== undefined || !/^\d{1,2}$/.test(prefix ?? '') || Number(prefix) > 32) throw new RenderRefusal(field, 'is not an IPv4 network');
  return value;
}

export function keaMac(value: string, field: string): string {
  if (!/^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/.test(value)) throw new RenderRefusal(field, 'is not a MAC address');
  // The API takes aa-bb-… too; kea-dhcp4 reads only colons in hw-address.
  return value.replace(/-/g, ':');
}

/** A client identifier as hex octets (`01:aa:bb`), the form Kea reads without quoting. */
export function keaClientId(value: string, field: string): string {
  if (!/^[0-9A-Fa-f]{2}(?:[:-]?[0-9A-Fa-f]{2}){0,127}$/.test(value)) throw new RenderRefusal(field, 'is not hex octets');
  return value;
}

/** Hex option data as produced by optionHex. */
export function keaHex(value: string, field: string): string {
  if (!/^(?:[0-9a-f]{2})+$/.test(value)) throw new RenderRefusal(field, 'is not hex data');
  return value;
}

/** Printable ASCII text for plain string parameters (boot-file-name). */
export function keaText(value: string, field: string): string {
  if (!/^[\x20-\x7e]{1,255}$/.test(value) || /["\\]/.test(value)) throw new RenderRefusal(field, 'is not printable text');
  return value;
}

/** Base64 data (a TSIG secret). */
export function keaBase64(value: string, field: string): string {
  if (!value || value.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw new RenderRefusal(field, 'is not base64 data');
  return value;
}

/** `host:port` (a hostname or IPv4 address) or `[IPv6]:port`, as an HTTP URL Kea's HA hook can use. */
export function keaPeerUrl(value: string, field: string): string {
  const match = /^(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.-]{1,253}):(\d{1,5})$/.exec(value);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) throw new RenderRefusal(field, 'is not host:port');
  return `http://${match[1]}:${match[2]}/`;
}

/** An IP address with an optional port (`192.0.2.53`, `192.0.2.53:5353`). */
export function keaServer(value: string, field: string): { ip: string; port: number } {
  const match = /^([0-9.]+|[0-9A-Fa-f:]+?)(?::(\d{1,5}))?$/.exec(value);
  const ip = isIP(value) ? value : match?.[1] ?? '';
  const port = isIP(value) ? 53 : Number(match?.[2] ?? 53);
  if (!isIP(ip) || port < 1 || port > 65535) throw new RenderRefusal(field, 'is not an IP address with an optional port');
  return { ip, port };
}
