import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { AcmeService } from '../src/areas/acme/service.js';
import { freePort } from './helpers/free-port.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('account: defaults, save with validation', async () => {
  assert.deepEqual(json(await t.request('GET', '/api/v1/acme/account')), { id: null, directory_url: 'https://acme-v02.api.letsencrypt.org/directory', contact_email: '', registered: false, http01_listen: ':80', allowed_networks: [] });
  assert.equal((await t.request('POST', '/api/v1/acme/account', { contact_email: 'nobody' })).statusCode, 400);
  assert.equal((await t.request('POST', '/api/v1/acme/account', { contact_email: 'a@example.org', directory_url: 'http://insecure/dir' })).statusCode, 400);
  const saved = json(await t.request('POST', '/api/v1/acme/account', { contact_email: 'admin@example.org' }));
  assert.equal(saved.contact_email, 'admin@example.org');
});

test('DNS providers: secrets write-only, "" clears, cert reference unknown → 400 and in use → 409', async () => {
  const created = await t.request('POST', '/api/v1/acme/dns-providers', { name: 'cf', kind: 'cloudflare', zone: 'example.org', api_token: 'cf-secret-token' });
  assert.equal(created.statusCode, 201, created.body);
  const provider = json(created);
  assert.equal(provider.has_token, true);
  assert.equal(provider.has_secret, false);
  assert.ok(!created.body.includes('cf-secret-token'));
  assert.equal((await t.request('POST', '/api/v1/acme/dns-providers', { name: 'cf', kind: 'cloudflare', zone: 'example.org' })).statusCode, 409);
  assert.equal((await t.request('POST', '/api/v1/acme/dns-providers', { name: 'x', kind: 'godaddy', zone: 'example.org' })).statusCode, 400);
  const manual = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'by-hand', kind: 'manual', zone: 'example.net' }));
  assert.deepEqual(json(await t.request('POST', `/api/v1/acme/dns-providers/${manual.id}/test`)), { ok: true, message: 'manual provider: TXT records are added by the operator' });

  assert.equal((await t.request('POST', '/api/v1/acme/certs', { common_name: 'www.example.org' })).statusCode, 400, 'dns-01 needs a provider');
  assert.equal((await t.request('POST', '/api/v1/acme/certs', { common_name: 'www.example.org', dns_provider_id: '00000000-0000-4000-8000-000000000000' })).statusCode, 400);
  assert.equal((await t.request('POST', '/api/v1/acme/certs', { common_name: 'bad_name!', dns_provider_id: provider.id })).statusCode, 400);
  const cert = await t.request('POST', '/api/v1/acme/certs', { common_name: 'WWW.example.org', sans: ['api.example.org', '*.example.org'], dns_provider_id: provider.id });
  assert.equal(cert.statusCode, 201, cert.body);
  const record = json(cert);
  assert.equal(record.common_name, 'www.example.org');
  assert.equal(record.status, 'pending');
  assert.equal(record.has_cert, false);
  assert.equal(record.cert_pem, undefined);
  const inUse = await t.request('DELETE', `/api/v1/acme/dns-providers/${provider.id}`);
  assert.equal(inUse.statusCode, 409);

  const cleared = json(await t.request('PUT', `/api/v1/acme/dns-providers/${provider.id}`, { api_token: '' }));
  assert.equal(cleared.has_token, false);
  assert.equal(json(await t.request('PUT', `/api/v1/acme/certs/${record.id}`, { renew_days_before_expiry: 14 })).renew_days_before_expiry, 14);
  const renew = json(await t.request('POST', `/api/v1/acme/certs/${record.id}/renew`));
  assert.equal(renew.ok, false);
  assert.match(json(await t.request('GET', `/api/v1/acme/certs/${record.id}`)).last_renew_error, /the DNS provider has no api_token/);
  // With an account whose CA is a blocked address, the order fails at the outbound guard, recorded, never a 5xx.
  assert.equal((await t.request('POST', '/api/v1/acme/account', { contact_email: 'a@example.org', http01_listen: 'nonsense' })).statusCode, 400);
  assert.equal((await t.request('POST', '/api/v1/acme/account', { contact_email: 'a@example.org', allowed_networks: ['10.0.0.0/33'] })).statusCode, 400);
  json(await t.request('POST', '/api/v1/acme/account', { contact_email: 'a@example.org', directory_url: 'https://127.0.0.1:9/directory', http01_listen: `127.0.0.1:${await freePort()}` }));
  assert.equal(json(await t.request('PUT', `/api/v1/acme/certs/${record.id}`, { challenge_type: 'http-01', sans: ['api.example.org'] })).challenge_type, 'http-01');
  const blocked = json(await t.request('POST', `/api/v1/acme/certs/${record.id}/renew`));
  assert.equal(blocked.ok, false);
  assert.match(blocked.message, /outbound request refused: 127\.0\.0\.1 is a blocked address/);
  const after = json(await t.request('GET', `/api/v1/acme/certs/${record.id}`));
  assert.equal(after.status, 'failed', 'never issued: failed');
  assert.match(after.last_renew_error, /blocked address/);
  assert.equal((await t.request('PUT', '/api/v1/acme/certs/' + record.id, { auto_renew: true })).statusCode, 200);
});

test('issued material: PEM downloads, key only with settings:write, export targets confined, cascade on delete', async () => {
  // Material from the local CA stands in for an ACME-issued certificate.
  await t.request('POST', '/api/v1/ca', {});
  const issued = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'mail.example.org' }));
  const provider = json(await t.request('GET', '/api/v1/acme/dns-providers'))[0];
  const cert = json(await t.request('POST', '/api/v1/acme/certs', { common_name: 'mail.example.org', dns_provider_id: provider.id }));
  AcmeService.prototype.storeIssued.call({ certs: t.app.context.models.get('acme_cert') } as AcmeService, cert.id, { cert_pem: issued.certificate_pem, chain_pem: issued.ca_certificate_pem, key_pem: issued.private_key_pem });
  const active = json(await t.request('GET', `/api/v1/acme/certs/${cert.id}`));
  assert.equal(active.status, 'active');
  assert.equal(active.has_cert, true);
  assert.ok(active.days_until_expiry >= 364);
  const fullchain = await t.request('GET', `/api/v1/acme/certs/${cert.id}/cert.pem`);
  assert.equal(fullchain.body.match(/BEGIN CERTIFICATE/g)!.length, 2);
  assert.match(String(fullchain.headers['content-disposition']), /mail\.example\.org\.pem/);
  assert.equal((await t.request('GET', `/api/v1/acme/certs/${cert.id}/key.pem`)).body, issued.private_key_pem);
  assert.ok(!(await t.request('GET', `/api/v1/acme/certs/${cert.id}`)).body.includes('PRIVATE KEY'));

  const escape = await t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'file', config: { cert_path: '/etc/ssl/../shadow', key_path: '/etc/ssl/k.pem' } });
  assert.equal(escape.statusCode, 400);
  assert.match(json(escape).error, /cert_path/);
  assert.equal((await t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'file', config: { cert_path: '/tmp/x.pem', key_path: '/etc/ssl/k.pem' } })).statusCode, 400);
  assert.equal((await t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'webhook', config: { url: 'http://plain' } })).statusCode, 400);
  const hook = json(await t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'webhook', config: { url: 'https://127.0.0.1:9/hook' } }));
  assert.equal(json(await t.request('PUT', `/api/v1/acme/export-targets/${hook.id}`, { config: { url: 'https://127.0.0.2:9/hook' } })).config.url, 'https://127.0.0.2:9/hook');
  const published = json(await t.request('POST', `/api/v1/acme/certs/${cert.id}/publish`));
  assert.equal(published.ok, false);
  const target = json(await t.request('GET', `/api/v1/acme/certs/${cert.id}/targets`))[0];
  assert.equal(target.last_run_ok, false);
  assert.match(target.last_run_error, /blocked address/, 'the webhook goes through the outbound guard');

  assert.equal((await t.request('DELETE', `/api/v1/acme/certs/${cert.id}`)).statusCode, 204);
  assert.equal((await t.request('DELETE', `/api/v1/acme/export-targets/${hook.id}`)).statusCode, 404, 'targets went with their certificate');
});

test('scheduled renewal picks the certificates that are due: never issued (not failed), or within renew_days_before_expiry', async () => {
  const acme = (t.app.areas.find((area) => area.name === 'acme') as unknown as { service: AcmeService }).service;
  await t.request('POST', '/api/v1/ca', {});
  const provider = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'sched', kind: 'manual', zone: 'sched.example' }));
  const make = async (name: string, extra: Record<string, unknown> = {}) => json(await t.request('POST', '/api/v1/acme/certs', { common_name: name, dns_provider_id: provider.id, ...extra })).id as string;
  const issue = async (id: string, name: string) => {
    const issued = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: name, validity_days: 60 }));
    acme.storeIssued(id, { cert_pem: issued.certificate_pem, chain_pem: issued.ca_certificate_pem, key_pem: issued.private_key_pem });
  };
  const pending = await make('pending.sched.example');
  const fresh = await make('fresh.sched.example', { renew_days_before_expiry: 30 });
  await issue(fresh, 'fresh.sched.example');
  const close = await make('close.sched.example', { renew_days_before_expiry: 90 });
  await issue(close, 'close.sched.example');
  const manual = await make('manual.sched.example', { renew_days_before_expiry: 90, auto_renew: false });
  await issue(manual, 'manual.sched.example');
  const due = acme.dueForRenewal();
  assert.ok(due.includes(pending), 'never issued');
  assert.ok(due.includes(close), 'expires in 60 days, renewed 90 days before');
  assert.ok(!due.includes(fresh), 'expires in 60 days, renewed 30 days before: not yet');
  assert.ok(!due.includes(manual), 'auto_renew off');
  const failed = json(await t.request('GET', '/api/v1/acme/certs')).find((cert: { status: string }) => cert.status === 'failed');
  assert.ok(failed, 'the earlier test left a certificate whose first issue failed');
  assert.ok(!due.includes(failed.id), 'a failed first issue waits for someone to renew it by hand');
});

test('publish by hand reloads the running reverse proxy that serves the certificate from the exported files, and says so', async () => {
  const { join } = await import('node:path');
  await t.request('POST', '/api/v1/ca', {});
  const issued = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'pub.example.org' }));
  const provider = json(await t.request('GET', '/api/v1/acme/dns-providers'))[0];
  const cert = json(await t.request('POST', '/api/v1/acme/certs', { common_name: 'pub.example.org', dns_provider_id: provider.id }));
  AcmeService.prototype.storeIssued.call({ certs: t.app.context.models.get('acme_cert') } as AcmeService, cert.id, { cert_pem: issued.certificate_pem, chain_pem: issued.ca_certificate_pem, key_pem: issued.private_key_pem });
  const dir = join(t.app.context.config.dataDir, 'certs', 'b16s');
  const certPath = join(dir, 'pub.pem');
  const keyPath = join(dir, 'pub.key');
  assert.equal((await t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'file', config: { cert_path: certPath, key_path: keyPath } })).statusCode, 201);
  const publish = async () => json(await t.request('POST', `/api/v1/acme/certs/${cert.id}/publish`));
  const reloads = async () => (json(await t.request('GET', '/api/v1/reverse-proxy/logs?log_type=server&lines=5000')) as string[]).filter((line) => line.includes('configuration applied')).length;

  // Nothing serves it yet: the files are written, nothing is reloaded.
  assert.deepEqual(await publish(), { ok: true, message: 'published to every target', expires_at: json(await t.request('GET', `/api/v1/acme/certs/${cert.id}`)).expires_at });

  // The running proxy serves the exported files: a publish reloads it and the answer names it.
  assert.equal((await t.request('POST', '/api/v1/reverse-proxy/tls/certs', { name: 'pub', cert_file: certPath, key_file: keyPath })).statusCode, 201);
  assert.equal((await t.request('PUT', '/api/v1/reverse-proxy/config', { enabled: true })).statusCode, 200);
  assert.equal((await t.request('POST', '/api/v1/reverse-proxy/apply')).statusCode, 200);
  assert.equal(json(await t.request('GET', '/api/v1/reverse-proxy/status')).running, true);
  const before = await reloads();
  const published = await publish();
  assert.equal(published.ok, true);
  assert.equal(published.message, 'published to every target; reloaded: reverse proxy');
  assert.equal(await reloads(), before + 1, 'the proxy applied its configuration again');

  // A stopped proxy is left stopped.
  await t.request('POST', '/api/v1/reverse-proxy/stop');
  assert.equal((await publish()).message, 'published to every target');
  assert.equal(json(await t.request('GET', '/api/v1/reverse-proxy/status')).running, false);
  await t.request('PUT', '/api/v1/reverse-proxy/config', { enabled: false });
});
