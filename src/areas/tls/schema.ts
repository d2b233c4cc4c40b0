import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';

/**
 * /settings/tls: the API's HTTPS certificate and policy (wire-format §7.1 keeps the three policy fields; the
 * certificate choice and the plain listener's redirect are ours). Applied to new connections at once.
 */
export const TlsSettings = Type.Object({
  min_version: StringEnum(['tls12', 'tls13'], { default: 'tls12', description: 'oldest TLS version the HTTPS listener accepts' }),
  block_expired: Type.Boolean({ default: true, description: 'refuse a certificate that is expired or not yet valid' }),
  block_weak_keys: Type.Boolean({ default: true, description: 'refuse RSA or DSA keys under 2048 bits, EC keys other than P-256/384/521, MD5 or SHA-1 signatures' }),
  cert_path: Type.String({ default: '', maxLength: 1024, description: 'PEM certificate (leaf first, then its chain) inside the data directory; with key_path, the served certificate' }),
  key_path: Type.String({ default: '', maxLength: 1024, description: 'PEM private key of cert_path, inside the data directory' }),
  acme_cert_id: Type.String({ default: '', maxLength: 64, description: 'an ACME certificate published to the local TLS store (an export target of kind local-tls-store); served, and its renewals at once' }),
  http_redirect: Type.Boolean({ default: false, description: 'the plain HTTP listener answers every request with 301 to the same path over HTTPS (needs --tls-listen)' }),
  hsts_max_age: Type.Integer({ minimum: 0, maximum: 63_072_000, default: 31_536_000, description: 'Strict-Transport-Security max-age (seconds) on HTTPS answers; 0 tells browsers to forget it' }),
});

const Served = Type.Object({
  source: StringEnum(['local-ca', 'files', 'acme']),
  subject: Type.String(),
  issuer: Type.String(),
  serial: Type.String(),
  not_before: Type.String(),
  not_after: Type.String(),
  names: Type.Array(Type.String()),
  fingerprint_sha256: Type.String(),
  key: Type.String(),
});

export const TlsStatus = Type.Object({
  listening: Type.Union([Type.String(), Type.Null()], { description: 'HOST:PORT of the HTTPS listener, null when --tls-listen is off' }),
  min_version: StringEnum(['tls12', 'tls13']),
  serving: Type.Union([Served, Type.Null()], { description: 'the certificate new connections get' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the selected certificate is not the one served (at start, a renewal refused by the policy), else null' }),
  http_redirect: Type.Boolean(),
});
