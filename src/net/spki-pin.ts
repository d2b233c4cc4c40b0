/**
 * Certificate pinning by public key: the SHA-256 of a certificate's SubjectPublicKeyInfo (DER), as hex. A paired
 * cluster peer is trusted for this key only (src/areas/cluster/sync-*.ts): no CA, no host name, no first use.
 */
import { X509Certificate } from 'node:crypto';
import { sha256Hex } from '../core/crypto.js';

/** The pin of a certificate (PEM, or the leaf of a PEM chain). */
export function spkiSha256(certificate: string | X509Certificate): string {
  const cert = typeof certificate === 'string' ? new X509Certificate(certificate) : certificate;
  return sha256Hex(cert.publicKey.export({ type: 'spki', format: 'der' }));
}

/** A pin as a client may write it: hex, with or without colons, any case. */
export const normalisePin = (pin: string): string => pin.replace(/:/g, '').toLowerCase();

export const PIN_PATTERN = '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$';
