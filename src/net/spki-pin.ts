/**
 * Certificate pinning by public key: the SHA-256 of a certificate's SubjectPublicKeyInfo (DER), as hex. A paired
 * cluster peer is trusted for this key only (src/areas/cluster/sync-*.ts): no CA, no host name, no first use.
 */
import { X509Certificate } from 'node:crypto';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';
import { safeEqual, sha256Hex } from '../core/crypto.js';

/** The pin of a certificate (PEM, or the leaf of a PEM chain). */
export function spkiSha256(certificate: string | X509Certificate): string {
  const cert = typeof certificate === 'string' ? new X509Certificate(certificate) : certificate;
  return sha256Hex(cert.publicKey.export({ type: 'spki', format: 'der' }));
}

/** A pin as a client may write it: hex, with or without colons, any case. */
export const normalisePin = (pin: string): string => pin.replace(/:/g, '').toLowerCase();

export const PIN_PATTERN = '^([0-9A-Fa-f]{2}:?){31}[0-9A-Fa-f]{2}$';

/**
 * An undici connector that completes the TLS handshake without a CA check and then accepts the socket only when
 * the server's certificate carries the pinned key. Sessions are not resumed, so every connection shows its
 * certificate again.
 */
export function pinnedConnector(
  options: ConnectionOptions,
  pin: string,
  refusal: (message: string) => Error,
): buildConnector.connector {
  const connect = buildConnector({ ...options, rejectUnauthorized: false, maxCachedSessions: 0 });
  const wanted = normalisePin(pin);
  return (target, callback) => {
    connect(target, (error, socket) => {
      if (error || !socket) return callback(error ?? refusal('no connection'), null);
      let presented: string | null = null;
      try {
        const certificate = (socket as TLSSocket).getPeerX509Certificate?.();
        presented = certificate ? spkiSha256(certificate) : null;
      } catch {
        presented = null;
      }
      if (presented === null || !safeEqual(presented, wanted)) {
        socket.destroy();
        return callback(refusal(`the certificate ${target.hostname}:${target.port} presented does not carry the pinned key (pinned ${wanted.slice(0, 16)}…, presented ${presented ? `${presented.slice(0, 16)}…` : 'none'})`), null);
      }
      callback(null, socket);
    });
  };
}
