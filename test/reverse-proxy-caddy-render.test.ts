/**
 * The model's router rules as Caddy matcher sets, and what the Caddy renderer refuses by name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caddyMatchers, RuleRefusal } from '../src/render/caddy/traefik-rule.js';
import { caddyMiddleware, caddyService, caddyTlsOption, renderCaddyConfig } from '../src/render/caddy/caddy.js';
import { ProxyRefusal } from '../src/render/caddy/caddy-values.js';

test('rules become OR-ed matcher sets of AND-ed matchers; negations become not', () => {
  assert.deepEqual(caddyMatchers('Host(`A.example`, `b.example`) && PathPrefix(`/api`)'), [{ host: ['a.example', 'b.example'], path: ['/api*'] }]);
  assert.deepEqual(caddyMatchers('Host(`a.example`) && (Path(`/x`) || Method(`POST`))'), [{ host: ['a.example'], path: ['/x'] }, { host: ['a.example'], method: ['POST'] }]);
  assert.deepEqual(caddyMatchers('!ClientIP(`10.0.0.0/8`) && !Headers(`X-A`, `1`)'), [{ not: [{ remote_ip: { ranges: ['10.0.0.0/8'] } }, { header: { 'X-A': ['1'] } }] }]);
  assert.deepEqual(caddyMatchers('!(Host(`a.example`) || Host(`b.example`))'), [{ not: [{ host: ['a.example'] }, { host: ['b.example'] }] }]);
  assert.deepEqual(caddyMatchers('Query(`a=1`, `b`)'), [{ query: { a: ['1'], b: [''] } }]);
});

test('rules Caddy cannot say are refused by name', () => {
  for (const [rule, message] of [
    ['HostRegexp(`{sub:[a-z]+}.example`)', /HostRegexp is not supported/],
    ['Host(`a.example`) && Host(`b.example`)', /two Host matchers with &&/],
    ['Path(`/a*`)', /must not contain/],
    ['Path(`/{env.HOME}`)', /must not contain/],
    ['Host(`a example`)', /not a host name/],
    ['Host(`a.example`', /expects "\)"/],
    ['Host(`a.example`) junk', /unexpected/],
    ['', /empty/],
  ] as const) {
    assert.throws(() => caddyMatchers(rule), (error: Error) => error instanceof RuleRefusal && message.test(error.message), rule);
  }
});

test('middlewares, services and TLS options: the supported ones map, the rest are refused naming the feature', () => {
  const mw = (type: string, config: unknown) => ({ name: 'm', middleware_type: type, config_json: JSON.stringify(config) });
  assert.deepEqual(caddyMiddleware(mw('headers', { customRequestHeaders: { 'X-A': 'b', 'X-Gone': '' } })), [{ handler: 'headers', request: { set: { 'X-A': ['b'] }, delete: ['X-Gone'] } }]);
  assert.throws(() => caddyMiddleware(mw('basicAuth', { users: ['bob:$apr1$x$y'] })), /bcrypt-hash .*MD5/);
  assert.throws(() => caddyMiddleware(mw('rateLimit', {})), /rateLimit is not supported by Caddy/);
  assert.throws(() => caddyMiddleware(mw('headers', { sslRedirect: true })), /sslRedirect is not supported by Caddy/);
  assert.deepEqual(caddyService({ name: 's', service_type: 'loadBalancer', config_json: '{"servers":[{"url":"https://[2001:db8::1]:8443"}]}' }), { handler: 'reverse_proxy', upstreams: [{ dial: '[2001:db8::1]:8443' }], transport: { protocol: 'http', tls: {} } });
  assert.throws(() => caddyService({ name: 's', service_type: 'mirroring', config_json: '{}' }), /mirroring is not supported/);
  assert.throws(() => caddyService({ name: 's', service_type: 'loadBalancer', config_json: '{"servers":[{"url":"http://a.example/path"}]}' }), /scheme:\/\/host\[:port\] only/);
  assert.deepEqual(caddyTlsOption({ name: 'o', config_json: '{"minVersion":"VersionTLS13"}' }), { protocol_min: 'tls1.3' });
  assert.throws(() => caddyTlsOption({ name: 'o', config_json: '{"minVersion":"VersionTLS10"}' }), ProxyRefusal);
});

test('the document: one server per entry point, routes by priority, TCP/UDP and certificate resolvers refused', () => {
  const model = {
    config: { log_level: 'info', access_log_enabled: false, metrics_enabled: false, api_dashboard: false },
    entrypoints: [{ name: 'web', address: ':8080', config_json: '{}' }],
    httpRouters: [
      { name: 'short', rule: 'Host(`a.example`)', service: 'svc', entry_points: '[]', middlewares: '[]', priority: 0, tls_json: null },
      { name: 'long', rule: 'Host(`a.example`) && PathPrefix(`/api`)', service: 'svc', entry_points: '[]', middlewares: '[]', priority: 0, tls_json: null },
    ],
    httpServices: [{ name: 'svc', service_type: 'loadBalancer', config_json: '{"servers":[{"url":"http://10.0.0.5:80"}]}' }],
    httpMiddlewares: [], tcpRouters: [], tcpServices: [], udpRouters: [], udpServices: [], tlsOptions: [], certificates: [],
  };
  const paths = { adminSocket: '/s/admin.sock', storageDir: '/s/data' };
  const document = JSON.parse(renderCaddyConfig(model, paths));
  const server = document.apps.http.servers.ep_web;
  assert.deepEqual(server.listen, [':8080']);
  assert.deepEqual(server.routes.map((r: { match: unknown }) => r.match), [[{ host: ['a.example'], path: ['/api*'] }], [{ host: ['a.example'] }]], 'the longer rule first');
  assert.equal(document.admin.listen, 'unix//s/admin.sock');
  // ACME HTTP-01 through the proxy: plain-HTTP servers pass challenges to the loopback responder first.
  const withAcme = JSON.parse(renderCaddyConfig({ ...model, acmeChallenge: '127.0.0.1:8402' }, paths)).apps.http.servers.ep_web.routes[0];
  assert.deepEqual(withAcme, { match: [{ path: ['/.well-known/acme-challenge/*'] }], handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '127.0.0.1:8402' }] }], terminal: true });
  assert.throws(() => renderCaddyConfig({ ...model, acmeChallenge: '10.0.0.1:80' }, paths), /must listen on loopback/);
  assert.throws(() => renderCaddyConfig({ ...model, tcpRouters: [{ name: 'db', rule: 'HostSNI(`*`)', service: 'x', enabled: true }] }, paths), /TCP router db: .*no layer4 module/);
  assert.throws(() => renderCaddyConfig({ ...model, udpServices: [{ name: 'dns', service_type: 'loadBalancer', config_json: '{}' }] }, paths), /UDP service dns/);
  assert.throws(() => renderCaddyConfig({ ...model, httpRouters: [{ ...model.httpRouters[0], tls_json: '{"certResolver":"le"}' }] }, paths), /certResolver: Caddy would contact the ACME CA itself/);
  assert.throws(() => renderCaddyConfig({ ...model, entrypoints: [{ name: 'dns', address: ':53/udp', config_json: '{}' }] }, paths), /UDP address/);
});
