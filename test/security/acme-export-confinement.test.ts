/**
 * ACME file export targets (issue 11): paths stay inside the certificate directories, symbolic links are never
 * followed (neither one present when the target is saved nor one planted before publishing), and modes are
 * sane. The symlink cases need a directory under /etc/ssl, which needs root.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { rootSkipReason } from '../helpers/shared.js';
import { AcmeService } from '../../src/areas/acme/service.js';

let t: AreaApp;
let certId: string;
before(async () => {
  t = await startAreaApp();
  // Material from the local CA stands in for an ACME-issued certificate.
  await t.request('POST', '/api/v1/ca', {});
  const issued = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'mail.example.org' }));
  const provider = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'by-hand', kind: 'manual', zone: 'example.org' }));
  certId = json(await t.request('POST', '/api/v1/acme/certs', { common_name: 'mail.example.org', dns_provider_id: provider.id })).id;
  AcmeService.prototype.storeIssued.call({ certs: t.app.context.models.get('acme_cert') } as AcmeService, certId, { cert_pem: issued.certificate_pem, chain_pem: issued.ca_certificate_pem, key_pem: issued.private_key_pem });
});
after(() => t.close());

const target = (config: Record<string, unknown>) => t.request('POST', `/api/v1/acme/certs/${certId}/targets`, { kind: 'file', config });
const inData = (...parts: string[]) => join(t.dataDir, 'certs', ...parts);

test('modes: world-writable (777, 666), setuid-style and keys readable by others are refused with 400 naming the field', async () => {
  const paths = { cert_path: inData('a.pem'), key_path: inData('a.key') };
  for (const [field, mode] of [['mode', '777'], ['mode', '0666'], ['mode', '0772'], ['key_mode', '0644'], ['key_mode', '0604'], ['mode', '4755'], ['mode', '0o644']] as const) {
    const res = await target({ ...paths, [field]: mode });
    assert.equal(res.statusCode, 400, `${field} ${mode}: ${res.body}`);
    assert.match(json(res).error, new RegExp(`body\\.config\\.${field}`));
  }
  assert.equal((await target({ ...paths, mode: '0644', key_mode: '0600' })).statusCode, 201);
});

test('paths outside the certificate directories, or naming a non-certificate file there, are refused with 400', async () => {
  const key = inData('k.key');
  for (const cert_path of ['/etc/nginx/nginx.conf', '/etc/unbound/unbound.conf.d/evil.conf', '/etc/ssl/x/../../shadow', '/tmp/x.pem', '/etc/ssl//x.pem', '/etc/ssl/x.pem\n', 'relative.pem', '/etc/cron.d/job.pem']) {
    const res = await target({ cert_path, key_path: key });
    assert.equal(res.statusCode, 400, `${JSON.stringify(cert_path)}: ${res.body}`);
    assert.match(json(res).error, /body\.config\.cert_path/);
  }
  assert.equal((await target({ cert_path: inData('ok.pem'), key_path: inData('ok.key'), surprise: 1 })).statusCode, 400, 'unknown config keys are refused');
});

test('a file target in the data directory publishes with exactly the requested modes', async () => {
  const created = json(await target({ cert_path: inData('site', 'fullchain.pem'), key_path: inData('site', 'privkey.key'), mode: '0640', key_mode: '0600' }));
  const published = json(await t.request('POST', `/api/v1/acme/certs/${certId}/publish`));
  const record = json(await t.request('GET', `/api/v1/acme/certs/${certId}/targets`)).find((item: { id: string }) => item.id === created.id);
  assert.equal(record.last_run_ok, true, record.last_run_error ?? JSON.stringify(published));
  assert.match(readFileSync(inData('site', 'fullchain.pem'), 'utf8'), /BEGIN CERTIFICATE/);
  assert.equal(statSync(inData('site', 'fullchain.pem')).mode & 0o7777, 0o640);
  assert.equal(statSync(inData('site', 'privkey.key')).mode & 0o7777, 0o600);
});

test('symbolic links under an allowed root are refused when saving and never followed when publishing', { skip: rootSkipReason('writing under /etc/ssl') }, async () => {
  const root = `/etc/ssl/bulwark-test-${randomBytes(4).toString('hex')}`;
  const outside = mkdtempSync(join(tmpdir(), 'bulwark-outside-'));
  mkdirSync(root, { recursive: true });
  try {
    // A directory link in the path, present when the target is saved: 400.
    symlinkSync(outside, join(root, 'linked-dir'));
    const viaDir = await target({ cert_path: `${root}/linked-dir/cert.pem`, key_path: `${root}/real.key` });
    assert.equal(viaDir.statusCode, 400, viaDir.body);
    assert.match(json(viaDir).error, /symbolic link/);

    // A file link, present when saved: 400.
    writeFileSync(join(outside, 'victim.pem'), 'untouched\n');
    symlinkSync(join(outside, 'victim.pem'), join(root, 'linked.pem'));
    const viaFile = await target({ cert_path: `${root}/linked.pem`, key_path: `${root}/real.key` });
    assert.equal(viaFile.statusCode, 400, viaFile.body);

    // Links planted after the target was saved: publishing fails for that target and writes nothing outside.
    const saved = json(await target({ cert_path: `${root}/later/cert.pem`, key_path: `${root}/later.key` }));
    symlinkSync(outside, join(root, 'later'));
    symlinkSync(join(outside, 'victim.pem'), join(root, 'later.key'));
    await t.request('POST', `/api/v1/acme/certs/${certId}/publish`);
    const record = json(await t.request('GET', `/api/v1/acme/certs/${certId}/targets`)).find((item: { id: string }) => item.id === saved.id);
    assert.equal(record.last_run_ok, false);
    assert.match(record.last_run_error, /symbolic link/);
    assert.equal(existsSync(join(outside, 'cert.pem')), false, 'nothing was written through the directory link');
    assert.equal(readFileSync(join(outside, 'victim.pem'), 'utf8'), 'untouched\n', 'the link target was not overwritten');
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});
