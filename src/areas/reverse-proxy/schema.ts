import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { ABSOLUTE_PATH_PATTERN, SINGLE_LINE_TEXT_PATTERN } from '../../render/grammar.js';
import { LISTEN_ADDRESS_PATTERN, REFERENCE_PATTERN } from './grammar.js';

const name = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', description: 'letters, digits, . _ -' });
const jsonObject = (description: string, defaultValue?: string) =>
  Type.String({ maxLength: 65536, description: `JSON object as a string: ${description}`, ...(defaultValue !== undefined ? { default: defaultValue } : {}) });
const jsonArray = (description: string) => Type.String({ maxLength: 65536, default: '[]', description: `JSON array as a string: ${description}` });
const enabled = Type.Boolean({ default: true });
const Rule = (options: Record<string, unknown>) => Type.String({ maxLength: 4096, pattern: SINGLE_LINE_TEXT_PATTERN, ...options });
const ServiceRef = (description?: string) => Type.String({ minLength: 1, maxLength: 128, pattern: REFERENCE_PATTERN, ...(description ? { description } : {}) });
const FilePath = (description: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: ABSOLUTE_PATH_PATTERN, description });
const EntryPointList = (options: Record<string, unknown>) => Type.String({ maxLength: 4096, pattern: '^[A-Za-z0-9@._,\\s"\\[\\]-]*$', ...options });

export const Entrypoint = Type.Object({
  name,
  address: Type.String({ minLength: 1, maxLength: 128, pattern: LISTEN_ADDRESS_PATTERN, description: 'e.g. ":443" or "0.0.0.0:80/udp"' }),
  config_json: jsonObject('merged into entryPoints.<name>', '{}'),
  enabled,
});

export const HttpRouter = Type.Object({
  name,
  rule: Rule({ minLength: 1, description: 'router rule, e.g. Host(`example.org`); one line' }),
  service: ServiceRef('an HTTP service name (or name@provider)'),
  entry_points: jsonArray('entrypoint names'),
  middlewares: jsonArray('HTTP middleware names, in order'),
  priority: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 0 }),
  tls_json: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()], { default: null, description: 'JSON object: certResolver, options, domains' }),
  enabled,
});

export const ServiceTypes = ['loadBalancer', 'weighted', 'mirroring', 'failover'] as const;
export const HttpService = Type.Object({
  name,
  service_type: StringEnum(ServiceTypes),
  config_json: jsonObject('the service body, e.g. {"servers":[{"url":"http://10.0.0.5:8080"}]}'),
  enabled,
});

export const MiddlewareTypes = [
  'rateLimit', 'inFlightReq', 'ipAllowList', 'ipDenyList', 'basicAuth', 'digestAuth', 'forwardAuth', 'jwt', 'headers',
  'passTLSClientCert', 'contentType', 'compress', 'redirectScheme', 'redirectRegex', 'stripPrefix', 'stripPrefixRegex',
  'addPrefix', 'replacePath', 'replacePathRegex', 'retry', 'circuitBreaker', 'buffering', 'chain', 'grpcWeb', 'errors',
] as const;
export const HttpMiddleware = Type.Object({
  name,
  middleware_type: StringEnum(MiddlewareTypes),
  config_json: jsonObject('the middleware body; basicAuth/digestAuth password hashes and customRequestHeaders values are write-only: they read back as "name:**REDACTED**" / "**REDACTED**", and a placeholder sent back keeps the stored secret'),
  config_secrets: Type.Optional(Type.String({ maxLength: 131072, description: 'write-only, kept by the server: the secrets taken out of config_json (sealed; never returned). Do not send it: 400' })),
  enabled,
});

export const TcpRouter = Type.Object({
  name,
  rule: Rule({ minLength: 1, description: 'e.g. HostSNI(`*`); one line' }),
  service: ServiceRef(),
  entry_points: EntryPointList({ default: '[]', description: 'JSON array of entrypoint names, or a comma-separated list' }),
  priority: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 0 }),
  tls_json: Type.Union([Type.String({ maxLength: 65536 }), Type.Null()], { default: null, description: 'JSON object: passthrough, certResolver, options' }),
  enabled,
});

export const L4Service = Type.Object({
  name,
  service_type: StringEnum(['loadBalancer', 'weighted'], { default: 'loadBalancer' }),
  config_json: jsonObject('the service body, e.g. {"servers":[{"address":"10.0.0.5:5432"}]}'),
  enabled,
});

export const UdpRouter = Type.Object({
  name,
  rule: Rule({ default: '', description: 'UDP routers match on entrypoint only; kept for compatibility (never rendered)' }),
  service: ServiceRef(),
  entry_points: EntryPointList({ default: '[]' }),
  priority: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, default: 0 }),
  enabled,
});

/** `acme:<id>` or `ca:<id>`: a certificate Bulwark issued (ACME or the local CA), by reference. */
export const CERT_SOURCE_PATTERN = '^(acme|ca):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
export const TlsCert = Type.Object({
  name,
  cert_file: Type.Optional(FilePath('absolute path of the certificate file, under a certificate directory (docs/reverse-proxy.md); not needed with source')),
  key_file: Type.Optional(FilePath('absolute path of the key file, under a certificate directory (docs/reverse-proxy.md); not needed with source')),
  source: Type.Union([Type.String({ pattern: CERT_SOURCE_PATTERN }), Type.Null()], {
    default: null,
    description: 'acme:<certificate id> or ca:<certificate id>: the certificate and key come from /acme/certs or /ca/certs, and a renewal reaches the proxy without a restart',
  }),
  stores_json: jsonArray('TLS store names'),
});

export const TlsOption = Type.Object({ name, config_json: jsonObject('minVersion, maxVersion, cipherSuites, sniStrict, clientAuth, alpnProtocols') });
export const CertResolver = Type.Object({ name, config_json: jsonObject('{"acme": {email, storage, caServer, httpChallenge|tlsChallenge|dnsChallenge}}') });

export const ProxyConfig = Type.Object({
  enabled: Type.Boolean({ default: false }),
  log_level: Type.Unsafe<string>({ type: 'string', enum: ['DEBUG', 'INFO', 'WARN', 'ERROR', 'debug', 'info', 'warn', 'error'], default: 'INFO' }),
  access_log_enabled: Type.Boolean({ default: true }),
  access_log_path: Type.String({ maxLength: 1024, pattern: ABSOLUTE_PATH_PATTERN, default: '/var/log/bulwark/reverse-proxy/access.log', description: 'under /var/log/bulwark/ or <data-dir>/logs/' }),
  access_log_format: StringEnum(['common', 'json', 'clf', 'combined'], { default: 'common' }),
  metrics_enabled: Type.Boolean({ default: false }),
  metrics_address: Type.String({ maxLength: 128, pattern: LISTEN_ADDRESS_PATTERN, default: '127.0.0.1:8082' }),
  api_dashboard: Type.Boolean({ default: false }),
});

export const ProxyStatus = Type.Object({
  running: Type.Boolean(),
  version: Type.String(),
  simulated: Type.Boolean(),
  entrypoints: Type.Integer(),
  http_routers: Type.Integer(),
  http_services: Type.Integer(),
  http_middlewares: Type.Integer(),
  tcp_routers: Type.Integer(),
  udp_routers: Type.Integer(),
  pid: Type.Union([Type.Integer(), Type.Null()], { description: 'the proxy process, while it runs' }),
  restarts: Type.Integer({ description: 'automatic restarts of the proxy after it died' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the proxy last ended or failed to restart; null while all is well' }),
});

export const LogsQuery = Type.Object({
  lines: Type.Integer({ minimum: 1, maximum: 5000, default: 200 }),
  search: Type.Optional(Type.String({ maxLength: 256 })),
  log_type: StringEnum(['access', 'server'], { default: 'access' }),
}, { additionalProperties: false });
