import { isIP } from 'node:net';

/**
 * The grammars every rendered string field is held to. The same rules appear twice: as JSON-Schema patterns
 * (so schema validation, import and restore refuse them with 400 naming the field) and as predicates the
 * renderers re-check before emitting anything.
 */

/** C0 controls (NUL, CR, LF, ESC, ...), DEL, C1 controls (e.g. the 8-bit CSI) and the Unicode line/paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** The same, except LF and TAB. */
const CONTROL_EXCEPT_LINE_BREAKS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/** One line of free text: no control character at all (no newline, CR, NUL, escape sequences). */
export const SINGLE_LINE_TEXT_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$';
export const isSingleLineText = (value: string): boolean => !CONTROL.test(value);

/** Multi-line free text shown on a terminal: LF and TAB allowed, every other control character refused. */
export const TERMINAL_TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$';
export const isTerminalText = (value: string): boolean => !CONTROL_EXCEPT_LINE_BREAKS.test(value);
export const stripTerminalControls = (value: string): string => value.replace(new RegExp(CONTROL_EXCEPT_LINE_BREAKS.source, 'g'), '');

/** One DNS label or a dotted name (RFC 1123), at most 253 characters, no trailing dot. */
const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
export const HOST_NAME_PATTERN = `^(?=.{1,253}$)${LABEL}(\\.${LABEL})*$`;
export const isHostName = (value: string): boolean => new RegExp(HOST_NAME_PATTERN).test(value);
/** A single label (a host name without domain). */
export const HOST_LABEL_PATTERN = `^${LABEL}$`;

/**
 * Network interface names as the kernels accept them (no spaces, no shell or config metacharacters), never
 * starting with `-` (the name reaches argument vectors: `ip … dev NAME`, `ping -I NAME`, FreeBSD's `ifconfig NAME`).
 */
export const INTERFACE_NAME_PATTERN = '^[A-Za-z0-9_.:][A-Za-z0-9_.:-]{0,31}$';
export const isInterfaceName = (value: string): boolean => new RegExp(INTERFACE_NAME_PATTERN).test(value);

/** An IP address, exactly (no surrounding whitespace). */
export const isIpAddress = (value: string): boolean => isIP(value) !== 0;

/** An IP address with an optional prefix, exactly (no whitespace, prefix in range). */
export function isCidr(value: string): boolean {
  const match = /^([0-9A-Fa-f.:]+)(?:\/(\d{1,3}))?$/.exec(value);
  if (!match) return false;
  const family = isIP(match[1]);
  if (!family) return false;
  return match[2] === undefined || Number(match[2]) <= (family === 4 ? 32 : 128);
}

/** A port number 1-65535 written in decimal without sign or leading zeros. */
export const isPort = (value: string): boolean => /^[1-9]\d{0,4}$/.test(value) && Number(value) <= 65535;

/** `host:port` where host is a DNS name, an IPv4 address or a bracketed IPv6 address. */
export const HOST_PORT_PATTERN = '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$';
export function isHostPort(value: string): boolean {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(value);
  if (!match || !isPort(match[3])) return false;
  if (match[1] !== undefined) return isIP(match[1]) === 6;
  return isIP(match[2]) === 4 || isHostName(match[2]);
}

/** A DNS name or an IP address. */
export const isHostOrAddress = (value: string): boolean => isIpAddress(value) || isHostName(value);

/** An absolute path without `.`/`..` segments, doubled slashes, whitespace, quotes or other metacharacters. */
export const ABSOLUTE_PATH_PATTERN = '^(/[A-Za-z0-9_][A-Za-z0-9._+-]*)+$';
export function isCleanAbsolutePath(value: string): boolean {
  if (!new RegExp(ABSOLUTE_PATH_PATTERN).test(value)) return false;
  return value.split('/').every((segment) => segment !== '.' && segment !== '..');
}

/** Is `path` (clean, absolute) inside `root` (a directory, with or without a trailing slash)? */
export function isUnder(path: string, root: string): boolean {
  const base = root.endsWith('/') ? root : `${root}/`;
  return path.startsWith(base) && path.length > base.length;
}

/** A WireGuard key: standard base64 of exactly 32 bytes (43 significant characters, the last with 4 zero bits, then `=`). */
export const WIREGUARD_KEY_PATTERN = '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$';
export const isWireguardKey = (value: string): boolean => new RegExp(WIREGUARD_KEY_PATTERN).test(value);

/** A comma-separated list (", " or ",") whose every element satisfies `element`; empty lists are refused. */
export function isCommaList(value: string, element: (item: string) => boolean): boolean {
  const items = value.split(/,\s?/);
  return items.length > 0 && items.every((item) => item !== '' && element(item));
}
