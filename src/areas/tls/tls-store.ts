import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ensureDirectoryNoFollow, isRegularFileNoFollow, replaceFileNoFollow } from '../../platform/nofollow-files.js';
import { issueCertificate } from '../ca/x509.js';
import type { CertificateMaterial } from './certificate-policy.js';

const DAY = 86_400_000;
/** The local CA's certificate for the API lives 397 days (what browsers accept for any server certificate). */
export const LOCAL_CA_VALIDITY_DAYS = 397;
/** Issued again this long before it expires (checked at start and daily). */
export const LOCAL_CA_RENEW_BEFORE_DAYS = 30;

/**
 * The API's certificates on disk, under `<data>/tls/` (the data directory is private; keys are 0600):
 * `local-ca.crt`/`.key` — issued by the local CA for this host — and `acme/<cert-id>.crt`/`.key` — ACME
 * certificates published by a `local-tls-store` export target.
 */
export class TlsStore {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'tls');
  }

  private read(dir: string, name: string): CertificateMaterial | null {
    const cert = join(dir, `${name}.crt`);
    const key = join(dir, `${name}.key`);
    if (!isRegularFileNoFollow(cert) || !isRegularFileNoFollow(key)) return null;
    return { cert_pem: readFileSync(cert, 'utf8'), key_pem: readFileSync(key, 'utf8') };
  }

  private write(dir: string, name: string, material: CertificateMaterial): void {
    ensureDirectoryNoFollow(this.dir, 0o700);
    if (dir !== this.dir) ensureDirectoryNoFollow(dir, 0o700);
    // The key first: a reader never finds a new certificate next to the old key.
    replaceFileNoFollow(dir, `${name}.key`, material.key_pem, 0o600);
    replaceFileNoFollow(dir, `${name}.crt`, material.cert_pem, 0o644);
  }

  localCa(): CertificateMaterial | null {
    return this.read(this.dir, 'local-ca');
  }

  acme(certId: string): CertificateMaterial | null {
    return /^[A-Za-z0-9-]{1,64}$/.test(certId) ? this.read(join(this.dir, 'acme'), certId) : null;
  }

  storeAcme(certId: string, material: CertificateMaterial): void {
    if (!/^[A-Za-z0-9-]{1,64}$/.test(certId)) throw new Error(`not a certificate id: ${certId}`);
    this.write(join(this.dir, 'acme'), certId, material);
  }

  /**
   * The local CA's certificate for `names`, issued again when there is none, when the root changed, when it
   * expires within 30 days or when it does not cover every name and address.
   */
  async ensureLocalCa(root: { certificate_pem: string; private_key_pem: string }, names: string[], now: number): Promise<{ material: CertificateMaterial; issued: boolean }> {
    const existing = this.localCa();
    if (existing && !localCaStale(existing, root.certificate_pem, names, now)) return { material: existing, issued: false };
    const issued = await issueCertificate(root, { certType: 'server', commonName: names[0], sans: names, validityDays: LOCAL_CA_VALIDITY_DAYS, now });
    const material = { cert_pem: issued.certificate_pem, key_pem: issued.private_key_pem };
    this.write(this.dir, 'local-ca', material);
    return { material, issued: true };
  }
}

/** Why the local-CA certificate must be issued again. */
function localCaStale(material: CertificateMaterial, rootPem: string, names: string[], now: number): boolean {
  try {
    const leaf = new X509Certificate(material.cert_pem);
    if (!leaf.verify(new X509Certificate(rootPem).publicKey)) return true;
    if (Date.parse(leaf.validTo) - now < LOCAL_CA_RENEW_BEFORE_DAYS * DAY) return true;
    const covered = new Set((leaf.subjectAltName ?? '').split(', ').map((name) => name.replace(/^(DNS|IP Address):/, '').toLowerCase()));
    return names.some((name) => !covered.has(canonicalAddress(name).toLowerCase()));
  } catch {
    return true;
  }
}

/** IPv6 addresses as OpenSSL prints them in a SAN (full groups, no `::`), so names compare. */
function canonicalAddress(name: string): string {
  if (isIP(name) !== 6) return name;
  const [head, tail = ''] = name.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = name.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.map((group) => parseInt(group, 16).toString(16).toUpperCase()).join(':');
}

/**
 * The names and addresses a client may use to reach the appliance: its host name (and with the configured
 * domain), `localhost`, every address of its interfaces (link-local IPv6 left out: it needs a zone) and the
 * address the listener is bound to. The first is the certificate's common name.
 */
export function hostNames(options: { domain?: string; hostname?: string; listenHost?: string }): string[] {
  const names = new Set<string>();
  const host = (options.hostname || hostname()).toLowerCase();
  const valid = (name: string) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(name) && name.length <= 253;
  if (valid(host)) names.add(host);
  const domain = (options.domain ?? '').toLowerCase();
  if (domain && valid(`${host.split('.')[0]}.${domain}`)) names.add(`${host.split('.')[0]}.${domain}`);
  names.add('localhost');
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv6' && address.address.toLowerCase().startsWith('fe80')) continue;
      names.add(address.address);
    }
  }
  if (options.listenHost && isIP(options.listenHost) && !['0.0.0.0', '::'].includes(options.listenHost)) names.add(options.listenHost);
  return [...names];
}
