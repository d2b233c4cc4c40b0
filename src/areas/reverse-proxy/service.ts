import { proxiedResponder } from '../acme/http01-responder.js';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { Reference } from '../../model/declarations.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, conflict } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import type { JsonObjectSchema } from '../../model/schema-helpers.js';
import {
  CertResolver, Entrypoint, HttpMiddleware, HttpRouter, HttpService, L4Service, ProxyConfig, TcpRouter, TlsCert, TlsOption, UdpRouter,
} from './schema.js';
import { entryPointNames, jsonField, renderProxyConfig } from './render.js';
import { ACCESS_LOG_ROOTS, isReference, proxyJsonProblem } from './grammar.js';
import { certPathProblem } from '../../render/cert-paths.js';
import { isCleanAbsolutePath, isUnder } from '../../render/grammar.js';
import { caddyEntrypoint, caddyLayer4Refusal, caddyMiddleware, caddyRouterMatch, caddyRouterTls, caddyService, caddyTlsOption, renderCaddyConfig, type ProxyRouting } from '../../render/caddy/caddy.js';
import { ProxyRefusal } from '../../render/caddy/caddy-values.js';
import { prepareDaemonRuntime, programRuntime, writeDaemonFile, type DaemonRuntime } from '../../platform/daemon-runtime.js';
import type { ProxyInstall } from '../../platform/reverse-proxy.js';
import { Semaphore } from '../../core/semaphore.js';
import { ServiceState } from '../common/service-state.js';
import type { CertificateValidity } from '../common/certificate-expiry.js';
import { certSource, installCertificates, pruneCertificates } from './certificates.js';
import { destinationApplyProblem, destinationWriteProblem, OUTBOUND_KINDS } from './destinations.js';
import { allowListEntryProblem, KEY_FILES_KIND, keyFileRefusal, ProxyKeyFiles } from './key-files.js';
import type { ConfigObject, ConfigStore } from '../../store/config-store.js';
import { Sealer } from '../../core/crypto.js';
import { joinSecrets, rawSecretIn, SECRETS_FIELD, splitSecrets, type SecretMap } from './json-secrets.js';

/** Names with a provider suffix (`api@internal`, `x@file`) point outside this configuration and are not checked. */
const local = (names: unknown[]) => names.map(String).filter((name) => name !== '' && !name.includes('@'));

const serviceRef = (kind: string): Reference => ({ field: 'service', kind, by: 'name', values: (data) => local([data.service]) });
const entryPointsRef: Reference = { field: 'entry_points', kind: 'rp_entrypoint', by: 'name', values: (data) => local(entryPointNames(data.entry_points)) };
const middlewaresRef: Reference = { field: 'middlewares', kind: 'rp_http_middleware', by: 'name', values: (data) => local(jsonField<unknown[]>(data.middlewares, [])) };
const tlsValue = (key: string) => (data: ConfigData) => {
  const tls = jsonField<Record<string, unknown>>(data.tls_json, {});
  return typeof tls === 'object' && tls && typeof tls[key] === 'string' ? local([tls[key]]) : [];
};
const resolverRef: Reference = { field: 'tls_json', kind: 'rp_cert_resolver', by: 'name', values: tlsValue('certResolver') };
const tlsOptionRef: Reference = { field: 'tls_json', kind: 'rp_tls_option', by: 'name', values: tlsValue('options') };
const sourceRef = (kind: 'acme' | 'ca', target: string): Reference => ({ field: 'source', kind: target, values: (data) => {
  const source = certSource(data.source);
  return source?.kind === kind ? [source.id] : [];
} });

/** JSON-in-a-string fields must parse, and to the right shape. */
function checkJson(data: ConfigData, fields: Record<string, 'object' | 'array' | 'list'>, dataDir: string): void {
  for (const [field, shape] of Object.entries(fields)) {
    const value = data[field];
    if (value === null || value === undefined) continue;
    if (shape === 'list' && !String(value).trim().startsWith('[')) continue; // comma-separated entry points
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(value));
    } catch {
      throw badRequest(`body.${field} is not valid JSON`);
    }
    const ok = shape === 'object' ? typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) : Array.isArray(parsed);
    if (!ok) throw badRequest(`body.${field} must be a JSON ${shape === 'object' ? 'object' : 'array'}`);
    if (shape !== 'object' && !(parsed as unknown[]).every((item) => typeof item === 'string' && isReference(item))) throw badRequest(`body.${field} must be an array of names`);
    const problem = shape === 'object' ? proxyJsonProblem(parsed, dataDir) : null;
    if (problem) throw badRequest(`body.${field}: ${problem}`);
  }
  // A comma-separated entry-point list: every item a name.
  for (const [field, shape] of Object.entries(fields)) {
    if (shape === 'list' && typeof data[field] === 'string' && !entryPointNames(data[field]).every(isReference)) throw badRequest(`body.${field} must be names separated by commas`);
  }
}

/**
 * Certificate and key files are read from the certificate directories only (the ACME export roots), and the key
 * only where the caller's role may hand it to the proxy (key-files.ts).
 */
function checkCertFiles(data: ConfigData, dataDir: string, store: ConfigStore): void {
  if (data.source !== null && data.source !== undefined) {
    if (data.cert_file !== undefined || data.key_file !== undefined) throw badRequest('body.source: give either source or cert_file and key_file');
    return;
  }
  for (const field of ['cert_file', 'key_file']) {
    const problem = certPathProblem(data[field], dataDir);
    if (problem) throw badRequest(`body.${field} ${problem}`);
  }
  const refusal = keyFileRefusal(String(data.key_file), store, dataDir);
  if (refusal) throw badRequest(`body.key_file ${refusal}`);
}

interface Declaration {
  kind: string;
  noun: string;
  schema: JsonObjectSchema;
  references?: Reference[];
  json: Record<string, 'object' | 'array' | 'list'>;
  /** Secrets live inside config_json (json-secrets.ts). */
  jsonSecrets?: true;
}

const DECLARATIONS: Declaration[] = [
  { kind: 'rp_entrypoint', noun: 'entrypoint', schema: Entrypoint, json: { config_json: 'object' } },
  { kind: 'rp_http_service', noun: 'HTTP service', schema: HttpService, json: { config_json: 'object' } },
  { kind: 'rp_http_middleware', noun: 'HTTP middleware', schema: HttpMiddleware, json: { config_json: 'object' }, jsonSecrets: true },
  { kind: 'rp_tcp_service', noun: 'TCP service', schema: L4Service, json: { config_json: 'object' } },
  { kind: 'rp_udp_service', noun: 'UDP service', schema: L4Service, json: { config_json: 'object' } },
  { kind: 'rp_tls_cert', noun: 'TLS certificate', schema: TlsCert, references: [sourceRef('acme', 'acme_cert'), sourceRef('ca', 'ca_cert')], json: { stores_json: 'array' } },
  { kind: 'rp_tls_option', noun: 'TLS option set', schema: TlsOption, json: { config_json: 'object' } },
  { kind: 'rp_cert_resolver', noun: 'certificate resolver', schema: CertResolver, json: { config_json: 'object' } },
  {
    kind: 'rp_http_router', noun: 'HTTP router', schema: HttpRouter,
    references: [serviceRef('rp_http_service'), entryPointsRef, middlewaresRef, resolverRef, tlsOptionRef],
    json: { entry_points: 'array', middlewares: 'array', tls_json: 'object' },
  },
  {
    kind: 'rp_tcp_router', noun: 'TCP router', schema: TcpRouter,
    references: [serviceRef('rp_tcp_service'), entryPointsRef, resolverRef, tlsOptionRef],
    json: { entry_points: 'list', tls_json: 'object' },
  },
  {
    kind: 'rp_udp_router', noun: 'UDP router', schema: UdpRouter,
    references: [serviceRef('rp_udp_service'), entryPointsRef],
    json: { entry_points: 'list' },
  },
];

/**
 * What Caddy cannot run, found when one object is written (the whole document is checked again at apply): the
 * write answers 400 naming the feature instead of storing something no apply could install.
 */
function caddyExpressible(kind: string, data: ConfigData): void {
  if (data.enabled === false) return;
  const named = { ...data, name: data.name ?? '(unnamed)' };
  switch (kind) {
    case 'rp_entrypoint': caddyEntrypoint(named); break;
    case 'rp_http_service': caddyService(named); break;
    case 'rp_http_middleware': caddyMiddleware(named); break;
    case 'rp_tls_option': caddyTlsOption(named); break;
    case 'rp_http_router': caddyRouterMatch(named); caddyRouterTls(named); break;
    case 'rp_tcp_router': throw caddyLayer4Refusal('tcp', 'router', String(named.name));
    case 'rp_tcp_service': throw caddyLayer4Refusal('tcp', 'service', String(named.name));
    case 'rp_udp_router': throw caddyLayer4Refusal('udp', 'router', String(named.name));
    case 'rp_udp_service': throw caddyLayer4Refusal('udp', 'service', String(named.name));
  }
}

/** A refusal of the proxy's renderer as the client's error: 400 naming the feature. */
export function asBadRequest<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof ProxyRefusal) throw badRequest(`the reverse proxy (Caddy) cannot express ${error.message}`);
    throw error;
  }
}

export const accessLogRoots = (dataDir: string): string[] => [...ACCESS_LOG_ROOTS, `${join(dataDir, 'logs')}/`];

/** The reverse proxy: its eleven collections, the global section, rendering and daemon control. */
export class ReverseProxyService {
  readonly collections: Record<string, CollectionModel> = {};
  readonly config: SingletonModel;
  /** The key files beyond Bulwark's own that TLS certificates may name (settings:write). */
  readonly keyFiles: SingletonModel;
  /** One render-check-install at a time (an API apply and a certificate renewal may meet). */
  private readonly applying = new Semaphore(1);

  /** What the last apply or control action left running: what a start of Bulwark brings back (never pending edits). */
  private readonly appliedState: ServiceState;

  constructor(private readonly context: AppContext) {
    this.appliedState = new ServiceState(context.db, context.clock);
    context.restore.register({
      name: 'reverse-proxy',
      daemon: 'caddy',
      enabled: () => !context.platform.simulated && this.applied().should_run,
      running: async () => (await context.platform.reverseProxy.status()).running,
      appliedVersion: () => this.applied().config_version,
      restore: async () => {
        const { install } = this.applied();
        if (!install || !existsSync(install.configFile)) throw conflict('the applied reverse-proxy configuration is missing: apply again');
        // Adopts a Caddy an earlier API process left running (and loads the applied file into it in place), or starts one.
        await this.applying.run(() => context.platform.reverseProxy.start(install));
      },
    });
    for (const declaration of DECLARATIONS) {
      this.collections[declaration.kind] = context.models.collection({
        kind: declaration.kind,
        noun: declaration.noun,
        writeAccess: 'proxy:write',
        schema: declaration.schema,
        unique: [{ field: 'name', caseInsensitive: true }],
        references: declaration.references,
        ...(declaration.jsonSecrets ? { writeOnly: [SECRETS_FIELD], prepare: (data: ConfigData, existing: ConfigObject | undefined) => this.takeSecrets(data, existing) } : {}),
        validate: (stored, { store }) => {
          // Checked as the proxy will get it: secrets put back where config_json holds placeholders.
          const data = declaration.jsonSecrets ? this.withSecrets(stored) : stored;
          checkJson(data, declaration.json, context.config.dataDir);
          if (declaration.jsonSecrets) {
            const raw = rawSecretIn(String(stored.middleware_type), jsonField<Record<string, unknown>>(stored.config_json, {}));
            if (raw !== null) throw badRequest(`body.config_json ${raw}: a secret kept in config_json itself; write the middleware through its route so the secret is sealed`);
          }
          if (declaration.kind === 'rp_tls_cert') checkCertFiles(data, context.config.dataDir, store);
          const destination = destinationWriteProblem(declaration.kind, data, context.store);
          if (destination) throw badRequest(destination);
          if (this.dialect === 'caddy-json') asBadRequest(() => caddyExpressible(declaration.kind, data));
        },
      });
    }
    this.config = context.models.singleton({
      kind: 'rp_config', noun: 'reverse-proxy global configuration', writeAccess: 'proxy:write', schema: ProxyConfig,
      validate: (data) => {
        const roots = accessLogRoots(context.config.dataDir);
        const path = String(data.access_log_path);
        if (!isCleanAbsolutePath(path) || !roots.some((root) => isUnder(path, root))) throw badRequest(`body.access_log_path must be a clean path under ${roots.join(', ')}`);
        if (this.dialect === 'caddy-json' && data.api_dashboard === true) throw badRequest('body.api_dashboard: the reverse proxy (Caddy) has no dashboard');
      },
    });
    this.keyFiles = context.models.singleton({
      kind: KEY_FILES_KIND, noun: 'reverse-proxy key-file allow-list', writeAccess: 'settings:write', schema: ProxyKeyFiles,
      validate: (data) => {
        for (const [index, path] of (data.paths as unknown[]).entries()) {
          const problem = allowListEntryProblem(path, context.config.dataDir);
          if (problem) throw badRequest(`body.paths[${index}] ${problem}`);
        }
      },
    });
    // A renewed or re-issued certificate that the proxy serves by reference reaches a running proxy at once.
    context.models.onChanged(['acme_cert', 'ca_cert', 'acme_account'], async ({ cause, objects, kinds }) => {
      if (cause !== 'write' || this.dialect !== 'caddy-json' || !(await context.platform.reverseProxy.status()).running) return;
      // The account's HTTP-01 responder address decides whether plain-HTTP servers pass challenges to it.
      if (kinds.has('acme_account')) {
        await this.apply();
        return;
      }
      const changed = new Set(objects.map((object) => object.after?.id ?? object.before?.id));
      // Certificates by reference to a changed one; file certificates too (a renewal publishes their files
      // first). An unchanged result is an unchanged document, which Caddy takes as a no-op.
      const used = this.data('rp_tls_cert').some((item) => {
        const source = certSource(item.source);
        return source === null || changed.has(source.id);
      });
      if (used) await this.apply();
    });
  }

  /** A middleware's secrets: the sealed field as stored, or the plain JSON a write just produced. */
  /** TLS certificates given as files (not issued by Bulwark), with the expiry of each file's first certificate; an unreadable file is left out. */
  fileValidities(): CertificateValidity[] {
    return this.collections.rp_tls_cert!.objects().flatMap((object) => {
      if (certSource(object.data.source) !== null || typeof object.data.cert_file !== 'string' || !object.data.cert_file) return [];
      try {
        const expires = new Date(new X509Certificate(readFileSync(object.data.cert_file)).validTo).toISOString();
        return [{ id: object.id, name: String(object.data.name), expires_at: expires, source: 'file' as const }];
      } catch {
        return [];
      }
    });
  }

  private secretsOf(data: ConfigData): SecretMap {
    const value = data[SECRETS_FIELD];
    if (typeof value !== 'string' || value === '') return {};
    try {
      const parsed = JSON.parse(Sealer.isSealed(value) ? this.context.sealer.open(value) : value) as unknown;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
      return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    } catch {
      return {};
    }
  }

  /** The middleware as the proxy needs it: config_json with its secrets put back (and without the sealed field). */
  private withSecrets(data: ConfigData): ConfigData {
    const { [SECRETS_FIELD]: _sealed, ...rest } = data;
    const config = jsonField<unknown>(data.config_json, null);
    if (config === null || typeof config !== 'object' || Array.isArray(config)) return rest;
    return { ...rest, config_json: JSON.stringify(joinSecrets(String(data.middleware_type), config as Record<string, unknown>, this.secretsOf(data))) };
  }

  /** The model's prepare hook: secrets written in config_json move to the sealed field, placeholders stay. */
  private takeSecrets(data: ConfigData, existing: ConfigObject | undefined): void {
    if (data[SECRETS_FIELD] !== undefined) throw badRequest(`body.${SECRETS_FIELD} is kept by the server: send secrets inside config_json`);
    let config: unknown;
    try {
      config = JSON.parse(String(data.config_json));
    } catch {
      return; // the validator names the field
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config)) return;
    const { shown, secrets } = splitSecrets(String(data.middleware_type), config as Record<string, unknown>, existing ? this.secretsOf(existing.data) : {});
    if (JSON.stringify(shown) !== JSON.stringify(config)) data.config_json = JSON.stringify(shown);
    data[SECRETS_FIELD] = JSON.stringify(secrets);
  }

  /**
   * Seals secrets that an older release stored inside config_json (start-up): each such middleware is written
   * again through its model. One that no longer validates is left as it was and named in the log.
   */
  sealStoredSecrets(): void {
    const model = this.collections.rp_http_middleware;
    for (const object of model.objects()) {
      const config = jsonField<unknown>(object.data.config_json, null);
      if (config === null || typeof config !== 'object' || Array.isArray(config)) continue;
      let raw: string | null;
      try {
        raw = rawSecretIn(String(object.data.middleware_type), config as Record<string, unknown>);
      } catch {
        continue;
      }
      if (raw === null) continue;
      try {
        model.update(object.id, { config_json: object.data.config_json });
      } catch (error) {
        this.context.log.warn({ middleware: object.data.name, err: (error as Error).message }, 'a secret stored in a middleware\'s config_json could not be sealed');
      }
    }
  }

  /**
   * After an ACME certificate was published by hand: a running proxy that serves it, by reference or from a file
   * the publish wrote, applies again (a running Caddy reloads in place). True when it did.
   */
  async reloadIfServing(certId: string, writtenPaths: string[]): Promise<boolean> {
    if (!(await this.context.platform.reverseProxy.status()).running) return false;
    const written = new Set(writtenPaths);
    const serves = this.data('rp_tls_cert').some((item) => {
      const source = certSource(item.source);
      if (source) return source.kind === 'acme' && source.id === certId;
      return written.has(String(item.cert_file ?? '')) || written.has(String(item.key_file ?? ''));
    });
    if (!serves) return false;
    await this.apply();
    return true;
  }

  /**
   * Where plain-HTTP servers pass `/.well-known/acme-challenge/*`, ahead of every route, once an ACME account
   * exists: the responder's loopback address (acme/http01-responder.ts), so a proxy holding port 80 answers
   * HTTP-01 for Bulwark's own certificates.
   */
  private acmeChallenge(): string | null {
    return proxiedResponder(this.context.store.getSingleton('acme_account'));
  }

  /** The loopback address a running Caddy passes HTTP-01 challenges to (null when it runs not, or passes none). */
  async challengesThroughProxy(): Promise<string | null> {
    if (this.dialect !== 'caddy-json' || !(await this.context.platform.reverseProxy.status()).running) return null;
    return this.acmeChallenge();
  }

  /** The configuration format of this platform's proxy. */
  private get dialect(): 'model-yaml' | 'caddy-json' {
    return this.context.platform.reverseProxy.dialect === 'caddy-json' ? 'caddy-json' : 'model-yaml';
  }

  private runtime(): DaemonRuntime {
    return programRuntime(this.context.config, 'caddy', 'caddy');
  }

  private install(configFile: string): ProxyInstall {
    const config = this.config.read();
    return {
      configFile,
      accessLog: config.access_log_enabled === true ? { path: String(config.access_log_path), format: config.access_log_format as 'common' } : null,
    };
  }

  private data(kind: string): ConfigData[] {
    return this.collections[kind].objects().map((o) => o.data).sort((a, b) => String(a.name).localeCompare(String(b.name)));
  }

  /** The stored settings and collections both renderings read. */
  private routing(): ProxyRouting {
    return {
      config: this.config.read(),
      entrypoints: this.data('rp_entrypoint'),
      httpRouters: this.data('rp_http_router'),
      httpServices: this.data('rp_http_service'),
      httpMiddlewares: this.data('rp_http_middleware').map((data) => this.withSecrets(data)),
      tcpRouters: this.data('rp_tcp_router'),
      tcpServices: this.data('rp_tcp_service'),
      udpRouters: this.data('rp_udp_router'),
      udpServices: this.data('rp_udp_service'),
      tlsOptions: this.data('rp_tls_option'),
    };
  }

  render(): string {
    return renderProxyConfig({
      ...this.routing(),
      dataDir: this.context.config.dataDir,
      accessLogRoots: accessLogRoots(this.context.config.dataDir),
      tlsCerts: this.data('rp_tls_cert'),
      certResolvers: this.data('rp_cert_resolver'),
    });
  }

  /** Caddy's JSON with the certificates installed into its runtime directory. */
  private renderCaddy(runtime: DaemonRuntime): { text: string; certificates: ReturnType<typeof installCertificates> } {
    return asBadRequest(() => {
      prepareDaemonRuntime(runtime);
      const certificates = installCertificates(this.context, runtime, this.data('rp_tls_cert'));
      const text = renderCaddyConfig({
        ...this.routing(),
        certificates,
        acmeChallenge: this.acmeChallenge(),
      }, { adminSocket: join(runtime.stateDir, 'admin.sock'), storageDir: join(runtime.stateDir, 'data') });
      return { text, certificates };
    });
  }

  async status() {
    const live = await this.context.platform.reverseProxy.status();
    const count = (kind: string) => this.data(kind).filter((item) => item.enabled !== false).length;
    return {
      running: live.running, version: live.version, simulated: this.context.platform.simulated,
      entrypoints: count('rp_entrypoint'), http_routers: count('rp_http_router'), http_services: count('rp_http_service'),
      http_middlewares: count('rp_http_middleware'), tcp_routers: count('rp_tcp_router'), udp_routers: count('rp_udp_router'),
      pid: live.pid ?? null, restarts: live.restarts ?? 0, last_error: live.last_error ?? null,
    };
  }

  private modelFile(): string {
    return join(this.context.config.dataDir, 'reverse-proxy', 'config.yaml');
  }

  /** The model's YAML in the data directory (the simulated proxy's configuration). */
  private writeModelFile(text: string): string {
    mkdirSync(join(this.context.config.dataDir, 'reverse-proxy'), { recursive: true, mode: 0o700 });
    writeFileSync(this.modelFile(), text, { mode: 0o600 });
    return this.modelFile();
  }

  validate(): Promise<{ valid: boolean; message: string }> {
    return this.applying.run(() => this.validateNow());
  }

  private async validateNow(): Promise<{ valid: boolean; message: string }> {
    let file: string;
    try {
      if (this.dialect === 'caddy-json') {
        const runtime = this.runtime();
        file = writeDaemonFile(runtime, ['candidate.json'], this.renderCaddy(runtime).text);
      } else {
        file = join(this.context.config.dataDir, 'reverse-proxy', 'validate.yaml');
        mkdirSync(join(this.context.config.dataDir, 'reverse-proxy'), { recursive: true, mode: 0o700 });
        writeFileSync(file, this.render(), { mode: 0o600 });
      }
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 400) return { valid: false, message: `Configuration invalid: ${(error as Error).message}` };
      throw error;
    }
    const problem = await this.context.platform.reverseProxy.validate(file);
    rmSync(file, { force: true });
    return problem === null ? { valid: true, message: 'Configuration valid.' } : { valid: false, message: `Configuration invalid: ${problem}` };
  }

  /**
   * Renders, checks and installs the configuration. On Caddy: the candidate is checked with `caddy validate`
   * first (409 and nothing changed when refused); a running Caddy then loads it in place, and when loading or
   * starting fails the previous file is put back (and reloaded) before the 409.
   */
  apply(): Promise<{ message: string; path: string }> {
    return this.applying.run(() => this.applyNow());
  }

  private applied(): { should_run: boolean; install: ProxyInstall | null; config_version: number | null } {
    return this.appliedState.get('reverse-proxy.applied', { should_run: false, install: null as ProxyInstall | null, config_version: null as number | null });
  }

  private recordApplied(install: ProxyInstall, running: boolean): void {
    this.appliedState.set('reverse-proxy.applied', { should_run: running, install, config_version: this.context.apply.versions.activeIfCurrent()?.version ?? null });
  }

  private async applyNow(): Promise<{ message: string; path: string }> {
    const enabled = this.config.read().enabled === true;
    const proxy = this.context.platform.reverseProxy;
    // Where the proxy connects, names resolved now: a special address needs the administrator's allow-list.
    const destinations = [...OUTBOUND_KINDS].flatMap((kind) => this.data(kind).map((data) => ({ kind, data })));
    const refused = await destinationApplyProblem(destinations, this.context.store);
    if (refused) throw conflict(`the reverse proxy would connect to ${refused}`);
    if (this.dialect !== 'caddy-json') {
      const path = this.writeModelFile(this.render());
      await proxy.apply(this.install(path), enabled);
      return { message: enabled ? 'Reverse proxy configuration applied and service restarted' : 'Reverse proxy configuration saved, service stopped', path };
    }
    const runtime = this.runtime();
    const { text, certificates } = this.renderCaddy(runtime);
    const candidate = writeDaemonFile(runtime, ['candidate.json'], text);
    const problem = await proxy.validate(candidate);
    rmSync(candidate, { force: true });
    if (problem !== null) throw conflict(problem);
    const path = join(runtime.dir, 'caddy.json');
    const previous = existsSync(path) ? readFileSync(path, 'utf8') : null;
    writeDaemonFile(runtime, ['caddy.json'], text);
    try {
      const message = await proxy.apply(this.install(path), enabled);
      this.recordApplied(this.install(path), enabled);
      pruneCertificates(runtime, certificates);
      return { message, path };
    } catch (error) {
      if (previous === null) rmSync(path, { force: true });
      else {
        writeDaemonFile(runtime, ['caddy.json'], previous);
        if ((await proxy.status()).running) await proxy.apply(this.install(path), true).catch(() => undefined);
      }
      throw error;
    }
  }

  /** start/stop/restart of the installed configuration (409 before the first apply on a real proxy). */
  async control(action: 'start' | 'stop' | 'restart'): Promise<string> {
    const proxy = this.context.platform.reverseProxy;
    const path = this.dialect === 'caddy-json' ? join(this.runtime().dir, 'caddy.json') : this.modelFile();
    if (action === 'stop') {
      const message = await proxy.stop();
      this.recordApplied(this.applied().install ?? this.install(path), false);
      return message;
    }
    if (this.dialect === 'caddy-json' && !existsSync(path)) throw conflict('nothing to run yet: POST /api/v1/reverse-proxy/apply first');
    const message = action === 'start' ? await proxy.start(this.install(path)) : await proxy.restart(this.install(path));
    this.recordApplied(this.install(path), true);
    return message;
  }

  /** Newest first, filtered by a case-insensitive fixed string (characters outside [A-Za-z0-9 ._-] dropped). */
  async logs(query: { lines: number; search?: string; log_type: 'access' | 'server' }): Promise<string[]> {
    const lines = await this.context.platform.reverseProxy.logs(query.log_type, 5000);
    const needle = (query.search ?? '').replace(/[^A-Za-z0-9 ._-]/g, '').toLowerCase();
    return lines.filter((line) => !needle || line.toLowerCase().includes(needle)).reverse().slice(0, query.lines);
  }
}
