import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigObject } from '../../store/config-store.js';
import { isIP } from 'node:net';
import { CaCertStored } from './schema.js';
import type { CertificateValidity } from '../common/certificate-expiry.js';
import { createCrl, createRootCa, describeCertificate, issueCertificate } from './x509.js';

const ROOT_KIND = 'ca_root';
const HOSTNAME = /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Normalises SANs given as an array or a comma/space-separated string; each must be a DNS name or an IP. */
export function normaliseSans(commonName: string, sans: unknown): string[] {
  const given = Array.isArray(sans) ? sans.map(String) : typeof sans === 'string' ? sans.split(/[\s,]+/) : [];
  const all = [commonName, ...given].map((s) => s.trim()).filter(Boolean);
  for (const name of all) {
    if (!isIP(name) && (!HOSTNAME.test(name) || name.length > 253)) throw badRequest(`body.sans: "${name}" is not a DNS name or IP address`);
  }
  return [...new Set(all.map((s) => (isIP(s) ? s : s.toLowerCase())))].sort();
}

/** The appliance's own certificate authority: one root, certificates it issued, revocation and a CRL. */
export class CaService {
  readonly certs: CollectionModel;
  /** Told after POST /ca replaced the root (the API's own certificate is issued again from it). */
  private readonly rootListeners: (() => unknown)[] = [];

  constructor(private readonly context: AppContext) {
    this.certs = context.models.collection({
      kind: 'ca_cert', noun: 'certificate', writeAccess: 'settings:write',
      schema: CaCertStored,
      writeOnly: ['private_key_pem'],
    });
  }

  /** The root certificate and its key, or undefined before one is generated (the API's own certificate is issued with it). */
  root(): { certificate_pem: string; private_key_pem: string } | undefined {
    const data = this.context.store.getSingleton(ROOT_KIND);
    if (!data) return undefined;
    return { certificate_pem: String(data.certificate_pem), private_key_pem: this.context.sealer.open(String(data.private_key_pem)) };
  }

  private requireRoot() {
    const root = this.root();
    if (!root) throw badRequest('the local CA is not initialised: POST /api/v1/ca first');
    return root;
  }

  info() {
    const data = this.context.store.getSingleton(ROOT_KIND);
    if (!data) return { initialized: false, subject: '', serial: '', not_before: '', not_after: '', fingerprint: '', algorithm: '' };
    return { initialized: true, ...describeCertificate(String(data.certificate_pem)), algorithm: 'ECDSA P-256' };
  }

  onRootChanged(listener: () => unknown): void {
    this.rootListeners.push(listener);
  }

  /** Creates (or replaces) the root; certificates issued before stay listed. */
  async generate(options: { common_name: string; organization: string; validity_days: number }) {
    await this.createRoot(options);
    for (const listener of this.rootListeners) await listener();
    return this.info();
  }

  private async createRoot(options: { common_name: string; organization: string; validity_days: number }) {
    const root = await createRootCa({ commonName: options.common_name, organization: options.organization, validityDays: options.validity_days, now: this.context.clock.now() });
    this.context.store.putSingleton(ROOT_KIND, {
      common_name: options.common_name,
      organization: options.organization,
      certificate_pem: root.certificate_pem,
      private_key_pem: this.context.sealer.seal(root.private_key_pem),
    });
  }

  /** The root, generated with the defaults of POST /ca when there is none yet (the API's HTTPS certificate needs one). */
  async ensureRoot(): Promise<{ certificate_pem: string; private_key_pem: string }> {
    const existing = this.root();
    if (existing) return existing;
    await this.createRoot({ common_name: 'Bulwark Root CA', organization: 'Bulwark', validity_days: 3650 });
    this.context.log.info('local CA created for the API\'s HTTPS certificate (GET /api/v1/ca/cert.pem)');
    return this.root()!;
  }

  caPem(): string {
    const data = this.context.store.getSingleton(ROOT_KIND);
    if (!data) throw notFound('the local CA is not initialised');
    return String(data.certificate_pem);
  }

  async issue(body: { cert_type: 'server' | 'client'; common_name: string; sans?: unknown; validity_days: number }) {
    const root = this.requireRoot();
    const commonName = body.common_name.trim();
    const sans = normaliseSans(commonName, body.sans);
    const issued = await issueCertificate(root, { certType: body.cert_type, commonName, sans, validityDays: body.validity_days, now: this.context.clock.now() });
    const object = this.certs.create({
      cert_type: body.cert_type,
      common_name: commonName,
      sans: sans.join(','),
      serial: issued.serial,
      not_before: issued.not_before,
      not_after: issued.not_after,
      status: 'active',
      revoked_at: null,
      certificate_pem: issued.certificate_pem,
      private_key_pem: issued.private_key_pem,
    });
    return { id: object.id, certificate_pem: issued.certificate_pem, private_key_pem: issued.private_key_pem, ca_certificate_pem: root.certificate_pem };
  }

  /** The root and every certificate not revoked, with their expiry (what the hourly expiry check looks at). */
  validities(): CertificateValidity[] {
    const root = this.context.store.getSingleton(ROOT_KIND);
    const rootValidity: CertificateValidity[] = root
      ? [{ id: 'ca-root', name: String(root.common_name), expires_at: describeCertificate(String(root.certificate_pem)).not_after, source: 'local-ca-root' }]
      : [];
    return [
      ...rootValidity,
      ...this.certs.objects().filter((object) => object.data.status === 'active').map((object) => ({
        id: object.id, name: String(object.data.common_name), expires_at: String(object.data.not_after), source: 'local-ca' as const,
      })),
    ];
  }

  /** Status as read now: a certificate past not_after reads `expired`. */
  summary(object: ConfigObject) {
    const data = object.data;
    const expired = data.status === 'active' && Date.parse(String(data.not_after)) < this.context.clock.now();
    return {
      id: object.id,
      cert_type: String(data.cert_type),
      common_name: String(data.common_name),
      sans: String(data.sans),
      serial: String(data.serial),
      not_before: String(data.not_before),
      not_after: String(data.not_after),
      status: expired ? 'expired' : String(data.status),
      revoked_at: (data.revoked_at as string | null) ?? null,
      created_at: object.created_at,
    };
  }

  list() {
    return [...this.certs.objects()].reverse().map((object) => this.summary(object));
  }

  detail(id: string) {
    const object = this.certs.find(id);
    return { ...this.summary(object), certificate_pem: String(object.data.certificate_pem) };
  }

  keyPem(id: string): string {
    const object = this.certs.find(id);
    return this.certs.secret(object, 'private_key_pem') ?? '';
  }

  revoke(id: string): void {
    const object = this.certs.find(id);
    if (object.data.status === 'revoked') throw conflict(`certificate ${id} is already revoked`);
    this.context.store.update('ca_cert', id, { ...object.data, status: 'revoked', revoked_at: isoTime(this.context.clock.now()) });
  }

  /** A freshly signed CRL listing every revoked certificate issued by the current root. */
  async crl(): Promise<string> {
    const root = this.root();
    if (!root) throw notFound('the local CA is not initialised');
    const revoked = this.certs.objects()
      .filter((o) => o.data.status === 'revoked')
      .map((o) => ({ serial: String(o.data.serial), revoked_at: String(o.data.revoked_at) }));
    return createCrl(root, revoked, this.context.clock.now());
  }
}
