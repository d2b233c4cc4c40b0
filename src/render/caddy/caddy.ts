/**
 * The reverse-proxy model (entry points, routers, services, middlewares, TLS) rendered as Caddy's native JSON
 * configuration. Pure: configuration in, text out. Each entry point is one Caddy server; each enabled HTTP
 * router one route on the servers of its entry points (highest priority first: an explicit priority, else the
 * rule's length, as the model's rule language orders them); middlewares become handlers before the service's
 * `reverse_proxy`. What Caddy's core cannot express (TCP/UDP routers — Debian's Caddy has no layer4 module —,
 * certificate resolvers, some middlewares and service kinds) is refused with a ProxyRefusal naming it.
 */
import type { ConfigData } from '../../store/config-store.js';
import { caddyMatchers, ruleHosts, RuleRefusal } from './traefik-rule.js';
import {
  caddyDuration, caddyHeaderName, caddyListen, caddyLiteral, caddyPathPrefix, caddyRanges, caddyUpstream, onlyKeys, ProxyRefusal,
} from './caddy-values.js';

type Json = Record<string, unknown>;

/** A certificate and key already copied where Caddy may read them (the proxy's runtime directory). */
export interface InstalledCertificate {
  name: string;
  certFile: string;
  keyFile: string;
}

/** The reverse-proxy model as stored: its settings and the collections every rendering of it reads. */
export interface ProxyRouting {
  config: ConfigData;
  entrypoints: ConfigData[];
  httpRouters: ConfigData[];
  httpServices: ConfigData[];
  httpMiddlewares: ConfigData[];
  tcpRouters: ConfigData[];
  tcpServices: ConfigData[];
  udpRouters: ConfigData[];
  udpServices: ConfigData[];
  tlsOptions: ConfigData[];
}

export interface CaddyModel extends ProxyRouting {
  certificates: InstalledCertificate[];
  /**
   * The loopback address (`127.0.0.1:port`) of Bulwark's ACME HTTP-01 responder behind the proxy, once an ACME
   * account exists: plain-HTTP servers pass `/.well-known/acme-challenge/*` to it ahead of everything else, so
   * HTTP-01 works while Caddy holds port 80 (acme/http01-responder.ts).
   */
  acmeChallenge?: string | null;
}

export interface CaddyPaths {
  /** The admin API's unix socket (reloads go through it; it never listens on TCP). */
  adminSocket: string;
  /** Where Caddy keeps its own state (its certificate cache of nothing, locks). */
  storageDir: string;
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Parses a stored JSON-in-a-string field (validated on write); empty or absent is `{}`. */
export function jsonObject(value: unknown, where: string): Json {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    throw new ProxyRefusal(`${where} is not valid JSON`);
  }
  if (!isObject(parsed)) throw new ProxyRefusal(`${where} must be a JSON object`);
  return parsed;
}

function jsonNames(value: unknown): string[] {
  if (typeof value !== 'string' || value.trim() === '') return [];
  if (value.trim().startsWith('[')) {
    try {
      const parsed = JSON.parse(value) as unknown;
      return Array.isArray(parsed) ? parsed.map(String) : [];
    } catch {
      return [];
    }
  }
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

const enabledOnly = (items: ConfigData[]) => items.filter((item) => item.enabled !== false);
/** An object's name, re-checked (it becomes part of keys such as the server name): a stored value from an old release is refused. */
const label = (item: ConfigData) => {
  const name = String(item.name);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name)) throw new ProxyRefusal('an object name must be letters, digits, . _ - (a stored name does not fit)');
  return name;
};
const withRuleContext = <T>(where: string, build: () => T): T => {
  try {
    return build();
  } catch (error) {
    if (error instanceof RuleRefusal) throw new ProxyRefusal(`${where} ${error.message}`);
    throw error;
  }
};

// ---- one object at a time (also used to refuse a write the proxy could never run) -------------------------

const ENTRYPOINT_KEYS = ['asDefault', 'http', 'transport'];

/** An entry point's listen address, timeouts, redirect and TLS flag. */
export function caddyEntrypoint(item: ConfigData): { listen: string; asDefault: boolean; tls: boolean; redirect: { to: string; scheme: string; permanent: boolean } | null; timeouts: Json } {
  const where = `entrypoint ${label(item)}`;
  const listen = caddyListen(item.address, `${where} address`);
  const config = jsonObject(item.config_json, `${where} config_json`);
  onlyKeys(config, ENTRYPOINT_KEYS, `${where} config_json`);
  const http = isObject(config.http) ? config.http : {};
  onlyKeys(http, ['redirections', 'tls'], `${where} config_json.http`);
  let redirect = null;
  if (http.redirections !== undefined) {
    const redirections = isObject(http.redirections) ? http.redirections : {};
    onlyKeys(redirections, ['entryPoint'], `${where} config_json.http.redirections`);
    const target = isObject(redirections.entryPoint) ? redirections.entryPoint : {};
    onlyKeys(target, ['to', 'scheme', 'permanent'], `${where} config_json.http.redirections.entryPoint`);
    const scheme = target.scheme ?? 'https';
    if (scheme !== 'http' && scheme !== 'https') throw new ProxyRefusal(`${where} redirection scheme must be http or https`);
    if (typeof target.to !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$|^:[0-9]{1,5}$/.test(target.to)) throw new ProxyRefusal(`${where} redirection "to" must name an entry point or :port`);
    redirect = { to: target.to, scheme, permanent: target.permanent !== false };
  }
  if (http.tls !== undefined) {
    const tls = isObject(http.tls) ? http.tls : {};
    onlyKeys(tls, ['options'], `${where} config_json.http.tls`);
  }
  const timeouts: Json = {};
  if (config.transport !== undefined) {
    const transport = isObject(config.transport) ? config.transport : {};
    onlyKeys(transport, ['respondingTimeouts'], `${where} config_json.transport`);
    const responding = isObject(transport.respondingTimeouts) ? transport.respondingTimeouts : {};
    onlyKeys(responding, ['readTimeout', 'writeTimeout', 'idleTimeout'], `${where} config_json.transport.respondingTimeouts`);
    for (const [from, to] of [['readTimeout', 'read_timeout'], ['writeTimeout', 'write_timeout'], ['idleTimeout', 'idle_timeout']]) {
      if (responding[from] !== undefined) timeouts[to] = caddyDuration(responding[from], `${where} ${from}`);
    }
  }
  return { listen, asDefault: config.asDefault === true, tls: http.tls !== undefined, redirect, timeouts };
}

const BCRYPT = /^\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}$/;
const USERNAME = /^[A-Za-z0-9._@+-]{1,128}$/;
const HEADER_KEYS = ['customRequestHeaders', 'customResponseHeaders', 'stsSeconds', 'stsIncludeSubdomains', 'stsPreload', 'frameDeny', 'customFrameOptionsValue', 'contentTypeNosniff', 'browserXssFilter', 'referrerPolicy', 'contentSecurityPolicy'];

function headerOperations(map: unknown, where: string): { set: Record<string, string[]>; delete: string[] } {
  if (!isObject(map)) throw new ProxyRefusal(`${where} must be an object of header names to values`);
  const set: Record<string, string[]> = {};
  const remove: string[] = [];
  for (const [name, value] of Object.entries(map)) {
    caddyHeaderName(name, `${where} name`);
    // As in the model's semantics, an empty value removes the header.
    if (value === '') remove.push(name);
    else set[name] = [caddyLiteral(value, `${where}.${name}`)];
  }
  return { set, delete: remove };
}

/** The handlers a middleware becomes, in order (a chain expands to its members' handlers). */
export function caddyMiddleware(item: ConfigData, lookup?: (name: string) => ConfigData | undefined, depth = 0): Json[] {
  const where = `middleware ${label(item)}`;
  const type = String(item.middleware_type);
  const config = jsonObject(item.config_json, `${where} config_json`);
  switch (type) {
    case 'basicAuth': {
      onlyKeys(config, ['users', 'realm', 'removeHeader'], `${where} config_json`);
      const users = Array.isArray(config.users) ? config.users : [];
      if (users.length === 0) throw new ProxyRefusal(`${where} basicAuth needs users ["name:bcrypt-hash"]`);
      const accounts = users.map((entry, index) => {
        const [username, ...rest] = String(entry).split(':');
        const hash = rest.join(':');
        if (!USERNAME.test(username ?? '')) throw new ProxyRefusal(`${where} users[${index}] user name must be letters, digits or . _ @ + -`);
        if (!BCRYPT.test(hash)) throw new ProxyRefusal(`${where} users[${index}] must be name:bcrypt-hash ($2a$, $2b$ or $2y$); Caddy does not take MD5 (apr1) or SHA1 hashes`);
        return { username, password: hash };
      });
      const provider: Json = { accounts, hash: { algorithm: 'bcrypt' } };
      if (config.realm !== undefined) {
        const realm = caddyLiteral(config.realm, `${where} realm`, 128);
        if (realm.includes('"') || realm.includes('\\')) throw new ProxyRefusal(`${where} realm must not contain " or \\`);
        provider.realm = realm;
      }
      const handlers: Json[] = [{ handler: 'authentication', providers: { http_basic: provider } }];
      if (config.removeHeader === true) handlers.push({ handler: 'headers', request: { delete: ['Authorization'] } });
      return handlers;
    }
    case 'headers': {
      onlyKeys(config, HEADER_KEYS, `${where} config_json`);
      const request = config.customRequestHeaders === undefined ? { set: {}, delete: [] } : headerOperations(config.customRequestHeaders, `${where} customRequestHeaders`);
      const response = config.customResponseHeaders === undefined ? { set: {}, delete: [] } : headerOperations(config.customResponseHeaders, `${where} customResponseHeaders`);
      if (config.stsSeconds !== undefined) {
        if (!Number.isInteger(config.stsSeconds) || (config.stsSeconds as number) < 0) throw new ProxyRefusal(`${where} stsSeconds must be a whole number`);
        response.set['Strict-Transport-Security'] = [`max-age=${String(config.stsSeconds)}${config.stsIncludeSubdomains ? '; includeSubDomains' : ''}${config.stsPreload ? '; preload' : ''}`];
      }
      if (config.frameDeny === true) response.set['X-Frame-Options'] = ['DENY'];
      if (config.customFrameOptionsValue !== undefined) response.set['X-Frame-Options'] = [caddyLiteral(config.customFrameOptionsValue, `${where} customFrameOptionsValue`, 256)];
      if (config.contentTypeNosniff === true) response.set['X-Content-Type-Options'] = ['nosniff'];
      if (config.browserXssFilter === true) response.set['X-XSS-Protection'] = ['1; mode=block'];
      if (config.referrerPolicy !== undefined) response.set['Referrer-Policy'] = [caddyLiteral(config.referrerPolicy, `${where} referrerPolicy`, 256)];
      if (config.contentSecurityPolicy !== undefined) response.set['Content-Security-Policy'] = [caddyLiteral(config.contentSecurityPolicy, `${where} contentSecurityPolicy`)];
      const handler: Json = { handler: 'headers' };
      const ops = (operations: { set: Record<string, string[]>; delete: string[] }) => ({
        ...(Object.keys(operations.set).length ? { set: operations.set } : {}), ...(operations.delete.length ? { delete: operations.delete } : {}),
      });
      if (Object.keys(ops(request)).length) handler.request = ops(request);
      // deferred: applied to the upstream's response as it is written, so the proxied answer carries them.
      if (Object.keys(ops(response)).length) handler.response = { ...ops(response), deferred: true };
      return [handler];
    }
    case 'stripPrefix': {
      onlyKeys(config, ['prefixes'], `${where} config_json`);
      const prefixes = Array.isArray(config.prefixes) ? config.prefixes.map((prefix, index) => caddyPathPrefix(prefix, `${where} prefixes[${index}]`)) : [];
      if (prefixes.length === 0) throw new ProxyRefusal(`${where} stripPrefix needs prefixes`);
      // One group: only the first matching prefix is stripped.
      return [{ handler: 'subroute', routes: prefixes.map((prefix) => ({ group: 'strip', match: [{ path: [prefix, `${prefix}/*`] }], handle: [{ handler: 'rewrite', strip_path_prefix: prefix }] })) }];
    }
    case 'addPrefix': {
      onlyKeys(config, ['prefix'], `${where} config_json`);
      return [{ handler: 'rewrite', uri: `${caddyPathPrefix(config.prefix, `${where} prefix`)}{http.request.uri}` }];
    }
    case 'redirectScheme': {
      onlyKeys(config, ['scheme', 'permanent', 'port'], `${where} config_json`);
      const scheme = config.scheme ?? 'https';
      if (scheme !== 'http' && scheme !== 'https') throw new ProxyRefusal(`${where} scheme must be http or https`);
      const port = config.port === undefined || config.port === '' ? '' : String(config.port);
      if (port && !/^[0-9]{1,5}$/.test(port)) throw new ProxyRefusal(`${where} port must be a port number`);
      return [{ handler: 'static_response', status_code: config.permanent === true ? 301 : 302, headers: { Location: [`${scheme}://{http.request.host}${port ? `:${port}` : ''}{http.request.uri}`] } }];
    }
    case 'ipAllowList':
    case 'ipDenyList': {
      onlyKeys(config, ['sourceRange'], `${where} config_json`);
      const ranges = caddyRanges(config.sourceRange, `${where} sourceRange`);
      const match = type === 'ipAllowList' ? { not: [{ remote_ip: { ranges } }] } : { remote_ip: { ranges } };
      return [{ handler: 'subroute', routes: [{ match: [match], handle: [{ handler: 'static_response', status_code: 403 }] }] }];
    }
    case 'compress': {
      onlyKeys(config, [], `${where} config_json`);
      return [{ handler: 'encode', encodings: { gzip: {}, zstd: {} }, prefer: ['zstd', 'gzip'] }];
    }
    case 'chain': {
      onlyKeys(config, ['middlewares'], `${where} config_json`);
      if (!lookup) return [];
      if (depth > 8) throw new ProxyRefusal(`${where} chains nest too deeply (or loop)`);
      const members = Array.isArray(config.middlewares) ? config.middlewares.map(String) : [];
      return members.flatMap((name) => {
        const member = lookup(name);
        if (!member) throw new ProxyRefusal(`${where} chains ${name}, which is not an enabled middleware`);
        return caddyMiddleware(member, lookup, depth + 1);
      });
    }
    default:
      throw new ProxyRefusal(`${where}: middleware type ${type} is not supported by Caddy (supported: basicAuth, headers, stripPrefix, addPrefix, redirectScheme, ipAllowList, ipDenyList, compress, chain)`);
  }
}

/** The reverse_proxy handler of an HTTP service. */
export function caddyService(item: ConfigData): Json {
  const where = `HTTP service ${label(item)}`;
  if (item.service_type !== 'loadBalancer') throw new ProxyRefusal(`${where}: service type ${String(item.service_type)} is not supported by Caddy (only loadBalancer)`);
  const config = jsonObject(item.config_json, `${where} config_json`);
  onlyKeys(config, ['servers', 'passHostHeader'], `${where} config_json`);
  const servers = Array.isArray(config.servers) ? config.servers : [];
  if (servers.length === 0) throw new ProxyRefusal(`${where} needs servers [{"url": "http://host:port"}]`);
  const upstreams = servers.map((server, index) => {
    if (!isObject(server)) throw new ProxyRefusal(`${where} servers[${index}] must be {"url": …}`);
    onlyKeys(server, ['url'], `${where} servers[${index}]`);
    return caddyUpstream(server.url, `${where} servers[${index}].url`);
  });
  if (new Set(upstreams.map((upstream) => upstream.tls)).size > 1) throw new ProxyRefusal(`${where} mixes http and https servers; Caddy needs one transport per service`);
  const handler: Json = { handler: 'reverse_proxy', upstreams: upstreams.map(({ dial }) => ({ dial })) };
  if (upstreams[0].tls) handler.transport = { protocol: 'http', tls: {} };
  // The model forwards the client's Host by default (as Caddy does); false sends the upstream's own.
  if (config.passHostHeader === false) handler.headers = { request: { set: { Host: ['{http.reverse_proxy.upstream.hostport}'] } } };
  return handler;
}

const TLS_VERSIONS: Record<string, string> = { VersionTLS12: 'tls1.2', VersionTLS13: 'tls1.3' };

/** The connection-policy fields of a TLS option set. */
export function caddyTlsOption(item: ConfigData): Json {
  const where = `TLS option ${label(item)}`;
  const config = jsonObject(item.config_json, `${where} config_json`);
  onlyKeys(config, ['minVersion', 'maxVersion', 'cipherSuites', 'alpnProtocols'], `${where} config_json`);
  const policy: Json = {};
  for (const [from, to] of [['minVersion', 'protocol_min'], ['maxVersion', 'protocol_max']]) {
    if (config[from] === undefined) continue;
    const version = TLS_VERSIONS[String(config[from])];
    if (!version) throw new ProxyRefusal(`${where} ${from} must be VersionTLS12 or VersionTLS13 (Caddy serves nothing older)`);
    policy[to] = version;
  }
  if (config.cipherSuites !== undefined) {
    if (!Array.isArray(config.cipherSuites) || !config.cipherSuites.every((suite) => typeof suite === 'string' && /^TLS_[A-Z0-9_]{1,64}$/.test(suite))) throw new ProxyRefusal(`${where} cipherSuites must be Go cipher-suite names`);
    policy.cipher_suites = config.cipherSuites;
  }
  if (config.alpnProtocols !== undefined) {
    if (!Array.isArray(config.alpnProtocols) || !config.alpnProtocols.every((protocol) => typeof protocol === 'string' && /^[A-Za-z0-9./-]{1,32}$/.test(protocol))) throw new ProxyRefusal(`${where} alpnProtocols must be protocol names`);
    policy.alpn = config.alpnProtocols;
  }
  return policy;
}

/** A router's TLS settings: whether it serves TLS and the option set it names. */
export function caddyRouterTls(item: ConfigData): { tls: boolean; options: string | null } {
  if (item.tls_json === null || item.tls_json === undefined) return { tls: false, options: null };
  const where = `HTTP router ${label(item)} tls_json`;
  const tls = jsonObject(item.tls_json, where);
  if (tls.certResolver !== undefined) {
    throw new ProxyRefusal(`${where}.certResolver: Caddy would contact the ACME CA itself, outside Bulwark's outbound guard; issue the certificate with /acme/certs and reference it from /reverse-proxy/tls/certs (source acme:<id>)`);
  }
  onlyKeys(tls, ['options'], where);
  if (tls.options !== undefined && (typeof tls.options !== 'string' || tls.options.includes('@'))) throw new ProxyRefusal(`${where}.options must name a TLS option set`);
  return { tls: true, options: (tls.options as string | undefined) ?? null };
}

/** An HTTP router's match sets and order. */
export function caddyRouterMatch(item: ConfigData): Json[] {
  return withRuleContext(`HTTP router ${label(item)}`, () => caddyMatchers(String(item.rule)));
}

/** Why an enabled TCP or UDP router or service cannot run: Debian's Caddy has no layer4 module. */
export function caddyLayer4Refusal(kind: 'tcp' | 'udp', what: 'router' | 'service', name: string): ProxyRefusal {
  const upper = kind.toUpperCase();
  return new ProxyRefusal(`${upper} ${what} ${name}: Caddy as packaged by Debian proxies HTTP only (no layer4 module); ${upper} ${what}s are not supported`);
}

// ---- the whole document ---------------------------------------------------------------------------------

interface RouteEntry {
  order: number;
  name: string;
  route: Json;
  tls: boolean;
  options: string | null;
  hosts: string[];
}

/** The configuration as Caddy's JSON, with every unsupported feature refused by name. */
export function renderCaddyConfig(model: CaddyModel, paths: CaddyPaths): string {
  for (const [kind, routers, services] of [['tcp', model.tcpRouters, model.tcpServices], ['udp', model.udpRouters, model.udpServices]] as const) {
    const router = enabledOnly(routers)[0];
    if (router) throw caddyLayer4Refusal(kind, 'router', label(router));
    const service = enabledOnly(services)[0];
    if (service) throw caddyLayer4Refusal(kind, 'service', label(service));
  }
  if (model.config.api_dashboard === true) throw new ProxyRefusal('api_dashboard: Caddy has no dashboard; turn it off');

  const entrypoints = new Map(enabledOnly(model.entrypoints).map((item) => [label(item), { item, ...caddyEntrypoint(item) }]));
  const services = new Map(enabledOnly(model.httpServices).map((item) => [label(item), item]));
  const middlewares = new Map(enabledOnly(model.httpMiddlewares).map((item) => [label(item), item]));
  const tlsOptions = new Map(model.tlsOptions.map((item) => [label(item), item]));
  const defaults = [...entrypoints.values()].filter((entry) => entry.asDefault).map((entry) => label(entry.item));
  const allEntrypoints = [...entrypoints.keys()];

  const routesByEntrypoint = new Map<string, RouteEntry[]>();
  for (const router of enabledOnly(model.httpRouters)) {
    const where = `HTTP router ${label(router)}`;
    const serviceName = String(router.service);
    const service = services.get(serviceName);
    if (!service) throw new ProxyRefusal(`${where} service ${serviceName} is not an enabled HTTP service${serviceName.includes('@') ? ' (services of other providers do not exist in Caddy)' : ''}`);
    const handlers = jsonNames(router.middlewares).flatMap((name) => {
      const middleware = middlewares.get(name);
      if (!middleware) throw new ProxyRefusal(`${where} middleware ${name} is not an enabled HTTP middleware`);
      return caddyMiddleware(middleware, (member) => middlewares.get(member));
    });
    const match = caddyRouterMatch(router);
    const { tls, options } = caddyRouterTls(router);
    if (options && !tlsOptions.has(options)) throw new ProxyRefusal(`${where} TLS option set ${options} does not exist`);
    const names = jsonNames(router.entry_points);
    const targets = names.length ? names : defaults.length ? defaults : allEntrypoints;
    for (const name of targets) {
      if (!entrypoints.has(name)) throw new ProxyRefusal(`${where} entry point ${name} is not an enabled entry point`);
      const list = routesByEntrypoint.get(name) ?? [];
      list.push({
        order: Number(router.priority) > 0 ? Number(router.priority) : String(router.rule).length,
        name: label(router),
        route: { match, handle: [...handlers, caddyService(service)], terminal: true },
        tls, options, hosts: withRuleContext(where, () => ruleHosts(String(router.rule))),
      });
      routesByEntrypoint.set(name, list);
    }
  }

  const servers: Json = {};
  for (const [name, entry] of entrypoints) {
    const routes = (routesByEntrypoint.get(name) ?? []).sort((a, b) => b.order - a.order || a.name.localeCompare(b.name));
    const tlsRoutes = routes.filter((route) => route.tls);
    const plain = routes.find((route) => !route.tls);
    const servesTls = entry.tls || tlsRoutes.length > 0;
    if (servesTls && plain) {
      throw new ProxyRefusal(`entrypoint ${name} serves TLS${tlsRoutes[0] ? ` for HTTP router ${tlsRoutes[0].name}` : ''} and plain HTTP for HTTP router ${plain.name}; Caddy serves one or the other on a port`);
    }
    const server: Json = { listen: [entry.listen], automatic_https: { disable: true }, ...entry.timeouts };
    const serverRoutes = routes.map((route) => route.route);
    if (entry.redirect) {
      const target = entry.redirect.to.startsWith(':') ? entry.redirect.to : entrypoints.get(entry.redirect.to)?.listen;
      if (!target) throw new ProxyRefusal(`entrypoint ${name} redirects to ${entry.redirect.to}, which is not an enabled entry point`);
      const port = /:([0-9]+)$/.exec(target)![1];
      const standard = (entry.redirect.scheme === 'https' && port === '443') || (entry.redirect.scheme === 'http' && port === '80');
      serverRoutes.unshift({ handle: [{ handler: 'static_response', status_code: entry.redirect.permanent ? 308 : 307, headers: { Location: [`${entry.redirect.scheme}://{http.request.host}${standard ? '' : `:${port}`}{http.request.uri}`] } }], terminal: true });
    }
    if (!servesTls && model.acmeChallenge) {
      if (!/^(127\.0\.0\.1|\[::1\]):[0-9]{1,5}$/.test(model.acmeChallenge)) throw new ProxyRefusal('the ACME HTTP-01 responder must listen on loopback to be reached through the proxy');
      serverRoutes.unshift({ match: [{ path: ['/.well-known/acme-challenge/*'] }], handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: model.acmeChallenge }] }], terminal: true });
    }
    if (serverRoutes.length) server.routes = serverRoutes;
    if (servesTls) {
      // One policy per router that names an option set (matched by its host names), then the default.
      const policies: Json[] = [];
      for (const route of tlsRoutes) {
        if (!route.options) continue;
        const policy = caddyTlsOption(tlsOptions.get(route.options)!);
        policies.push(route.hosts.length ? { match: { sni: route.hosts }, ...policy } : policy);
      }
      const defaultOptions = tlsOptions.get('default');
      policies.push(defaultOptions ? caddyTlsOption(defaultOptions) : {});
      server.tls_connection_policies = policies;
    }
    if (model.config.access_log_enabled === true) server.logs = {};
    servers[`ep_${name}`] = server;
  }
  if (model.config.metrics_enabled === true) {
    servers.bulwark_metrics = { listen: [caddyListen(model.config.metrics_address, 'metrics_address')], automatic_https: { disable: true }, routes: [{ match: [{ path: ['/metrics'] }], handle: [{ handler: 'metrics' }] }] };
  }

  const level = String(model.config.log_level ?? 'INFO').toUpperCase();
  if (!['DEBUG', 'INFO', 'WARN', 'ERROR'].includes(level)) throw new ProxyRefusal('log_level must be DEBUG, INFO, WARN or ERROR');
  const document: Json = {
    admin: { listen: `unix/${paths.adminSocket}`, config: { persist: false } },
    storage: { module: 'file_system', root: paths.storageDir },
    logging: {
      logs: {
        // The server log on stderr, the access log on stdout: Bulwark reads both and writes the access log file.
        default: { writer: { output: 'stderr' }, encoder: { format: 'json' }, level, exclude: ['http.log.access'] },
        access: { writer: { output: 'stdout' }, encoder: { format: 'json' }, level: 'INFO', include: ['http.log.access'] },
      },
    },
    apps: {
      http: { servers },
      ...(model.certificates.length ? { tls: { certificates: { load_files: model.certificates.map((cert) => ({ certificate: cert.certFile, key: cert.keyFile, tags: [cert.name] })) } } } : {}),
    },
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
