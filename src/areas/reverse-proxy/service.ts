import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { Reference } from '../../model/declarations.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import type { JsonObjectSchema } from '../../model/schema-helpers.js';
import {
  CertResolver, Entrypoint, HttpMiddleware, HttpRouter, HttpService, L4Service, ProxyConfig, TcpRouter, TlsCert, TlsOption, UdpRouter,
} from './schema.js';
import { entryPointNames, jsonField, renderProxyConfig } from './render.js';
import { ACCESS_LOG_ROOTS, isReference, proxyJsonProblem } from './grammar.js';
import { certPathProblem } from '../../render/cert-paths.js';
import { isCleanAbsolutePath, isUnder } from '../../render/grammar.js';

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

/** Certificate and key files are read from the certificate directories only (the ACME export roots). */
function checkCertFiles(data: ConfigData, dataDir: string): void {
  for (const field of ['cert_file', 'key_file']) {
    const problem = certPathProblem(data[field], dataDir);
    if (problem) throw badRequest(`body.${field} ${problem}`);
  }
}

interface Declaration {
  kind: string;
  noun: string;
  schema: JsonObjectSchema;
  references?: Reference[];
  json: Record<string, 'object' | 'array' | 'list'>;
}

const DECLARATIONS: Declaration[] = [
  { kind: 'rp_entrypoint', noun: 'entrypoint', schema: Entrypoint, json: { config_json: 'object' } },
  { kind: 'rp_http_service', noun: 'HTTP service', schema: HttpService, json: { config_json: 'object' } },
  { kind: 'rp_http_middleware', noun: 'HTTP middleware', schema: HttpMiddleware, json: { config_json: 'object' } },
  { kind: 'rp_tcp_service', noun: 'TCP service', schema: L4Service, json: { config_json: 'object' } },
  { kind: 'rp_udp_service', noun: 'UDP service', schema: L4Service, json: { config_json: 'object' } },
  { kind: 'rp_tls_cert', noun: 'TLS certificate', schema: TlsCert, json: { stores_json: 'array' } },
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

export const accessLogRoots = (dataDir: string): string[] => [...ACCESS_LOG_ROOTS, `${join(dataDir, 'logs')}/`];

/** The reverse proxy: its eleven collections, the global section, rendering and daemon control. */
export class ReverseProxyService {
  readonly collections: Record<string, CollectionModel> = {};
  readonly config: SingletonModel;

  constructor(private readonly context: AppContext) {
    for (const declaration of DECLARATIONS) {
      this.collections[declaration.kind] = context.models.collection({
        kind: declaration.kind,
        noun: declaration.noun,
        writeAccess: 'proxy:write',
        schema: declaration.schema,
        unique: [{ field: 'name', caseInsensitive: true }],
        references: declaration.references,
        validate: (data) => {
          checkJson(data, declaration.json, context.config.dataDir);
          if (declaration.kind === 'rp_tls_cert') checkCertFiles(data, context.config.dataDir);
        },
      });
    }
    this.config = context.models.singleton({
      kind: 'rp_config', noun: 'reverse-proxy global configuration', writeAccess: 'proxy:write', schema: ProxyConfig,
      validate: (data) => {
        const roots = accessLogRoots(context.config.dataDir);
        const path = String(data.access_log_path);
        if (!isCleanAbsolutePath(path) || !roots.some((root) => isUnder(path, root))) throw badRequest(`body.access_log_path must be a clean path under ${roots.join(', ')}`);
      },
    });
  }

  private data(kind: string): ConfigData[] {
    return this.collections[kind].objects().map((o) => o.data).sort((a, b) => String(a.name).localeCompare(String(b.name)));
  }

  render(): string {
    return renderProxyConfig({
      dataDir: this.context.config.dataDir,
      accessLogRoots: accessLogRoots(this.context.config.dataDir),
      config: this.config.read(),
      entrypoints: this.data('rp_entrypoint'),
      httpRouters: this.data('rp_http_router'),
      httpServices: this.data('rp_http_service'),
      httpMiddlewares: this.data('rp_http_middleware'),
      tcpRouters: this.data('rp_tcp_router'),
      tcpServices: this.data('rp_tcp_service'),
      udpRouters: this.data('rp_udp_router'),
      udpServices: this.data('rp_udp_service'),
      tlsCerts: this.data('rp_tls_cert'),
      tlsOptions: this.data('rp_tls_option'),
      certResolvers: this.data('rp_cert_resolver'),
    });
  }

  async status() {
    const live = await this.context.platform.reverseProxy.status();
    const count = (kind: string) => this.data(kind).filter((item) => item.enabled !== false).length;
    return {
      running: live.running, version: live.version, simulated: this.context.platform.simulated,
      entrypoints: count('rp_entrypoint'), http_routers: count('rp_http_router'), http_services: count('rp_http_service'),
      http_middlewares: count('rp_http_middleware'), tcp_routers: count('rp_tcp_router'), udp_routers: count('rp_udp_router'),
    };
  }

  async validate(): Promise<{ valid: boolean; message: string }> {
    const problem = await this.context.platform.reverseProxy.validate(this.render());
    return problem === null ? { valid: true, message: 'Configuration valid.' } : { valid: false, message: `Configuration invalid: ${problem}` };
  }

  /** Writes the rendered file to the data directory, then installs it (restart when enabled, stop when not). */
  async apply(): Promise<{ message: string; path: string }> {
    const text = this.render();
    const dir = join(this.context.config.dataDir, 'reverse-proxy');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'config.yaml');
    writeFileSync(path, text, { mode: 0o600 });
    const enabled = this.config.read().enabled === true;
    await this.context.platform.reverseProxy.apply(text, enabled);
    return { message: enabled ? 'Reverse proxy configuration applied and service restarted' : 'Reverse proxy configuration saved, service stopped', path };
  }

  /** Newest first, filtered by a case-insensitive fixed string (characters outside [A-Za-z0-9 ._-] dropped). */
  async logs(query: { lines: number; search?: string; log_type: 'access' | 'server' }): Promise<string[]> {
    const lines = await this.context.platform.reverseProxy.logs(query.log_type, 5000);
    const needle = (query.search ?? '').replace(/[^A-Za-z0-9 ._-]/g, '').toLowerCase();
    return lines.filter((line) => !needle || line.toLowerCase().includes(needle)).reverse().slice(0, query.lines);
  }
}
