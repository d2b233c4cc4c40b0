import { isCidr, isInterfaceName } from '../render/grammar.js';
import { renderRefused } from '../render/refusal.js';

/**
 * The one writer of values in the multi-WAN nftables table (`inet bulwark_mwan`). Each value is one token of a
 * known kind, checked against its grammar and written bare (interface names inside the quotes the renderer
 * puts around them, which the grammar keeps free of quotes); anything else is refused, never escaped.
 */
const GRAMMAR = {
  interface: isInterfaceName,
  address: (value: string) => isCidr(value),
  host: (value: string) => isCidr(value) && !value.includes('/'),
  port: (value: string) => /^\d{1,5}(:\d{1,5})?$/.test(value) && value.split(':').every((port) => Number(port) <= 65535),
  protocol: (value: string) => ['tcp', 'udp', 'icmp', 'icmp6', 'gre', 'esp', 'ah', 'sctp'].includes(value),
  label: (value: string) => /^[A-Za-z0-9:_-]{1,63}$/.test(value),
} as const;

export type NftTokenKind = keyof typeof GRAMMAR;

export function nftToken(kind: NftTokenKind, value: unknown, field: string): string {
  const text = String(value);
  if (!GRAMMAR[kind](text)) throw renderRefused('multi-WAN nftables table', field, `not a valid ${kind}`);
  // pf writes a port range a:b, nftables a-b; icmp6 is ipv6-icmp to nftables.
  if (kind === 'port') return text.replace(':', '-');
  if (kind === 'protocol' && text === 'icmp6') return 'ipv6-icmp';
  return text;
}
