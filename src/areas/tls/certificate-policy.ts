import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** What the API's certificate must satisfy (the policy fields of /settings/tls). */
export interface CertificatePolicy {
  block_expired: boolean;
  block_weak_keys: boolean;
}

/** A certificate and its key as served: the leaf first, then any chain. */
export interface CertificateMaterial {
  cert_pem: string;
  key_pem: string;
}

/** The served certificate as GET /settings/tls shows it. */
export interface CertificateDescription {
  subject: string;
  issuer: string;
  serial: string;
  not_before: string;
  not_after: string;
  names: string[];
  fingerprint_sha256: string;
  key: string;
}

/** Below these a key is weak (NIST SP 800-57 / the CA/Browser Forum baseline): RSA and DSA 2048 bits, EC 256. */
const MIN_RSA_BITS = 2048;
const STRONG_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);
/** Signature hashes no current client accepts. */
const WEAK_HASHES = new Set(['MD2', 'MD4', 'MD5', 'SHA-1', 'SHA1']);

/** Why `material` may not be served under `policy` at `now`, or null. The leaf is the first certificate. */
export function certificateProblem(material: CertificateMaterial, policy: CertificatePolicy, now: number): string | null {
  let leaf: X509Certificate;
  let key: KeyObject;
  try {
    leaf = new X509Certificate(material.cert_pem);
  } catch {
    return 'the certificate is not a PEM X.509 certificate';
  }
  try {
    key = createPrivateKey(material.key_pem);
  } catch {
    return 'the key is not a PEM private key (unencrypted PKCS#8, PKCS#1 or SEC1)';
  }
  if (!leaf.checkPrivateKey(key)) return 'the certificate does not match the key';
  if (policy.block_expired) {
    if (Date.parse(leaf.validTo) <= now) return `the certificate expired on ${new Date(leaf.validTo).toISOString()}`;
    if (Date.parse(leaf.validFrom) > now) return `the certificate is not valid before ${new Date(leaf.validFrom).toISOString()}`;
  }
  if (policy.block_weak_keys) {
    const weak = weakness(leaf);
    if (weak) return `the certificate is weaker than the policy (block_weak_keys): ${weak}`;
  }
  try {
    // What the listener will do with it: a chain OpenSSL refuses is refused here, not at the next handshake.
    createSecureContext({ cert: material.cert_pem, key: material.key_pem });
  } catch (error) {
    return `the certificate and key are refused by OpenSSL: ${(error as Error).message}`;
  }
  return null;
}

/** Why the leaf's key or signature is weak, or null. */
function weakness(leaf: X509Certificate): string | null {
  const details = leaf.publicKey.asymmetricKeyDetails ?? {};
  const type = leaf.publicKey.asymmetricKeyType;
  if ((type === 'rsa' || type === 'rsa-pss' || type === 'dsa') && (details.modulusLength ?? 0) < MIN_RSA_BITS) {
    return `${type.toUpperCase()} key of ${details.modulusLength} bits (at least ${MIN_RSA_BITS})`;
  }
  if (type === 'dsa') return 'DSA keys are not accepted';
  if (type === 'ec' && !STRONG_CURVES.has(String(details.namedCurve))) return `EC key on ${details.namedCurve} (P-256, P-384 or P-521)`;
  const hash = signatureHash(leaf);
  if (hash && WEAK_HASHES.has(hash.toUpperCase())) return `signed with ${hash}`;
  return null;
}

/** The hash of the leaf's signature (`SHA-256`), read with @peculiar/x509 (Node's X509Certificate has no field for it). */
function signatureHash(leaf: X509Certificate): string | null {
  try {
    const algorithm = new x509.X509Certificate(leaf.raw).signatureAlgorithm as { hash?: { name?: string } };
    return algorithm.hash?.name ?? null;
  } catch {
    return null;
  }
}

export function describe(material: CertificateMaterial): CertificateDescription {
  const leaf = new X509Certificate(material.cert_pem);
  const details = leaf.publicKey.asymmetricKeyDetails ?? {};
  const type = String(leaf.publicKey.asymmetricKeyType).toUpperCase();
  return {
    subject: leaf.subject.replace(/\n/g, ', '),
    issuer: leaf.issuer.replace(/\n/g, ', '),
    serial: leaf.serialNumber.toUpperCase(),
    not_before: new Date(leaf.validFrom).toISOString(),
    not_after: new Date(leaf.validTo).toISOString(),
    names: (leaf.subjectAltName ?? '').split(', ').filter(Boolean).map((name) => name.replace(/^(DNS|IP Address):/, '')),
    fingerprint_sha256: createHash('sha256').update(leaf.raw).digest('hex').toUpperCase().match(/../g)!.join(':'),
    key: details.namedCurve ? `${type} ${details.namedCurve}` : `${type} ${details.modulusLength ?? ''}`.trim(),
  };
}
