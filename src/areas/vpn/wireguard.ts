import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { isWireguardKey as matchesKeyGrammar } from '../../render/grammar.js';
import { wireguardLine, wireguardSection } from '../../render/wireguard/wireguard-ini.js';

/** DER prefix of a PKCS#8 X25519 private key; the raw 32-byte key follows it. */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

export interface KeyPair {
  private_key: string;
  public_key: string;
}

const fromBase64Url = (value: string) => Buffer.from(value, 'base64url').toString('base64');

/** A fresh Curve25519 key pair in WireGuard's encoding (standard base64 of the 32 raw bytes). */
export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return {
    private_key: fromBase64Url(privateKey.export({ format: 'jwk' }).d!),
    public_key: fromBase64Url(publicKey.export({ format: 'jwk' }).x!),
  };
}

/** `wg pubkey`: the public key of a base64 private key. */
export function publicKeyOf(privateKey: string): string {
  const raw = Buffer.from(privateKey, 'base64');
  const key = createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  return fromBase64Url(createPublicKey(key).export({ format: 'jwk' }).x!);
}

/** 32 random bytes, as `wg genpsk` makes them. */
export function generatePresharedKey(): string {
  return generateKeyPair().private_key;
}

/** A WireGuard key is the standard base64 of exactly 32 bytes (44 characters ending in `=`). */
export function isWireguardKey(value: string): boolean {
  return matchesKeyGrammar(value) && Buffer.from(value, 'base64').length === 32;
}

/** One section of a wg-quick file, keys as written (case kept), values trimmed; repeated keys kept in order. */
export interface WgQuickSection {
  name: string;
  entries: [string, string][];
}

/** Parses wg-quick configuration text ([Interface] and [Peer] sections, `#` comments). */
export function parseWgQuick(text: string): WgQuickSection[] {
  const sections: WgQuickSection[] = [];
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const line = rawLine.replace(/#.*/, '').trim();
    if (!line) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      sections.push({ name: header[1], entries: [] });
      continue;
    }
    const pair = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!pair || sections.length === 0) throw new Error(`line ${index + 1}: not a key = value line inside a section`);
    sections[sections.length - 1].entries.push([pair[1], pair[2].trim()]);
  }
  return sections;
}

/** The value of a key in a section (case-insensitive), all occurrences joined by ", ". */
export function wgValue(section: WgQuickSection, key: string): string | undefined {
  const values = section.entries.filter(([k]) => k.toLowerCase() === key.toLowerCase()).map(([, v]) => v);
  return values.length > 0 ? values.join(', ') : undefined;
}

export interface PeerConfigInput {
  client_private_key: string | null;
  address: string | null;
  dns: string | null;
  mtu: number | null;
  server_public_key: string;
  preshared_key: string | null;
  /** The peer has a preshared key that this file leaves out (rendered without key material). */
  preshared_key_withheld?: boolean;
  endpoint: string;
  allowed_ips: string;
  persistent_keepalive: number | null;
}

/**
 * The wg-quick file a client imports (the layout of wire-format §1.6). Every line goes through wireguardLine,
 * so a stored value outside its key's grammar refuses the download rather than adding a directive.
 */
/** Written where a withheld preshared key goes: the tunnel needs it, so the client must add it. */
const WITHHELD_PRESHARED_KEY = '# PresharedKey: this peer needs its preshared key; add it here (an account with vpn:write downloads it with include_keys=true)';

export function renderPeerConfig(input: PeerConfigInput): string {
  const lines = [wireguardSection('Interface')];
  lines.push(input.client_private_key === null ? 'PrivateKey = <paste-your-private-key-here>' : wireguardLine('PrivateKey', input.client_private_key, 'peer client_private_key'));
  if (input.address) lines.push(wireguardLine('Address', input.address, 'peer allowed_ips'));
  if (input.dns) lines.push(wireguardLine('DNS', input.dns, 'tunnel dns'));
  if (input.mtu) lines.push(wireguardLine('MTU', input.mtu, 'tunnel mtu'));
  lines.push('', wireguardSection('Peer'), wireguardLine('PublicKey', input.server_public_key, 'tunnel public_key'));
  if (input.preshared_key) lines.push(wireguardLine('PresharedKey', input.preshared_key, 'peer preshared_key'));
  else if (input.preshared_key_withheld) lines.push(WITHHELD_PRESHARED_KEY);
  lines.push(wireguardLine('Endpoint', input.endpoint, 'tunnel endpoint_host'), wireguardLine('AllowedIPs', input.allowed_ips, 'tunnel split_routes'));
  if (input.persistent_keepalive) lines.push(wireguardLine('PersistentKeepalive', input.persistent_keepalive, 'peer persistent_keepalive'));
  return lines.join('\n') + '\n';
}

export interface InterfaceConfigInput {
  private_key: string;
  listen_port: number;
  peers: { public_key: string; preshared_key: string | null; allowed_ips: string[]; endpoint: string | null; persistent_keepalive: number | null }[];
}

/** The `wg setconf` file of the appliance's own interface (no wg-quick-only keys such as Address), through wireguardLine. */
export function renderInterfaceConfig(input: InterfaceConfigInput): string {
  const lines = [wireguardSection('Interface'), wireguardLine('PrivateKey', input.private_key, 'tunnel private_key'), wireguardLine('ListenPort', input.listen_port, 'tunnel listen_port')];
  for (const [index, peer] of input.peers.entries()) {
    const field = (name: string) => `peer ${index + 1} ${name}`;
    lines.push('', wireguardSection('Peer'), wireguardLine('PublicKey', peer.public_key, field('public_key')));
    if (peer.preshared_key) lines.push(wireguardLine('PresharedKey', peer.preshared_key, field('preshared_key')));
    if (peer.allowed_ips.length > 0) lines.push(wireguardLine('AllowedIPs', peer.allowed_ips.join(', '), field('allowed_ips')));
    if (peer.endpoint) lines.push(wireguardLine('Endpoint', peer.endpoint, field('endpoint')));
    if (peer.persistent_keepalive) lines.push(wireguardLine('PersistentKeepalive', peer.persistent_keepalive, field('persistent_keepalive')));
  }
  return lines.join('\n') + '\n';
}
