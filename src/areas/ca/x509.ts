import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto, createHash, randomBytes, X509Certificate } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
import { isIP } from 'node:net';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** Every key of the local CA and its certificates is ECDSA P-256 signed with SHA-256. */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;

export interface IssuedMaterial {
  certificate_pem: string;
  private_key_pem: string;
  serial: string;
  not_before: string;
  not_after: string;
}

/** A positive 128-bit serial as uppercase hex (top bit cleared so DER needs no sign byte). */
function newSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;
  return bytes.toString('hex').toUpperCase();
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importPrivateKey(pem: string): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(pem), ALGORITHM, false, ['sign']);
}

/** Escapes a value for an RFC 4514 distinguished name. */
const dnValue = (value: string) => value.replace(/([,+"\\<>;=])/g, '\\$1').replace(/^([ #])/, '\\$1').replace(/ $/, '\\ ');

export async function createRootCa(options: { commonName: string; organization: string; validityDays: number; now: number }) {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(options.now - 60_000);
  const notAfter = new Date(options.now + options.validityDays * DAY);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: newSerial(),
    name: `CN=${dnValue(options.commonName)}, O=${dnValue(options.organization)}`,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate_pem: certificate.toString('pem'), private_key_pem: await privateKeyPem(keys.privateKey) };
}

export function describeCertificate(pem: string) {
  const certificate = new x509.X509Certificate(pem);
  return {
    subject: certificate.subject,
    serial: certificate.serialNumber.toUpperCase(),
    not_before: certificate.notBefore.toISOString(),
    not_after: certificate.notAfter.toISOString(),
    fingerprint: createHash('sha256').update(Buffer.from(certificate.rawData)).digest('hex').toUpperCase().match(/../g)!.join(':'),
  };
}

/** Issues a server or client certificate signed by the CA; the CN is always among the SANs. */
export async function issueCertificate(
  ca: { certificate_pem: string; private_key_pem: string },
  options: { certType: 'server' | 'client'; commonName: string; sans: string[]; validityDays: number; now: number },
): Promise<IssuedMaterial> {
  const caCertificate = new x509.X509Certificate(ca.certificate_pem);
  const signingKey = await importPrivateKey(ca.private_key_pem);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const serial = newSerial();
  const notBefore = new Date(options.now - 60_000);
  // Never beyond the CA's own validity.
  const notAfter = new Date(Math.min(options.now + options.validityDays * DAY, caCertificate.notAfter.getTime()));
  const names = options.sans.map((value) => (isIP(value) ? { type: 'ip' as const, value } : { type: 'dns' as const, value }));
  const usage = options.certType === 'server'
    ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
    : x509.KeyUsageFlags.digitalSignature;
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `CN=${dnValue(options.commonName)}`,
    issuer: caCertificate.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usage, true),
      new x509.ExtendedKeyUsageExtension([options.certType === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(caCertificate),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificate_pem: certificate.toString('pem'),
    private_key_pem: await privateKeyPem(keys.privateKey),
    serial,
    not_before: notBefore.toISOString(),
    not_after: notAfter.toISOString(),
  };
}

/**
 * A signed X.509 v2 CRL of the revoked serials. PEM label `X509 CRL` (what OpenSSL and strongSwan read),
 * not the library's `CRL`.
 */
export async function createCrl(
  ca: { certificate_pem: string; private_key_pem: string },
  revoked: { serial: string; revoked_at: string }[],
  now: number,
): Promise<string> {
  const caCertificate = new x509.X509Certificate(ca.certificate_pem);
  const crl = await x509.X509CrlGenerator.create({
    issuer: caCertificate.subject,
    thisUpdate: new Date(now),
    nextUpdate: new Date(now + 7 * DAY),
    signingAlgorithm: ALGORITHM,
    signingKey: await importPrivateKey(ca.private_key_pem),
    entries: revoked.map((entry) => ({ serialNumber: entry.serial, revocationDate: new Date(entry.revoked_at), reason: x509.X509CrlReason.unspecified })),
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(caCertificate)],
  });
  return x509.PemConverter.encode(crl.rawData, 'X509 CRL');
}

/** Node's own X.509 view, used to confirm a PEM parses (e.g. before storing). */
export const parsesAsCertificate = (pem: string): boolean => {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
};
