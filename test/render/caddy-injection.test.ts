/**
 * Caddy's JSON (src/render/caddy/caddy.ts) from hostile values: every string field of the reverse-proxy model that
 * reaches it — plain fields and every string leaf of the JSON-in-a-string fields — is replaced, in turn, by
 * hostile strings (quotes, braces, Caddy placeholders, control characters, wildcards, JSON fragments). Each
 * render must either refuse (ProxyRefusal) or produce a document with exactly the benign document's keys and
 * no placeholder, wildcard or control character Bulwark did not put there itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderCaddyConfig, type CaddyModel } from '../../src/render/caddy/caddy.js';
import { ProxyRefusal } from '../../src/render/caddy/caddy-values.js';
import type { ConfigData } from '../../src/store/config-store.js';

const HOSTILE = ['"', '\\', '{env.HOME}', '{http.request.header.Authorization}', '}', '*', '\n', '\r', '\u0000', '\u001b[31m', '","admin":{"listen":"tcp/0.0.0.0:2019"},"x":"', 'a b', '../../etc/passwd', '$2a$10$', '`) || Host(`evil'];
/** Placeholders Bulwark writes itself (redirects, rewrites, the upstream Host). */
const OWN_PLACEHOLDERS = /\{http\.request\.(host|uri)\}|\{http\.reverse_proxy\.upstream\.hostport\}/g;
const HASH = '$2a$14$E1DcOIUwFbE4XL/endKgL.pWqIRWevle557VP/WjuR24iBpCnT1cO';

function benignModel(): CaddyModel {
  return {
    config: { enabled: true, log_level: 'INFO', access_log_enabled: true, metrics_enabled: true, metrics_address: '127.0.0.1:8082', api_dashboard: false },
    entrypoints: [
      { name: 'web', address: ':80', enabled: true, config_json: JSON.stringify({ http: { redirections: { entryPoint: { to: 'websecure', scheme: 'https' } } } }) },
      { name: 'websecure', address: '10.0.0.1:443', enabled: true, config_json: JSON.stringify({ asDefault: true, transport: { respondingTimeouts: { readTimeout: '30s' } } }) },
    ],
    httpRouters: [{ name: 'r', rule: 'Host(`a.example`) && PathPrefix(`/api`) && !ClientIP(`10.9.0.0/16`) && Headers(`X-K`, `v`) && Method(`GET`) && Query(`k=v`)', service: 'svc', entry_points: '["websecure"]', middlewares: '["hdr","auth","strip","add","ipl","redir","cmp"]', priority: 0, tls_json: '{"options":"opt"}', enabled: true }],
    httpServices: [{ name: 'svc', service_type: 'loadBalancer', config_json: JSON.stringify({ servers: [{ url: 'http://10.0.0.5:8080' }], passHostHeader: false }), enabled: true }],
    httpMiddlewares: [
      { name: 'hdr', middleware_type: 'headers', config_json: JSON.stringify({ customRequestHeaders: { 'X-A': 'b' }, customResponseHeaders: { 'X-C': 'd' }, referrerPolicy: 'no-referrer', contentSecurityPolicy: "default-src 'self'", customFrameOptionsValue: 'SAMEORIGIN' }), enabled: true },
      { name: 'auth', middleware_type: 'basicAuth', config_json: JSON.stringify({ users: [`alice:${HASH}`], realm: 'site' }), enabled: true },
      { name: 'strip', middleware_type: 'stripPrefix', config_json: JSON.stringify({ prefixes: ['/api'] }), enabled: true },
      { name: 'add', middleware_type: 'addPrefix', config_json: JSON.stringify({ prefix: '/v1' }), enabled: true },
      { name: 'ipl', middleware_type: 'ipAllowList', config_json: JSON.stringify({ sourceRange: ['10.0.0.0/8'] }), enabled: true },
      { name: 'redir', middleware_type: 'redirectScheme', config_json: JSON.stringify({ scheme: 'https', port: '8443' }), enabled: true },
      { name: 'cmp', middleware_type: 'compress', config_json: '{}', enabled: true },
    ],
    tcpRouters: [], tcpServices: [], udpRouters: [], udpServices: [],
    tlsOptions: [{ name: 'opt', config_json: JSON.stringify({ minVersion: 'VersionTLS12', cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'], alpnProtocols: ['h2', 'http/1.1'] }) }],
    certificates: [{ name: 'site', certFile: '/run/x/certs/site-1.pem', keyFile: '/run/x/certs/site-1.key' }],
  };
}
const PATHS = { adminSocket: '/run/x/state/admin.sock', storageDir: '/run/x/state/data' };

/** Every key path of a JSON tree (array indexes collapsed), the document's structure. */
function keyPaths(tree: unknown, prefix = ''): string[] {
  if (Array.isArray(tree)) return tree.flatMap((item) => keyPaths(item, `${prefix}[]`));
  if (tree && typeof tree === 'object') return Object.entries(tree).flatMap(([key, value]) => [`${prefix}.${key}`, ...keyPaths(value, `${prefix}.${key}`)]);
  return [];
}
function strings(tree: unknown): string[] {
  if (typeof tree === 'string') return [tree];
  if (Array.isArray(tree)) return tree.flatMap(strings);
  if (tree && typeof tree === 'object') return Object.values(tree).flatMap(strings);
  return [];
}

/** Every way to put `value` into one string of the model: whole plain fields and each leaf of the JSON fields. */
function mutations(model: CaddyModel, value: string): { where: string; model: CaddyModel }[] {
  const out: { where: string; model: CaddyModel }[] = [];
  const lists = ['entrypoints', 'httpRouters', 'httpServices', 'httpMiddlewares', 'tlsOptions'] as const;
  for (const list of lists) {
    model[list].forEach((item, index) => {
      for (const [field, current] of Object.entries(item)) {
        if (typeof current !== 'string') continue;
        const put = (next: string, where: string) => {
          const copy = structuredClone(model);
          (copy[list][index] as ConfigData)[field] = next;
          out.push({ where: `${list}[${index}].${field}${where}`, model: copy });
        };
        if (/^[[{]/.test(current.trim())) {
          const leaves = (tree: unknown, path: (string | number)[]): (string | number)[][] =>
            typeof tree === 'string' ? [path] : Array.isArray(tree) ? tree.flatMap((v, i) => leaves(v, [...path, i])) : tree && typeof tree === 'object' ? Object.entries(tree).flatMap(([k, v]) => leaves(v, [...path, k])) : [];
          for (const path of leaves(JSON.parse(current), [])) {
            const tree = JSON.parse(current);
            let node = tree;
            for (const step of path.slice(0, -1)) node = node[step];
            node[path.at(-1)!] = value;
            put(JSON.stringify(tree), ` ${path.join('.')}`);
          }
        } else {
          put(value, '');
          put(`${current}${value}`, ' (appended)');
        }
      }
    });
  }
  for (const field of ['metrics_address', 'log_level']) {
    const copy = structuredClone(model);
    copy.config[field] = value;
    out.push({ where: `config.${field}`, model: copy });
  }
  return out;
}

test('hostile values in every string that reaches Caddy\'s JSON: refused, or the document keeps its keys and takes the value literally', () => {
  const benign = JSON.parse(renderCaddyConfig(benignModel(), PATHS));
  const benignKeys = keyPaths(benign).sort();
  let refused = 0;
  let rendered = 0;
  for (const hostile of HOSTILE) {
    for (const { where, model } of mutations(benignModel(), hostile)) {
      let text: string;
      try {
        text = renderCaddyConfig(model, PATHS);
      } catch (error) {
        assert.ok(error instanceof ProxyRefusal, `${where} = ${JSON.stringify(hostile)}: ${(error as Error).stack}`);
        refused++;
        continue;
      }
      rendered++;
      const document = JSON.parse(text);
      assert.deepEqual(keyPaths(document).sort(), benignKeys, `${where} = ${JSON.stringify(hostile)} changed the document's keys`);
      for (const value of strings(document)) {
        const foreign = value.replace(OWN_PLACEHOLDERS, '');
        assert.ok(!/[{}\u0000-\u001f]/.test(foreign), `${where} = ${JSON.stringify(hostile)} put ${JSON.stringify(value)} into the document`);
      }
      assert.equal(document.admin.listen, `unix/${PATHS.adminSocket}`);
    }
  }
  assert.ok(refused > 100 && rendered > 10, `refused ${refused}, rendered ${rendered}`);
});
