import type { Server as TlsServer, SecureContextOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { Static } from 'typebox';
import type { AppContext } from '../../context.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest } from '../../core/errors.js';
import type { CaService } from '../ca/service.js';
import { validatePemPath } from '../settings/service.js';
import { certificateProblem, describe, type CertificateDescription, type CertificateMaterial } from './certificate-policy.js';
import { TlsSettings } from './schema.js';
import { hostNames, TlsStore } from './tls-store.js';
import type { CertificateValidity } from '../common/certificate-expiry.js';

type Settings = Static<typeof TlsSettings>;
export type CertificateSource = 'local-ca' | 'files' | 'acme';

const DAY = 86_400_000;
const oneLine = (text: string) => text.replace(/[^\x20-\x7e]+/g, ' ').trim().slice(0, 300);

/**
 * The API's HTTPS: which certificate new connections get (the local CA's for this host, files, or an ACME
 * certificate published to the local TLS store), the oldest TLS version accepted, the plain listener's redirect
 * and HSTS. A change of /settings/tls is checked before it is stored (a certificate that does not match its
 * key, is expired or weaker than the policy is a 400) and then installed on every HTTPS server with
 * setSecureContext: new handshakes get it, connections already open keep theirs. No restart.
 */
export class ApiTlsService {
  readonly settings: SingletonModel<Settings>;
  readonly store: TlsStore;
  private readonly servers = new Set<TlsServer>();
  private served: { source: CertificateSource; description: CertificateDescription; options: SecureContextOptions } | null = null;
  private lastError: string | null = null;
  /** One install at a time, in the order asked. */
  private chain: Promise<void> = Promise.resolve();
  private renewTimer: NodeJS.Timeout | null = null;
  /** Read on every request (hooks in routes.ts); kept in step with the settings. */
  redirect = false;
  hsts = 'max-age=31536000';

  constructor(private readonly context: AppContext, private readonly ca: CaService) {
    this.store = new TlsStore(context.config.dataDir);
    this.settings = context.models.singleton({
      kind: 'settings_tls', noun: 'API TLS settings (applied to new connections at once)', writeAccess: 'settings:write',
      schema: TlsSettings, validate: (data) => this.check(data as Settings),
    }) as unknown as SingletonModel<Settings>;
    context.models.onChanged(['settings_tls'], () => this.apply());
    // A new root (POST /ca) makes the served local-CA certificate untrusted by clients of the new one.
    ca.onRootChanged(() => (this.sourceOf(this.settings.read()) === 'local-ca' ? this.apply() : undefined));
  }

  sourceOf(settings: Pick<Settings, 'acme_cert_id' | 'cert_path'>): CertificateSource {
    return settings.acme_cert_id ? 'acme' : settings.cert_path ? 'files' : 'local-ca';
  }

  /** Refuses settings whose certificate could not be served (the model's validator: nothing is stored then). */
  private check(settings: Settings): void {
    if (settings.cert_path && settings.acme_cert_id) throw badRequest('body.acme_cert_id and body.cert_path: choose one certificate (send "" to clear the other)');
    if (Boolean(settings.cert_path) !== Boolean(settings.key_path)) throw badRequest('body.cert_path and body.key_path are set together');
    if (settings.http_redirect && !this.context.config.tlsListen) {
      throw badRequest('body.http_redirect needs the HTTPS listener: start Bulwark with --tls-listen HOST:PORT (BULWARK_TLS_LISTEN)');
    }
    const source = this.sourceOf(settings);
    // The local CA's certificate is issued (again) when installed; what it issues always meets the policy.
    if (source === 'local-ca') return;
    const material = this.selected(settings);
    const problem = certificateProblem(material, settings, this.context.clock.now());
    if (problem) throw badRequest(`body.${source === 'acme' ? 'acme_cert_id' : 'cert_path'}: ${problem}`);
  }

  /** The certificate and key of a files or ACME choice, as on disk now. */
  private selected(settings: Settings): CertificateMaterial {
    if (this.sourceOf(settings) === 'acme') {
      const material = this.store.acme(settings.acme_cert_id);
      if (!material) {
        throw badRequest(`body.acme_cert_id: ACME certificate ${settings.acme_cert_id} is not in the local TLS store: give it an export target of kind local-tls-store and publish it (POST /api/v1/acme/certs/{id}/publish)`);
      }
      return material;
    }
    return { cert_pem: this.readConfined(settings.cert_path, 'cert_path', /-----BEGIN CERTIFICATE-----/), key_pem: this.readConfined(settings.key_path, 'key_path', /-----BEGIN (RSA |EC )?PRIVATE KEY-----/) };
  }

  /** A PEM file inside the data directory (as before), read where it really is: a link out of it is refused. */
  private readConfined(path: string, field: string, label: RegExp): string {
    const root = this.context.config.dataDir;
    // Where the path really leads is checked before anything is read from it.
    let real: string | null = null;
    try {
      real = realpathSync(resolve(root, path));
    } catch {
      // missing: validatePemPath says so
    }
    if (real !== null && !real.startsWith(`${realpathSync(root)}${sep}`)) {
      throw badRequest(`body.${field} must be a path inside the data directory (${root}); symbolic links out of it are not followed`);
    }
    validatePemPath(root, path, field, label);
    return readFileSync(real ?? resolve(root, path), 'utf8');
  }

  /** Installs the selected certificate on every HTTPS server (serialised with other installs). */
  apply(): Promise<void> {
    const run = this.chain.then(() => this.install(false));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async install(fallBack: boolean): Promise<void> {
    const settings = this.settings.read();
    this.redirect = settings.http_redirect && this.context.config.tlsListen !== null;
    this.hsts = `max-age=${settings.hsts_max_age}`;
    // Without the HTTPS listener nothing is served (and no CA or certificate is created).
    if (!this.context.config.tlsListen) return;
    let source = this.sourceOf(settings);
    let material: CertificateMaterial;
    try {
      material = source === 'local-ca' ? await this.localCaCertificate() : this.selected(settings);
      const problem = certificateProblem(material, settings, this.context.clock.now());
      if (problem) throw new Error(problem);
      this.lastError = null;
    } catch (error) {
      if (!fallBack || source === 'local-ca') throw error;
      // At start a selection that no longer holds (a file removed, a certificate expired) must not leave the
      // appliance without HTTPS: serve the local CA's and say why.
      this.lastError = `the ${source} certificate is not served: ${oneLine((error as Error).message)}; serving the local CA's`;
      this.context.log.error({ reason: this.lastError }, 'API TLS certificate refused at start');
      source = 'local-ca';
      material = await this.localCaCertificate();
    }
    const options: SecureContextOptions = { cert: material.cert_pem, key: material.key_pem, minVersion: settings.min_version === 'tls13' ? 'TLSv1.3' : 'TLSv1.2' };
    for (const server of this.servers) server.setSecureContext(options);
    const changed = this.served?.description.serial !== describe(material).serial;
    this.served = { source, description: describe(material), options };
    if (changed) this.context.log.info({ source, serial: this.served.description.serial, not_after: this.served.description.not_after }, 'API TLS certificate installed');
  }

  private async localCaCertificate(): Promise<CertificateMaterial> {
    const root = await this.ca.ensureRoot();
    const general = this.context.store.getSingleton('system_general') ?? {};
    const names = hostNames({ domain: typeof general.domain === 'string' ? general.domain : '', listenHost: this.context.config.tlsListen?.host });
    const { material, issued } = await this.store.ensureLocalCa(root, names, this.context.clock.now());
    if (issued) this.context.log.info({ names }, 'the local CA issued the API\'s HTTPS certificate');
    return material;
  }

  /** Serves `server` with the installed certificate from now on (and every later change). */
  attach(server: TlsServer): void {
    this.servers.add(server);
    if (this.served) server.setSecureContext(this.served.options);
  }

  detach(server: TlsServer): void {
    this.servers.delete(server);
  }

  /** Installs the selection at start (falling back to the local CA's) and checks the local CA's daily. */
  async start(): Promise<void> {
    await (this.chain = this.chain.then(() => this.install(true)));
    this.renewTimer = setInterval(() => {
      if (this.sourceOf(this.settings.read()) !== 'local-ca') return;
      this.apply().catch((error: unknown) => this.context.log.error({ err: error }, 'renewing the local CA\'s API certificate failed'));
    }, DAY);
    this.renewTimer.unref();
  }

  stop(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
  }

  /**
   * The `local-tls-store` export target of an ACME certificate: checked against the policy, stored under
   * `<data>/tls/acme/`, and installed at once when /settings/tls selects it (a renewal is served at once).
   */
  async publishAcme(certId: string, material: CertificateMaterial): Promise<void> {
    const settings = this.settings.read();
    const problem = certificateProblem(material, settings, this.context.clock.now());
    if (problem) {
      // The certificate served so far stays; the status says why the renewal is not.
      if (settings.acme_cert_id === certId) this.lastError = `the new material of ACME certificate ${certId} is not served: ${problem}`;
      throw new Error(`refused for the API's HTTPS: ${problem}`);
    }
    this.store.storeAcme(certId, material);
    if (settings.acme_cert_id === certId) await this.apply();
  }

  /** The served certificate when it comes from files given to the API (`cert_path`), for the hourly expiry check; the CA's and ACME's are checked where they are kept. */
  fileValidities(): CertificateValidity[] {
    if (this.served?.source !== 'files') return [];
    return [{ id: 'api-tls', name: `API HTTPS certificate ${this.served.description.subject}`, expires_at: this.served.description.not_after, source: 'file' }];
  }

  /** The certificate the HTTPS listener serves now (PEM, leaf first), or null without one: a cluster peer pins its key. */
  servedCertificate(): string | null {
    return this.served ? String(this.served.options.cert) : null;
  }

  status(listening: AddressInfo | null) {
    const settings = this.settings.read();
    return {
      listening: listening ? (listening.family === 'IPv6' ? `[${listening.address}]:${listening.port}` : `${listening.address}:${listening.port}`) : null,
      min_version: settings.min_version,
      serving: this.served ? { source: this.served.source, ...this.served.description } : null,
      last_error: this.lastError,
      http_redirect: this.redirect,
    };
  }
}
