import type { ConfigData } from '../../store/config-store.js';
import { yamlDocument } from '../../render/yaml-document.js';
import { renderRefused } from '../../render/refusal.js';
import { certPathProblem } from '../../render/cert-paths.js';
import { isCleanAbsolutePath, isUnder } from '../../render/grammar.js';
import { isReference, proxyJsonProblem } from './grammar.js';
import type { ProxyRouting } from '../../render/caddy/caddy.js';

const FORMAT = 'reverse-proxy configuration';

/** Parses a stored JSON-in-a-string field; the collections validated it, so a failure means "empty". */
export function jsonField<T>(value: unknown, fallback: T): T {
  if (typeof value !== 'string' || value.trim() === '') return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** Entry points of a router: a JSON array, or (as TCP pages send) a comma-separated list. */
export function entryPointNames(value: unknown): string[] {
  if (typeof value !== 'string' || value.trim() === '') return [];
  if (value.trim().startsWith('[')) return jsonField<unknown[]>(value, []).map(String);
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

export interface ProxyModel extends ProxyRouting {
  dataDir: string;
  accessLogRoots: string[];
  tlsCerts: ConfigData[];
  certResolvers: ConfigData[];
}

/**
 * Values re-checked while building the document (a stored value from an older release is refused, not
 * written): JSON bodies without file keys or control characters, names and references by their grammar.
 */
function body(value: unknown, field: string, dataDir: string): Record<string, unknown> {
  const parsed = jsonField<unknown>(value, {});
  const problem = proxyJsonProblem(parsed, dataDir);
  if (problem) throw renderRefused(FORMAT, field, problem);
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

function names(values: unknown[], field: string): string[] {
  const list = values.map(String);
  if (!list.every(isReference)) throw renderRefused(FORMAT, field, 'not a list of names');
  return list;
}

const on = (items: ConfigData[]) => items.filter((item) => item.enabled !== false);
const byName = <T>(items: ConfigData[], build: (item: ConfigData) => T): Record<string, T> =>
  Object.fromEntries(items.map((item) => [names([item.name], 'name')[0], build(item)]));

function router(item: ConfigData, withMiddlewares: boolean, dataDir: string): Record<string, unknown> {
  const out: Record<string, unknown> = { rule: item.rule, service: names([item.service], `router ${String(item.name)} service`)[0] };
  const entryPoints = names(entryPointNames(item.entry_points), `router ${String(item.name)} entry_points`);
  if (entryPoints.length > 0) out.entryPoints = entryPoints;
  if (withMiddlewares) {
    const middlewares = names(jsonField<unknown[]>(item.middlewares, []), `router ${String(item.name)} middlewares`);
    if (middlewares.length > 0) out.middlewares = middlewares;
  }
  if (Number(item.priority) > 0) out.priority = item.priority;
  if (item.tls_json !== null && item.tls_json !== undefined) out.tls = body(item.tls_json, `router ${String(item.name)} tls_json`, dataDir);
  return out;
}

/**
 * The proxy's file-provider configuration (Traefik-compatible schema, one YAML document): enabled rows of every
 * collection, TLS material and resolvers always, plus the global log, access-log, metrics and API settings.
 */
export function renderProxyConfig(model: ProxyModel): string {
  const { config, dataDir } = model;
  const document: Record<string, unknown> = {
    log: { level: String(config.log_level).toUpperCase() },
  };
  if (config.access_log_enabled) {
    const path = String(config.access_log_path);
    if (!isCleanAbsolutePath(path) || !model.accessLogRoots.some((root) => isUnder(path, root))) throw renderRefused(FORMAT, 'access_log_path', 'not under the log directories');
    document.accessLog = { filePath: path, format: config.access_log_format };
  }
  const entryPoints = byName(on(model.entrypoints), (item) => ({ ...body(item.config_json, `entrypoint ${String(item.name)} config_json`, dataDir), address: item.address }));
  if (config.metrics_enabled) {
    entryPoints.metrics = { address: config.metrics_address };
    document.metrics = { prometheus: { entryPoint: 'metrics' } };
  }
  if (config.api_dashboard) document.api = { dashboard: true };
  if (Object.keys(entryPoints).length > 0) document.entryPoints = entryPoints;
  const section = (routers: ConfigData[], services: ConfigData[], middlewares: ConfigData[] | null, withMiddlewares: boolean) => {
    const out: Record<string, unknown> = {};
    if (on(routers).length) out.routers = byName(on(routers), (item) => router(item, withMiddlewares, model.dataDir));
    if (on(services).length) out.services = byName(on(services), (item) => ({ [String(item.service_type)]: body(item.config_json, `service ${String(item.name)} config_json`, dataDir) }));
    if (middlewares && on(middlewares).length) out.middlewares = byName(on(middlewares), (item) => ({ [String(item.middleware_type)]: body(item.config_json, `middleware ${String(item.name)} config_json`, dataDir) }));
    return Object.keys(out).length ? out : undefined;
  };
  const http = section(model.httpRouters, model.httpServices, model.httpMiddlewares, true);
  const tcp = section(model.tcpRouters, model.tcpServices, null, false);
  const udp = section(model.udpRouters.map((r) => ({ ...r, rule: undefined, tls_json: null })), model.udpServices, null, false);
  if (http) document.http = http;
  if (tcp) document.tcp = tcp;
  if (udp) {
    // UDP routers have no rule.
    for (const value of Object.values((udp.routers ?? {}) as Record<string, Record<string, unknown>>)) delete value.rule;
    document.udp = udp;
  }
  const tls: Record<string, unknown> = {};
  if (model.tlsCerts.length) {
    tls.certificates = model.tlsCerts.map((item) => {
      const stores = names(jsonField<unknown[]>(item.stores_json, []), `certificate ${String(item.name)} stores_json`);
      // A certificate by reference (acme:<id>, ca:<id>) is named as such; the model's YAML has no file for it.
      if (typeof item.source === 'string') return { source: item.source, ...(stores.length ? { stores } : {}) };
      for (const field of ['cert_file', 'key_file']) {
        const problem = certPathProblem(item[field], model.dataDir);
        if (problem) throw renderRefused(FORMAT, `certificate ${String(item.name)} ${field}`, problem);
      }
      return { certFile: item.cert_file, keyFile: item.key_file, ...(stores.length ? { stores } : {}) };
    });
  }
  if (model.tlsOptions.length) tls.options = byName(model.tlsOptions, (item) => body(item.config_json, `TLS option ${String(item.name)} config_json`, dataDir));
  if (Object.keys(tls).length) document.tls = tls;
  if (model.certResolvers.length) document.certificatesResolvers = byName(model.certResolvers, (item) => body(item.config_json, `resolver ${String(item.name)} config_json`, dataDir));
  return yamlDocument('Generated by Bulwark; edits are overwritten on apply.', document, FORMAT);
}
