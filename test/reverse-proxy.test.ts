import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
  // The samples proxy to a LAN (10.0.0.0/8): a private upstream needs the administrator's outbound allow-list.
  const allowed = await t.request('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['10.0.0.0/8'] });
  assert.equal(allowed.statusCode, 200, allowed.body);
});
after(() => t.close());

const base = '/api/v1/reverse-proxy';

test('every collection: create → list → update → delete, names unique, JSON fields validated', async () => {
  const samples: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['entrypoints', { name: 'web', address: ':80' }, { address: ':8080' }],
    ['http/services', { name: 'svc', service_type: 'loadBalancer', config_json: '{"servers":[{"url":"http://10.0.0.5"}]}' }, { enabled: false }],
    ['http/middlewares', { name: 'strip', middleware_type: 'stripPrefix', config_json: '{"prefixes":["/api"]}' }, { config_json: '{"prefixes":["/v1"]}' }],
    ['tcp/services', { name: 'pg', config_json: '{"servers":[{"address":"10.0.0.9:5432"}]}' }, { service_type: 'weighted' }],
    ['udp/services', { name: 'dns', config_json: '{"servers":[{"address":"10.0.0.53:53"}]}' }, { enabled: false }],
    ['tls/certs', { name: 'site', cert_file: '/etc/ssl/site.pem', key_file: '/etc/bulwark/site.key' }, { stores_json: '["default"]' }],
    ['tls/options', { name: 'modern', config_json: '{"minVersion":"VersionTLS13"}' }, { config_json: '{"minVersion":"VersionTLS12"}' }],
    ['cert-resolvers', { name: 'le', config_json: '{"acme":{"email":"a@example.org","storage":"/var/lib/bulwark/acme.json","httpChallenge":{"entryPoint":"web"}}}' }, {}],
  ];
  for (const [path, body, patch] of samples) {
    const created = await t.request('POST', `${base}/${path}`, body);
    assert.equal(created.statusCode, 201, `${path}: ${created.body}`);
    const record = json(created);
    assert.equal(record.name, body.name);
    assert.equal((await t.request('POST', `${base}/${path}`, body)).statusCode, 409, `${path} duplicate`);
    const updated = await t.request('PUT', `${base}/${path}/${record.id}`, patch);
    assert.equal(updated.statusCode, 200, `${path}: ${updated.body}`);
    for (const [key, value] of Object.entries(patch)) assert.equal(json(updated)[key], value, `${path}.${key}`);
    const list = json(await t.request('GET', `${base}/${path}`));
    assert.equal(list.length, 1, path);
  }
  const badJson = await t.request('POST', `${base}/http/services`, { name: 'x', service_type: 'loadBalancer', config_json: '{not json' });
  assert.equal(badJson.statusCode, 400);
  assert.match(json(badJson).error, /config_json is not valid JSON/);
  const wrongShape = await t.request('POST', `${base}/http/services`, { name: 'x', service_type: 'loadBalancer', config_json: '[1]' });
  assert.match(json(wrongShape).error, /config_json must be a JSON object/);
  const badType = await t.request('POST', `${base}/http/middlewares`, { name: 'x', middleware_type: 'teleport', config_json: '{}' });
  assert.equal(badType.statusCode, 400);
  assert.match(json(badType).error, /middleware_type/);
});

test('routers reference services, entrypoints, middlewares and resolvers by name: unknown → 400, in use → 409', async () => {
  const unknownService = await t.request('POST', `${base}/http/routers`, { name: 'r1', rule: 'Host(`a.example`)', service: 'nope' });
  assert.equal(unknownService.statusCode, 400);
  assert.match(json(unknownService).error, /service/);
  const unknownMiddleware = await t.request('POST', `${base}/http/routers`, { name: 'r1', rule: 'Host(`a.example`)', service: 'svc', middlewares: '["ghost"]' });
  assert.equal(unknownMiddleware.statusCode, 400);
  assert.match(json(unknownMiddleware).error, /middlewares/);
  const unknownResolver = await t.request('POST', `${base}/http/routers`, { name: 'r1', rule: 'Host(`a.example`)', service: 'svc', tls_json: '{"certResolver":"ghost"}' });
  assert.equal(unknownResolver.statusCode, 400);
  const external = await t.request('POST', `${base}/http/routers`, { name: 'dash', rule: 'Host(`t.example`)', service: 'api@internal' });
  assert.equal(external.statusCode, 201, 'provider-qualified names are not checked');

  const router = json(await t.request('POST', `${base}/http/routers`, {
    name: 'r1', rule: 'Host(`a.example`)', service: 'svc', entry_points: '["web"]', middlewares: '["strip"]', priority: 10, tls_json: '{"certResolver":"le","options":"modern"}',
  }));
  const tcp = json(await t.request('POST', `${base}/tcp/routers`, { name: 't1', rule: 'HostSNI(`*`)', service: 'pg', entry_points: 'web' }));
  assert.equal(tcp.entry_points, 'web');
  const udp = json(await t.request('POST', `${base}/udp/routers`, { name: 'u1', service: 'dns', entry_points: '["web"]' }));

  const services = json(await t.request('GET', `${base}/http/services`));
  const inUse = await t.request('DELETE', `${base}/http/services/${services[0].id}`);
  assert.equal(inUse.statusCode, 409);
  assert.match(json(inUse).error, /in use by HTTP router/);
  const entrypoints = json(await t.request('GET', `${base}/entrypoints`));
  assert.equal((await t.request('DELETE', `${base}/entrypoints/${entrypoints[0].id}`)).statusCode, 409);
  const resolvers = json(await t.request('GET', `${base}/cert-resolvers`));
  assert.equal((await t.request('DELETE', `${base}/cert-resolvers/${resolvers[0].id}`)).statusCode, 409);

  // Rendering: enabled rows only (the disabled service and UDP service are left out), TLS always.
  const apply = json(await t.request('POST', `${base}/apply`));
  const yaml = parse(readFileSync(apply.path, 'utf8'));
  assert.equal(apply.path, join(t.dataDir, 'reverse-proxy', 'config.yaml'));
  assert.deepEqual(yaml.entryPoints.web, { address: ':8080' });
  assert.deepEqual(yaml.http.routers.r1, { rule: 'Host(`a.example`)', service: 'svc', entryPoints: ['web'], middlewares: ['strip'], priority: 10, tls: { certResolver: 'le', options: 'modern' } });
  assert.equal(yaml.http.services, undefined, 'the only HTTP service is disabled');
  assert.deepEqual(yaml.http.middlewares.strip, { stripPrefix: { prefixes: ['/v1'] } });
  assert.deepEqual(yaml.tcp.services.pg, { weighted: { servers: [{ address: '10.0.0.9:5432' }] } });
  assert.deepEqual(yaml.tcp.routers.t1.entryPoints, ['web']);
  assert.deepEqual(yaml.udp.routers.u1, { service: 'dns', entryPoints: ['web'] });
  assert.deepEqual(yaml.tls.certificates, [{ certFile: '/etc/ssl/site.pem', keyFile: '/etc/bulwark/site.key', stores: ['default'] }]);
  assert.equal(yaml.tls.options.modern.minVersion, 'VersionTLS12');
  assert.equal(yaml.certificatesResolvers.le.acme.email, 'a@example.org');

  for (const [path, id] of [['http/routers', router.id], ['tcp/routers', tcp.id], ['udp/routers', udp.id]]) {
    assert.equal((await t.request('DELETE', `${base}/${path}/${id}`)).statusCode, 204);
  }
  assert.equal((await t.request('DELETE', `${base}/http/services/${services[0].id}`)).statusCode, 204);
});

test('global config, status, control, validate and logs go through the platform and stay coherent', async () => {
  const config = json(await t.request('GET', `${base}/config`));
  assert.equal(config.enabled, false);
  assert.equal(config.log_level, 'INFO');
  assert.equal((await t.request('PUT', `${base}/config`, { access_log_format: 'xml' })).statusCode, 400);
  assert.equal(json(await t.request('PUT', `${base}/config`, { enabled: true, metrics_enabled: true })).enabled, true);

  const status = json(await t.request('GET', `${base}/status`));
  assert.equal(status.simulated, true);
  assert.equal(status.running, false);
  assert.equal(status.entrypoints, 1);
  assert.match(json(await t.request('POST', `${base}/start`)).message, /started/);
  assert.equal(json(await t.request('GET', `${base}/status`)).running, true);
  assert.match(json(await t.request('POST', `${base}/stop`)).message, /stopped/);
  assert.equal(json(await t.request('GET', `${base}/status`)).running, false);
  assert.deepEqual(json(await t.request('POST', `${base}/validate`)), { valid: true, message: 'Configuration valid.' });
  const applied = json(await t.request('POST', `${base}/apply`));
  assert.match(applied.message, /restarted/);
  assert.equal(json(await t.request('GET', `${base}/status`)).running, true);
  const yaml = parse(readFileSync(applied.path, 'utf8'));
  assert.deepEqual(yaml.metrics, { prometheus: { entryPoint: 'metrics' } });

  const logs = json(await t.request('GET', `${base}/logs?log_type=server&lines=2`));
  assert.equal(logs.length, 2);
  assert.match(logs[0], /applied/, 'newest first');
  const stopped = json(await t.request('GET', `${base}/logs?log_type=server&search=STOPPED`));
  assert.equal(stopped.length, 2, 'the stop and the first (disabled) apply');
  assert.ok(stopped.every((line: string) => line.includes('stopped')));
  assert.deepEqual(json(await t.request('GET', `${base}/logs`)), []);
});
