import { resolve } from 'node:path';
import { EVENT_TOPICS } from '../../core/events.js';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { CertificateValidity } from '../common/certificate-expiry.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, conflict } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { outboundFetch } from '../../net/outbound.js';
import { certPathProblem, certRoots } from '../../render/cert-paths.js';
import { fileModeProblem, symlinkProblem, writeConfinedFile } from '../../render/confined-file.js';
import { isCidr, isSingleLineText, isUnder } from '../../render/grammar.js';
import { systemAccount, systemGroup } from '../../platform/daemon-runtime.js';
import { placeOrder } from './acme-order.js';
import { Http01Responder, parseListen, PortInUse } from './http01-responder.js';
import { rfc2136Settings, txtPublisher, type DnsProviderAccess } from './dns01.js';
import { CertComputed, CertStored, DnsProviderComputed, DnsProviderStored, LE_PRODUCTION, TargetStored } from './schema.js';
import type { CertificateConsumer, LocalTlsStore } from './certificate-consumers.js';
import { dnsApiEndpoint } from './dns-api-endpoint.js';

const NAME = /^(\*\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
/** The config keys of a file export target (wire-format §4.3). */
const FILE_TARGET_KEYS = new Set(['cert_path', 'key_path', 'chain_path', 'owner', 'mode', 'key_mode']);
const OWNER = /^[a-z_][a-z0-9_-]{0,31}(:[a-z_][a-z0-9_-]{0,31})?$/;

/** An error message as one printable line (it lands in last_renew_error and API answers). */
const oneLine = (text: string) => text.replace(/[^\x20-\x7e]+/g, ' ').trim().slice(0, 300);

/** The uid and gid of `user` or `user:group` (a target's owner); an unknown one is the target's error. */
function ownerOf(owner: string): { uid: number; gid: number } {
  const [userName, groupName] = owner.split(':');
  const user = systemAccount(userName);
  if (!user) throw new Error(`owner ${userName} is not a user of this system`);
  if (!groupName) return { uid: user.uid, gid: user.gid };
  const group = systemGroup(groupName);
  if (group === null) throw new Error(`group ${groupName} is not a group of this system`);
  return { uid: user.uid, gid: group };
}

export function checkName(name: string, field: string): string {
  const value = name.trim().toLowerCase();
  if (value.length > 253 || !NAME.test(value)) throw badRequest(`${field}: "${name}" is not a valid DNS name`);
  return value;
}

/**
 * A certificate file path under one of the allowed roots (src/render/cert-paths.ts), with no way out of it:
 * clean, with a certificate extension, and no symbolic link on the way as the disk is now.
 */
export function confinedPath(path: unknown, field: string, dataDir: string): string {
  const problem = certPathProblem(path, dataDir);
  if (problem) throw badRequest(`${field} ${problem}`);
  const text = path as string;
  const root = certRoots(dataDir).find((candidate) => isUnder(text, candidate))!;
  const link = symlinkProblem(text, root);
  if (link) throw badRequest(`${field}: ${link}; symbolic links are not followed`);
  return resolve(text);
}

/** ACME certificates: account, certificate orders, DNS-01 providers and export targets. */
export class AcmeService {
  readonly account: SingletonModel;
  readonly certs: CollectionModel;
  readonly targets: CollectionModel;
  readonly providers: CollectionModel;
  /** Certificates with an order in progress (a second renew waits for none: it is refused). */
  private readonly inFlight = new Set<string>();
  /**
   * Why this node must not renew now, or null: the backup of a high-availability pair does not (the primary renews
   * and pushes the certificate, cluster cert-push). Set by the configuration-sync area.
   */
  renewalGate: () => Promise<string | null> = async () => null;
  private readonly renewedListeners: ((id: string) => void)[] = [];

  constructor(
    private readonly context: AppContext,
    private readonly consumers: CertificateConsumer[] = [],
    /** The loopback address a running reverse proxy passes HTTP-01 challenges to, or null (reverse-proxy area). */
    private readonly challengesThroughProxy: () => Promise<string | null> = async () => null,
    /** The API's HTTPS certificate store, what a local-tls-store target publishes to (tls area). */
    private readonly localTlsStore?: LocalTlsStore,
  ) {
    const { models } = context;
    this.account = models.singleton({
      kind: 'acme_account', noun: 'ACME account', writeAccess: 'settings:write',
      schema: {
        type: 'object',
        properties: {
          directory_url: { type: 'string', default: LE_PRODUCTION }, contact_email: { type: 'string', default: '' }, account_key_pem: { type: 'string' },
          http01_listen: { type: 'string', default: ':80' }, allowed_networks: { type: 'array', items: { type: 'string' }, default: [] },
        },
      } as never,
      writeOnly: ['account_key_pem'],
    });
    this.providers = models.collection({
      kind: 'acme_dns_provider', noun: 'DNS provider', writeAccess: 'settings:write',
      schema: DnsProviderStored,
      unique: [{ field: 'name', caseInsensitive: true }],
      writeOnly: ['api_token', 'aws_secret_key'],
      computed: {
        schema: DnsProviderComputed,
        add: (object) => ({ has_token: this.hasSecret(object, 'api_token'), has_secret: this.hasSecret(object, 'aws_secret_key') }),
      },
      validate: (data) => {
        checkName(String(data.zone), 'body.zone');
        if (data.kind === 'rfc2136') {
          const settings = rfc2136Settings((data.extra ?? {}) as Record<string, unknown>);
          if (typeof settings === 'string') throw badRequest(`body.${settings}`);
        }
        if (data.kind === 'route53' || data.kind === 'digitalocean') {
          const extra = (data.extra ?? {}) as Record<string, unknown>;
          const endpoint = dnsApiEndpoint(extra, '');
          if (typeof endpoint !== 'string') throw badRequest(`body.${endpoint.error}`);
          if (extra.region !== undefined && (typeof extra.region !== 'string' || !/^[a-z0-9-]{1,32}$/.test(extra.region))) throw badRequest('body.extra.region must be an AWS region name');
          if (extra.zone_id !== undefined && (typeof extra.zone_id !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(extra.zone_id))) throw badRequest('body.extra.zone_id must be a hosted zone id');
        }
      },
    });
    this.certs = models.collection({
      kind: 'acme_cert', noun: 'certificate', writeAccess: 'settings:write',
      schema: CertStored,
      writeOnly: ['cert_pem', 'chain_pem', 'key_pem'],
      references: [{ field: 'dns_provider_id', kind: 'acme_dns_provider' }],
      computed: {
        schema: CertComputed,
        add: (object) => {
          const expires = object.data.expires_at ? Date.parse(String(object.data.expires_at)) : null;
          return {
            days_until_expiry: expires === null ? null : Math.floor((expires - this.context.clock.now()) / 86_400_000),
            has_cert: typeof object.data.cert_pem === 'string',
          };
        },
      },
      validate: (data) => {
        if (data.challenge_type === 'dns-01' && !data.dns_provider_id) throw badRequest('body.dns_provider_id is required for dns-01');
      },
    });
    this.targets = models.collection({
      kind: 'acme_export_target', noun: 'export target', writeAccess: 'settings:write',
      schema: TargetStored,
      parent: { kind: 'acme_cert', field: 'cert_id' },
      validate: (data) => this.checkTarget(data),
    });
  }

  private hasSecret(object: ConfigObject, field: string): boolean {
    const value = this.providers.secret(object, field);
    return value !== undefined && value !== '';
  }

  // ---- account ---------------------------------------------------------------------------------------

  accountView() {
    const data = this.account.read();
    return {
      id: data.account_key_pem ? 'registered' : null,
      directory_url: String(data.directory_url),
      contact_email: String(data.contact_email),
      registered: typeof data.account_key_pem === 'string' && data.account_key_pem !== '',
      http01_listen: String(data.http01_listen ?? ':80'),
      allowed_networks: (data.allowed_networks as string[] | undefined) ?? [],
    };
  }

  saveAccount(body: { directory_url?: string; contact_email: string; http01_listen?: string; allowed_networks?: string[] }) {
    if (!/^[^@\s]+@[^@\s]+$/.test(body.contact_email)) throw badRequest('body.contact_email must be an email address');
    const directory = body.directory_url ?? LE_PRODUCTION;
    let url: URL;
    try {
      url = new URL(directory);
    } catch {
      throw badRequest('body.directory_url must be an https URL');
    }
    if (url.protocol !== 'https:') throw badRequest('body.directory_url must be an https URL');
    const current = this.account.read();
    // A new directory means a new account: the stored key belongs to the old one.
    if (body.http01_listen !== undefined && !parseListen(body.http01_listen)) throw badRequest('body.http01_listen must be [address]:port');
    const bad = (body.allowed_networks ?? []).find((network) => !isCidr(network));
    if (bad !== undefined) throw badRequest(`body.allowed_networks: "${bad}" is not an IP address or CIDR`);
    const patch: ConfigData = { directory_url: directory, contact_email: body.contact_email };
    if (body.http01_listen !== undefined) patch.http01_listen = body.http01_listen;
    if (body.allowed_networks !== undefined) patch.allowed_networks = body.allowed_networks;
    if (current.directory_url !== directory) patch.account_key_pem = '';
    this.account.write(patch);
    return this.accountView();
  }

  // ---- certificates ----------------------------------------------------------------------------------

  private certFields(body: ConfigData): ConfigData {
    const data: ConfigData = { ...body };
    if (body.common_name !== undefined) data.common_name = checkName(String(body.common_name), 'body.common_name');
    if (body.sans !== undefined) data.sans = [...new Set((body.sans as string[]).map((s) => checkName(s, 'body.sans')))];
    if (body.challenge_type !== undefined) data.challenge_type = body.challenge_type === 'http-01' ? 'http-01' : 'dns-01';
    return data;
  }

  createCert(body: ConfigData): ConfigObject {
    return this.certs.create({ challenge_type: 'dns-01', ...this.certFields(body), status: 'pending' });
  }

  updateCert(id: string, body: ConfigData): ConfigObject {
    return this.certs.update(id, this.certFields(body));
  }

  deleteCert(id: string): void {
    this.context.store.transaction(() => {
      this.certs.find(id);
      for (const target of this.targets.objects(id)) this.context.store.remove('acme_export_target', target.id);
      this.context.store.remove('acme_cert', id);
    });
  }

  certPem(id: string): { name: string; body: string } {
    const cert = this.certs.find(id);
    const pem = this.certs.secret(cert, 'cert_pem');
    if (!pem) throw badRequest(`certificate ${id} has not been issued yet`);
    const chain = this.certs.secret(cert, 'chain_pem') ?? '';
    return { name: String(cert.data.common_name), body: chain ? `${pem.trimEnd()}\n${chain}` : pem };
  }

  keyPem(id: string): { name: string; body: string } {
    const cert = this.certs.find(id);
    return { name: String(cert.data.common_name), body: this.certs.secret(cert, 'key_pem') ?? '' };
  }

  /** Called after each successful issue or renewal on this node (the primary of a pair pushes the certificate). */
  onRenewed(listener: (id: string) => void): void {
    this.renewedListeners.push(listener);
  }

  /** The issued material, opened (for the pair's cert-push), or null before the first issue. */
  material(id: string): { cert_pem: string; chain_pem: string; key_pem: string } | null {
    const cert = this.certs.find(id);
    const [certPem, keyPem] = [this.certs.secret(cert, 'cert_pem'), this.certs.secret(cert, 'key_pem')];
    return certPem && keyPem ? { cert_pem: certPem, chain_pem: this.certs.secret(cert, 'chain_pem') ?? '', key_pem: keyPem } : null;
  }

  /**
   * Installs material renewed elsewhere (the pair's primary pushed it): the key must be the certificate's, then it is
   * published to the certificate's export targets and stored, as a renewal here would.
   */
  async install(id: string, material: { cert_pem: string; chain_pem: string; key_pem: string }): Promise<ConfigObject> {
    this.certs.find(id);
    let parsed: X509Certificate;
    try {
      parsed = new X509Certificate(material.cert_pem);
    } catch {
      throw badRequest('body.fullchain_pem: not a PEM certificate');
    }
    let matches = false;
    try {
      matches = parsed.checkPrivateKey(createPrivateKey(material.key_pem));
    } catch {
      throw badRequest('body.private_key_pem: not a PEM private key');
    }
    if (!matches) throw badRequest('body.private_key_pem is not the key of the certificate');
    await this.publishMaterial(id, material);
    return this.storeIssued(id, material);
  }

  /** Refuses a renewal this node must not make (the backup of a pair): 409 with the reason. */
  async assertMayRenew(): Promise<void> {
    const reason = await this.renewalGate();
    if (reason) throw conflict(reason);
  }

  /** Stores issued material (from an ACME order or an import) and marks the certificate active. */
  storeIssued(id: string, material: { cert_pem: string; chain_pem: string; key_pem: string }, attempt?: string): ConfigObject {
    const parsed = new X509Certificate(material.cert_pem);
    return this.certs.update(id, {
      ...material,
      ...(attempt ? { last_renew_attempt: attempt } : {}),
      status: 'active',
      issued_at: new Date(parsed.validFrom).toISOString(),
      expires_at: new Date(parsed.validTo).toISOString(),
      last_renew_error: null,
    });
  }

  /**
   * "Issue now": an ACME order for the certificate's names (account registered on first use), answered by
   * the built-in HTTP-01 responder or the DNS provider's TXT records. On success the material is stored
   * sealed, published to the export targets and the certificate is active; on failure it keeps its previous
   * material and status (a failed first issue is `failed`) with the reason in `last_renew_error`.
   */
  async renew(id: string) {
    const cert = this.certs.find(id);
    const account = this.account.read();
    const attempt = isoTime(this.context.clock.now());
    const fail = (reason: string) => {
      const current = this.certs.find(id);
      this.certs.update(id, { status: current.data.cert_pem ? 'active' : 'failed', last_renew_attempt: attempt, last_renew_error: reason });
      this.context.events.emit(EVENT_TOPICS.certificateRenewalFailed, { certificate_id: id, certificate: String(current.data.common_name ?? id), error: reason });
      return { ok: false, message: reason, expires_at: (current.data.expires_at as string | null) ?? null };
    };
    if (!account.contact_email) return fail('no ACME account: POST /api/v1/acme/account with a contact_email first');
    if (this.inFlight.has(id)) return fail('an order for this certificate is already in progress');
    this.inFlight.add(id);
    this.certs.update(id, { status: 'renewing', last_renew_attempt: attempt });
    const names = [String(cert.data.common_name), ...((cert.data.sans as string[]) ?? [])].filter((name, index, all) => all.indexOf(name) === index);
    const challenge = cert.data.challenge_type === 'http-01' ? 'http-01' : 'dns-01';
    let responder: Http01Responder | null = null;
    try {
      let dns01;
      if (challenge === 'http-01') {
        if (names.some((name) => name.startsWith('*.'))) return fail('wildcard names need dns-01');
        responder = await this.openResponder(String(account.http01_listen ?? ':80'));
      } else {
        const provider = this.providers.find(String(cert.data.dns_provider_id));
        dns01 = txtPublisher(this.providerAccess(provider));
      }
      const accountKey = typeof account.account_key_pem === 'string' && account.account_key_pem !== '' ? this.account.secret('account_key_pem') ?? null : null;
      const issued = await placeOrder({
        directoryUrl: String(account.directory_url), accountKey, email: String(account.contact_email), names, challenge,
        policy: { allowList: (account.allowed_networks as string[] | undefined) ?? [] }, http01: responder ?? undefined, dns01,
      });
      if (!accountKey) this.account.write({ account_key_pem: issued.accountKey });
      const material = { cert_pem: issued.cert_pem, chain_pem: issued.chain_pem, key_pem: issued.key_pem };
      // Files first, then the stored material: the change of the certificate reloads the services using it.
      await this.publishMaterial(id, material);
      const stored = this.storeIssued(id, material, attempt);
      for (const listener of this.renewedListeners) listener(id);
      return { ok: true, message: `issued, expires ${String(stored.data.expires_at)}`, expires_at: String(stored.data.expires_at) };
    } catch (error) {
      return fail(oneLine((error as Error).message));
    } finally {
      this.inFlight.delete(id);
      await responder?.close();
    }
  }

  /**
   * The responder on the account's address; when that port is taken and the reverse proxy runs, on the loopback
   * address the proxy's plain-HTTP servers pass challenges to (the proxy holds port 80: the CA's fetch reaches
   * Caddy, which hands it on). Another program on the port fails the order saying so.
   */
  private async openResponder(listen: string): Promise<Http01Responder> {
    const direct = new Http01Responder(parseListen(listen) ?? { host: '', port: 80 });
    try {
      await direct.open();
      return direct;
    } catch (error) {
      const upstream = error instanceof PortInUse ? await this.challengesThroughProxy() : null;
      if (!upstream || upstream === listen) throw error;
      const proxied = new Http01Responder(parseListen(upstream)!);
      await proxied.open();
      this.context.log.info({ listen, upstream }, 'HTTP-01: the port is the reverse proxy\'s; answering through it');
      return proxied;
    }
  }

  /** Certificates due: auto_renew on, and never issued or within renew_days_before_expiry of expiry. */
  dueForRenewal(): string[] {
    const now = this.context.clock.now();
    return this.certs.objects().filter((object) => {
      if (object.data.auto_renew !== true || this.inFlight.has(object.id)) return false;
      if (!object.data.expires_at) return object.data.status !== 'failed';
      return Date.parse(String(object.data.expires_at)) - now < Number(object.data.renew_days_before_expiry) * 86_400_000;
    }).map((object) => object.id);
  }

  /** Certificates with material (an expiry): what the hourly expiry check (common/certificate-expiry.ts) looks at. */
  validities(): CertificateValidity[] {
    return this.certs.objects().filter((object) => object.data.expires_at).map((object) => ({
      id: object.id, name: String(object.data.common_name ?? object.id), expires_at: String(object.data.expires_at), source: 'acme' as const,
    }));
  }

  /** The scheduled renewal: every certificate due, one after another; each records its own outcome. */
  async renewDue(): Promise<number> {
    const gate = await this.renewalGate();
    if (gate) {
      if (this.dueForRenewal().length > 0) this.context.log.info({ due: this.dueForRenewal().length, reason: gate }, 'ACME: certificates due are not renewed on this node');
      return 0;
    }
    let renewed = 0;
    for (const id of this.dueForRenewal()) if ((await this.renew(id)).ok) renewed++;
    return renewed;
  }

  // ---- export targets --------------------------------------------------------------------------------

  private checkTarget(data: ConfigData): void {
    const config = (data.config ?? {}) as Record<string, unknown>;
    const dataDir = this.context.config.dataDir;
    if (data.kind === 'file') {
      const unknown = Object.keys(config).find((key) => !FILE_TARGET_KEYS.has(key));
      if (unknown) throw badRequest(`body.config.${unknown} is not a known field of a file target`);
      confinedPath(config.cert_path, 'body.config.cert_path', dataDir);
      confinedPath(config.key_path, 'body.config.key_path', dataDir);
      if (config.chain_path !== undefined) confinedPath(config.chain_path, 'body.config.chain_path', dataDir);
      const paths = [config.cert_path, config.key_path, config.chain_path].filter((p) => p !== undefined);
      if (new Set(paths).size !== paths.length) throw badRequest('body.config paths must be different files');
      for (const field of ['mode', 'key_mode']) {
        const problem = config[field] === undefined ? null : fileModeProblem(config[field], field === 'key_mode');
        if (problem) throw badRequest(`body.config.${field} ${problem}`);
      }
      if (config.owner !== undefined && !OWNER.test(String(config.owner))) throw badRequest('body.config.owner must be user or user:group');
    } else if (data.kind === 'local-tls-store') {
      // The API serves the certificate itself (no service to restart): nothing to configure.
      const unknown = Object.keys(config)[0];
      if (unknown !== undefined) throw badRequest(`body.config.${unknown}: a local-tls-store target takes no settings (select the certificate in /api/v1/settings/tls)`);
    } else if (data.kind === 'webhook') {
      try {
        if (new URL(String(config.url)).protocol !== 'https:') throw new Error();
      } catch {
        throw badRequest('body.config.url must be an https URL');
      }
      if (config.auth_header !== undefined && (typeof config.auth_header !== 'string' || !isSingleLineText(config.auth_header))) {
        throw badRequest('body.config.auth_header must be one line of text (no CR, LF or NUL)');
      }
    }
  }

  createTarget(certId: string, body: { kind: string; config?: Record<string, unknown> | null }): ConfigObject {
    return this.targets.create({ kind: body.kind, config: body.config ?? {} }, certId);
  }

  updateTarget(id: string, body: { kind?: string; config?: Record<string, unknown> | null }): ConfigObject {
    const patch: ConfigData = {};
    if (body.kind !== undefined) patch.kind = body.kind;
    if (body.config !== undefined) patch.config = body.config ?? {};
    return this.targets.update(id, patch);
  }

  /**
   * Runs every export target of an issued certificate (each records its own outcome), then reloads the running
   * services that serve it; the answer names them, and a reload that failed makes it not ok.
   */
  async publish(id: string) {
    this.certPem(id);
    const cert = this.certs.find(id);
    const material = { cert_pem: this.certs.secret(cert, 'cert_pem') ?? '', chain_pem: this.certs.secret(cert, 'chain_pem') ?? '', key_pem: this.certs.secret(cert, 'key_pem') ?? '' };
    const { failures, written } = await this.publishMaterial(id, material);
    const reloaded: string[] = [];
    const reloadFailures: string[] = [];
    for (const consumer of this.consumers) {
      try {
        if (await consumer.reloadIfServing(id, written)) reloaded.push(consumer.name);
      } catch (error) {
        reloadFailures.push(`${consumer.name} reload failed: ${oneLine((error as Error).message)}`);
      }
    }
    if (reloaded.length > 0 || reloadFailures.length > 0) this.context.log.info({ certificate: id, reloaded, failed: reloadFailures }, 'ACME certificate published; services using it reloaded');
    const parts = [failures === 0 ? 'published to every target' : `${failures} target(s) failed; check per-target status`];
    if (reloaded.length > 0) parts.push(`reloaded: ${reloaded.join(', ')}`);
    parts.push(...reloadFailures);
    return { ok: failures === 0 && reloadFailures.length === 0, message: parts.join('; '), expires_at: (cert.data.expires_at as string | null) ?? null };
  }

  /** Writes the material to each target of the certificate: the number that failed and the files written. */
  private async publishMaterial(id: string, material: { cert_pem: string; chain_pem: string; key_pem: string }): Promise<{ failures: number; written: string[] }> {
    const cert = this.certs.find(id);
    const fullchain = material.chain_pem ? `${material.cert_pem.trimEnd()}\n${material.chain_pem}` : material.cert_pem;
    let failures = 0;
    const written: string[] = [];
    for (const target of this.targets.objects(id)) {
      const config = target.data.config as Record<string, string>;
      let error: string | null = null;
      try {
        if (target.data.kind === 'file') {
          const owner = config.owner ? ownerOf(config.owner) : undefined;
          // Checked again at write time: a stored target from an older release, or a link planted since.
          const write = (path: string, text: string, mode: string, forKey = false) => {
            const problem = certPathProblem(path, this.context.config.dataDir) ?? fileModeProblem(mode, forKey);
            if (problem) throw new Error(`${path}: ${problem}`);
            const root = certRoots(this.context.config.dataDir).find((candidate) => isUnder(path, candidate))!;
            writeConfinedFile(path, root, text, parseInt(mode, 8), owner);
            written.push(path);
          };
          write(config.cert_path, fullchain, config.mode ?? '0644');
          write(config.key_path, material.key_pem, config.key_mode ?? '0600', true);
          if (config.chain_path) write(config.chain_path, material.chain_pem, config.mode ?? '0644');
        } else if (target.data.kind === 'webhook') {
          const response = await outboundFetch(config.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(config.auth_header ? { authorization: config.auth_header } : {}) },
            body: JSON.stringify({ common_name: cert.data.common_name, sans: cert.data.sans, expires_at: cert.data.expires_at, ...material }),
          }, { timeoutMs: 20_000 });
          if (!response.ok) throw new Error(`webhook answered HTTP ${response.status}`);
        } else {
          // The API's HTTPS certificate store: served at once when /settings/tls selects this certificate.
          if (!this.localTlsStore) throw new Error('this appliance has no API TLS store');
          await this.localTlsStore(id, { cert_pem: fullchain, key_pem: material.key_pem });
        }
      } catch (e) {
        error = oneLine((e as Error).message);
        failures++;
      }
      this.context.store.update('acme_export_target', target.id, { ...target.data, last_run_at: isoTime(this.context.clock.now()), last_run_ok: error === null, last_run_error: error });
    }
    return { failures, written };
  }

  // ---- DNS providers ---------------------------------------------------------------------------------

  /** A provider's kind, zone, secrets and settings, with the account's allowed networks for the outbound guard. */
  private providerAccess(provider: ConfigObject): DnsProviderAccess {
    const account = this.account.read();
    return {
      kind: String(provider.data.kind), zone: String(provider.data.zone),
      token: this.providers.secret(provider, 'api_token'), secret: this.providers.secret(provider, 'aws_secret_key'),
      extra: (provider.data.extra ?? {}) as Record<string, unknown>, allowList: (account.allowed_networks as string[] | undefined) ?? [],
    };
  }

  /** Adds then removes a TXT record `_acme-bulwark-test.<zone>` through the provider's API. */
  async testProvider(id: string) {
    const provider = this.providers.find(id);
    const token = this.providers.secret(provider, 'api_token');
    const zone = String(provider.data.zone);
    if (provider.data.kind === 'manual') return { ok: true, message: 'manual provider: TXT records are added by the operator' };
    if (provider.data.kind !== 'cloudflare') {
      const name = `_acme-bulwark-test.${zone}`;
      try {
        const publisher = txtPublisher(this.providerAccess(provider));
        await publisher.add(name, 'bulwark-test');
        await publisher.remove(name, 'bulwark-test');
        return { ok: true, message: 'TXT add+remove OK' };
      } catch (error) {
        return { ok: false, message: oneLine((error as Error).message) };
      }
    }
    if (!token) return { ok: false, message: 'no api_token stored' };
    const api = 'https://api.cloudflare.com/client/v4';
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    try {
      const extra = provider.data.extra as Record<string, string>;
      let zoneId = extra?.zone_id;
      if (!zoneId) {
        const zones = (await (await outboundFetch(`${api}/zones?name=${encodeURIComponent(zone)}`, { headers })).json()) as { result?: { id: string }[] };
        zoneId = zones.result?.[0]?.id ?? '';
        if (!zoneId) return { ok: false, message: `zone ${zone} not found with this token` };
      }
      const created = (await (await outboundFetch(`${api}/zones/${zoneId}/dns_records`, { method: 'POST', headers, body: JSON.stringify({ type: 'TXT', name: `_acme-bulwark-test.${zone}`, content: 'bulwark-test', ttl: 60 }) })).json()) as { success?: boolean; result?: { id: string } };
      if (!created.success || !created.result) return { ok: false, message: 'TXT record could not be added' };
      await outboundFetch(`${api}/zones/${zoneId}/dns_records/${created.result.id}`, { method: 'DELETE', headers });
      return { ok: true, message: 'TXT add+remove OK' };
    } catch (error) {
      return { ok: false, message: (error as Error).message };
    }
  }
}
