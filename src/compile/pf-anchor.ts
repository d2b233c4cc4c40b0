import { isCidr, isInterfaceName } from '../render/grammar.js';
import { renderRefused } from '../render/refusal.js';

/**
 * The one writer of values in Bulwark's policy-routing anchors (multi-WAN). Each value is a single pf token
 * of a known kind; anything else (spaces, braces, quotes, newlines, `#`) is refused, never quoted.
 */
const GRAMMAR = {
  interface: isInterfaceName,
  address: (value: string) => value === 'any' || isCidr(value),
  host: (value: string) => isCidr(value) && !value.includes('/'),
  port: (value: string) => /^\d{1,5}(:\d{1,5})?$/.test(value) && value.split(':').every((port) => Number(port) <= 65535),
  protocol: (value: string) => ['tcp', 'udp', 'icmp', 'icmp6', 'gre', 'esp', 'ah', 'sctp'].includes(value),
  number: (value: string) => /^\d{1,10}$/.test(value),
  label: (value: string) => /^[A-Za-z0-9:_-]{1,63}$/.test(value),
} as const;

export type PfTokenKind = keyof typeof GRAMMAR;

export function pfAnchorToken(kind: PfTokenKind, value: unknown, field: string): string {
  const text = String(value);
  if (!GRAMMAR[kind](text)) throw renderRefused('policy-routing anchor', field, `not a valid ${kind}`);
  return text;
}
