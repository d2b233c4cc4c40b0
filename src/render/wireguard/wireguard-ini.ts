import { isCidr, isCommaList, isHostOrAddress, isHostPort, isWireguardKey } from '../grammar.js';
import { renderRefused } from '../refusal.js';

/**
 * The one writer of WireGuard configuration lines (`wg setconf` and wg-quick files). Only these keys can be
 * written, each value checked against its grammar: PostUp/PostDown/PreUp/PreDown/SaveConfig/Table and every
 * other key that runs a command or changes the host are not in the list, so no value can ever become one.
 */
const GRAMMAR = {
  PrivateKey: isWireguardKey,
  PublicKey: isWireguardKey,
  PresharedKey: isWireguardKey,
  ListenPort: (value: string) => /^[1-9]\d{0,4}$/.test(value) && Number(value) <= 65535,
  MTU: (value: string) => /^\d{3,4}$/.test(value) && Number(value) >= 576 && Number(value) <= 9420,
  PersistentKeepalive: (value: string) => /^[1-9]\d{0,4}$/.test(value) && Number(value) <= 65535,
  Address: (value: string) => isCommaList(value, isCidr),
  AllowedIPs: (value: string) => isCommaList(value, isCidr),
  DNS: (value: string) => isCommaList(value, isHostOrAddress),
  Endpoint: isHostPort,
} as const;

export type WireguardKey = keyof typeof GRAMMAR;
export const WIREGUARD_KEYS = Object.keys(GRAMMAR) as WireguardKey[];

/** `Key = value`, or a 409 naming `field` when the value does not fit the key's grammar. */
export function wireguardLine(key: WireguardKey, value: string | number, field: string): string {
  const text = String(value);
  if (!GRAMMAR[key](text)) throw renderRefused('WireGuard configuration', field, `not a valid ${key} value`);
  return `${key} = ${text}`;
}

/** A section header: only the two sections WireGuard knows. */
export const wireguardSection = (name: 'Interface' | 'Peer'): string => `[${name}]`;
