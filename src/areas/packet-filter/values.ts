/**
 * Value syntaxes of wire-format.md §3.1: parsing the accepted spellings and normalising them to the stored
 * form. Every failure is a 400 naming the field.
 */
import { badRequest } from '../../core/errors.js';
import { INTERFACE_ADDRESS, parseAddress } from '../../compile/firewall-model.js';
import { formatIp, type Family } from '../../compile/addresses.js';
import { INTERFACE_NAME, INTERFACE_NAME_RULE, interfaceNameProblem } from '../../compile/pf-names.js';
import type { PortRange, Protocol, RuleAction } from '../../compile/firewall-types.js';

const LABEL_FORBIDDEN = /["';\\\r\n\0]/;

const ACTIONS: Record<string, RuleAction> = {
  pass: 'pass', block: 'block',
  block_drop: 'blockdrop', 'block-drop': 'blockdrop', blockdrop: 'blockdrop',
  block_return: 'blockreturn', 'block-return': 'blockreturn', blockreturn: 'blockreturn',
};
export const ACTION_INPUTS = Object.keys(ACTIONS);

export function normaliseAction(value: string, field = 'action'): RuleAction {
  const action = ACTIONS[value.toLowerCase()];
  if (!action) throw badRequest(`body.${field} must be one of: pass, block, block_drop, block_return`);
  return action;
}

const PROTOCOLS: Record<string, Protocol> = {
  tcp: 'tcp', udp: 'udp', icmp: 'icmp', icmp6: 'icmp6', 'ipv6-icmp': 'icmp6', esp: 'esp', ah: 'ah', gre: 'gre', any: 'any', '*': 'any',
  'tcp/udp': 'tcp/udp', tcpudp: 'tcp/udp', 'tcp+udp': 'tcp/udp', '{ tcp udp }': 'tcp/udp', '{tcp udp}': 'tcp/udp',
};

export function normaliseProtocol(value: string, field = 'protocol'): Protocol {
  const protocol = PROTOCOLS[value.trim().toLowerCase().replace(/\s+/g, ' ')];
  if (!protocol) throw badRequest(`body.${field} must be one of: tcp, udp, icmp, icmp6, tcp/udp, esp, ah, gre, any`);
  return protocol;
}

export const portsAllowed = (protocol: Protocol) => protocol === 'tcp' || protocol === 'udp' || protocol === 'tcp/udp';

/**
 * `any`, `interface address` (also `interface`: the addresses of the interface the rule names — not widened to
 * any, which would make a port forward catch transit traffic too), an IP, `ip/prefix`, `first-last`, or `<alias>`.
 */
export function normaliseAddress(value: string, field: string): string {
  const text = value.trim();
  const lowered = text.toLowerCase().replace(/\s+/g, ' ');
  if (lowered === 'any' || text === '') return 'any';
  if (lowered === 'interface' || lowered === INTERFACE_ADDRESS) return INTERFACE_ADDRESS;
  if (/^[A-Za-z][A-Za-z0-9_-]*$/.test(text) && !text.includes(':')) {
    throw badRequest(`body.${field}: "${text}" is not an address; write <${text}> to use an alias`);
  }
  if (text.startsWith('<')) {
    if (!/^<[A-Za-z0-9_-]{1,31}>$/.test(text)) throw badRequest(`body.${field}: alias names are 1-31 characters of A-Z, a-z, 0-9, _ and -`);
    return text;
  }
  const address = parseAddress(text.replace(/\s*-\s*/, '-'));
  if (!address) {
    throw badRequest(`body.${field}: "${text}" is not any, an IPv4/IPv6 address, a CIDR (prefix up to 32 for IPv4, 128 for IPv6), a range first-last or an <alias>`);
  }
  if (address.kind === 'block') {
    const [ip, prefix] = text.split('/');
    const canonical = `${ip.toLowerCase()}${prefix !== undefined ? `/${prefix}` : ''}`;
    const parsed = parseAddress(ip)!;
    if (parsed.kind === 'block' && prefix !== undefined && parsed.cidr.base !== address.cidr.base) {
      throw badRequest(`body.${field}: "${text}" has host bits set; the network is ${formatBlock(address)}`);
    }
    return canonical;
  }
  return text.replace(/\s*-\s*/, '-').toLowerCase();
}

function formatBlock(address: ReturnType<typeof parseAddress>): string {
  return address?.kind === 'block' ? `${formatIp(address.cidr.family, address.cidr.base)}/${address.cidr.prefix}` : '';
}

/** The family an address fixes, if any (aliases and any fix none). */
export function addressFamily(address: string): Family | undefined {
  const parsed = parseAddress(address);
  return parsed && (parsed.kind === 'block' || parsed.kind === 'range') ? parsed.family : undefined;
}

export const aliasNameOf = (address: string | undefined | null): string | undefined =>
  typeof address === 'string' ? /^<([A-Za-z0-9_-]{1,31})>$/.exec(address)?.[1] : undefined;

/** Separate `*_start`/`*_end` request fields → a PortRange (only start ⇒ one port). */
export function portRange(start: number | null | undefined, end: number | null | undefined, field: string): PortRange | null {
  if (start === null || start === undefined) {
    if (end !== null && end !== undefined) throw badRequest(`body.${field}_end needs ${field}_start`);
    return null;
  }
  const last = end ?? start;
  if (start > last) throw badRequest(`body.${field}_start must not be greater than ${field}_end`);
  return { start, end: last };
}

/**
 * Which request field set each value of a record in one request, in the client's spelling (`rule_match.dst_port`,
 * `dst_port_start`, ...), so a refusal of a combination names what the client wrote, not an internal name.
 */
export class SentFields {
  private readonly fields = new Map<string, string>();

  /** Notes that `key` was set from `field`; answers `field`, for the parser's own messages. */
  set(key: string, field: string): string {
    this.fields.set(key, field);
    return field;
  }

  has(key: string): boolean {
    return this.fields.has(key);
  }

  /** The field the client sent for `key`; when it sent none, `fallback` (the flat request name). */
  name(key: string, fallback = key): string {
    return this.fields.get(key) ?? fallback;
  }
}

export function normaliseInterface(value: string | null | undefined, field = 'interface'): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (!INTERFACE_NAME.test(value)) throw badRequest(`body.${field} must be ${INTERFACE_NAME_RULE}`);
  const problem = interfaceNameProblem(value);
  if (problem) throw badRequest(`body.${field}: ${problem}`);
  return value;
}

export function normaliseLabel(value: string | null | undefined, field = 'label'): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (value.length > 63) throw badRequest(`body.${field} must be at most 63 characters`);
  if (LABEL_FORBIDDEN.test(value)) throw badRequest(`body.${field} must not contain quotes, ;, \\, CR, LF or NUL`);
  return value;
}

export function normaliseDescription(value: string | null | undefined, field = 'description'): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (value.length > 255) throw badRequest(`body.${field} must be at most 255 characters`);
  if (/[\0-\x1f\x7f]/.test(value)) throw badRequest(`body.${field} must not contain control characters`);
  return value;
}
