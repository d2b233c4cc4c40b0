import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';

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
  return /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(value) && Buffer.from(value, 'base64').length === 32;
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
  endpoint: string;
  allowed_ips: string;
  persistent_keepalive: number | null;
}

/** The wg-quick file a client imports (the layout of wire-format §1.6). */
export function renderPeerConfig(input: PeerConfigInput): string {
  const lines = ['[Interface]', `PrivateKey = ${input.client_private_key ?? '<paste-your-private-key-here>'}`];
  if (input.address) lines.push(`Address = ${input.address}`);
  if (input.dns) lines.push(`DNS = ${input.dns}`);
  if (input.mtu) lines.push(`MTU = ${input.mtu}`);
  lines.push('', '[Peer]', `PublicKey = ${input.server_public_key}`);
  if (input.preshared_key) lines.push(`PresharedKey = ${input.preshared_key}`);
  lines.push(`Endpoint = ${input.endpoint}`, `AllowedIPs = ${input.allowed_ips}`);
  if (input.persistent_keepalive) lines.push(`PersistentKeepalive = ${input.persistent_keepalive}`);
  return lines.join('\n') + '\n';
}

export interface InterfaceConfigInput {
  private_key: string;
  listen_port: number;
  peers: { public_key: string; preshared_key: string | null; allowed_ips: string[]; endpoint: string | null; persistent_keepalive: number | null }[];
}

/** The `wg setconf` file of the appliance's own interface (no wg-quick-only keys such as Address). */
export function renderInterfaceConfig(input: InterfaceConfigInput): string {
  const lines = ['[Interface]', `PrivateKey = ${input.private_key}`, `ListenPort = ${input.listen_port}`];
  for (const peer of input.peers) {
    lines.push('', '[Peer]', `PublicKey = ${peer.public_key}`);
    if (peer.preshared_key) lines.push(`PresharedKey = ${peer.preshared_key}`);
    if (peer.allowed_ips.length > 0) lines.push(`AllowedIPs = ${peer.allowed_ips.join(', ')}`);
    if (peer.endpoint) lines.push(`Endpoint = ${peer.endpoint}`);
    if (peer.persistent_keepalive) lines.push(`PersistentKeepalive = ${peer.persistent_keepalive}`);
  }
  return lines.join('\n') + '\n';
}
