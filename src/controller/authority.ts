import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';
import { createRootCa, issueCertificate } from '../areas/ca/x509.js';
import type { Sealer } from '../core/crypto.js';
import { badRequest } from '../core/errors.js';
import { inTransaction, LOCKS, type Pool } from './database.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const CLIENT_DAYS = 397;

export interface CaMaterial {
  certificate_pem: string;
  private_key_pem: string;
}

/**
 * The controller's certificate authority, kept in PostgreSQL with its key sealed (the seal key is every controller
 * process's BULWARK_CONTROLLER_KEY_FILE). Created once: the first process to start makes it under an advisory lock.
 */
export async function loadOrCreateAuthority(pool: Pool, sealer: Sealer): Promise<CaMaterial> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', LOCKS.ca);
    const found = await client.query<{ certificate: string; sealed_key: string }>('SELECT certificate, sealed_key FROM certificate_authority WHERE id = 1');
    if (found.rows[0]) {
      try {
        return { certificate_pem: found.rows[0].certificate, private_key_pem: sealer.open(found.rows[0].sealed_key) };
      } catch {
        throw new Error('the fleet CA key in the database does not open with this BULWARK_CONTROLLER_KEY_FILE: every controller process needs the same key file');
      }
    }
    const created = await createRootCa({ commonName: 'Bulwark fleet CA', organization: 'Bulwark', validityDays: 3650, now: Date.now() });
    await client.query('INSERT INTO certificate_authority (id, certificate, sealed_key) VALUES (1, $1, $2)', [created.certificate_pem, sealer.seal(created.private_key_pem)]);
    return created;
  });
}

/** This process's TLS server certificate for the names agents dial (not state of record: made at every start). */
export function issueServerCertificate(ca: CaMaterial, names: readonly string[]) {
  return issueCertificate(ca, { certType: 'server', commonName: names[0], sans: [...names], validityDays: 30, now: Date.now() });
}

/** What signing needs from the CA, parsed and imported once per process (not at every enrolment). */
interface Signer {
  certificate: x509.X509Certificate;
  key: webcrypto.CryptoKey;
  keyIdentifier: x509.AuthorityKeyIdentifierExtension;
}

const signers = new WeakMap<CaMaterial, Promise<Signer>>();

function signerOf(ca: CaMaterial): Promise<Signer> {
  let signer = signers.get(ca);
  if (!signer) {
    signer = (async () => {
      const certificate = new x509.X509Certificate(ca.certificate_pem);
      const key = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.private_key_pem), ALGORITHM, false, ['sign']);
      return { certificate, key, keyIdentifier: await x509.AuthorityKeyIdentifierExtension.create(certificate) };
    })();
    signers.set(ca, signer);
  }
  return signer;
}

/**
 * Signs an appliance's certificate request: the appliance keeps its private key, the controller never sees it. The
 * subject is the controller's choice (the appliance id), whatever the request asked for.
 */
export async function signClientRequest(ca: CaMaterial, requestPem: string, applianceId: string): Promise<{ certificate_pem: string; serial: string }> {
  let request: x509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(requestPem);
  } catch {
    throw badRequest('body.csr: not a PEM certificate request');
  }
  if (!(await request.verify())) throw badRequest('body.csr: its signature does not verify');
  const signer = await signerOf(ca);
  const serialBytes = randomBytes(16);
  serialBytes[0] = (serialBytes[0] & 0x7f) | 0x01;
  const serial = serialBytes.toString('hex').toUpperCase();
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `CN=${applianceId}`,
    issuer: signer.certificate.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(Math.min(now + CLIENT_DAYS * 86_400_000, signer.certificate.notAfter.getTime())),
    signingAlgorithm: ALGORITHM,
    // The request's key as it came (its SubjectPublicKeyInfo), not imported and exported again.
    publicKey: request.publicKey,
    signingKey: signer.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      signer.keyIdentifier,
    ],
  });
  return { certificate_pem: certificate.toString('pem'), serial };
}
