import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { adminHeaders } from './helpers/auth.js';

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version']);
    return true;
  } catch {
    return false;
  }
})();

test('before generation the CA reads uninitialised and issuing is refused', async () => {
  assert.equal(json(await t.request('GET', '/api/v1/ca')).initialized, false);
  assert.equal((await t.request('GET', '/api/v1/ca/cert.pem')).statusCode, 404);
  const refused = await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'a.example' });
  assert.equal(refused.statusCode, 400);
  assert.match(json(refused).error, /not initialised/);
});

test('generate CA, issue server and client certificates that verify against it, revoke one, CRL lists it', async () => {
  const created = await t.request('POST', '/api/v1/ca', { common_name: 'Test Root', organization: 'Test Org', validity_days: 365 });
  assert.equal(created.statusCode, 201, created.body);
  const info = json(created);
  assert.equal(info.initialized, true);
  assert.equal(info.subject, 'CN=Test Root, O=Test Org');
  assert.equal(info.algorithm, 'ECDSA P-256');
  assert.match(info.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  const caPem = (await t.request('GET', '/api/v1/ca/cert.pem')).body;
  const caCert = new X509Certificate(caPem);
  assert.equal(caCert.ca, true);
  assert.equal(caCert.serialNumber, info.serial);

  const issued = await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'fw.example.lan', sans: 'www.example.lan, 192.168.1.1', validity_days: 30 });
  assert.equal(issued.statusCode, 201, issued.body);
  const server = json(issued);
  const serverCert = new X509Certificate(server.certificate_pem);
  assert.ok(serverCert.verify(caCert.publicKey), 'signed by the CA');
  assert.ok(serverCert.checkIssued(caCert));
  assert.equal(server.ca_certificate_pem.trim(), caPem.trim());
  assert.match(serverCert.subjectAltName!, /DNS:fw\.example\.lan/);
  assert.match(serverCert.subjectAltName!, /IP Address:192\.168\.1\.1/);
  assert.deepEqual(serverCert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  // The private key belongs to the certificate.
  assert.equal(
    createPublicKey(createPrivateKey(server.private_key_pem)).export({ format: 'jwk' }).x,
    serverCert.publicKey.export({ format: 'jwk' }).x,
  );

  const client = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'client', common_name: 'alice', sans: ['alice.example'] }));
  const clientCert = new X509Certificate(client.certificate_pem);
  assert.ok(clientCert.verify(caCert.publicKey));
  assert.deepEqual(clientCert.keyUsage, ['1.3.6.1.5.5.7.3.2']);

  if (hasOpenssl) {
    const dir = mkdtempSync(join(tmpdir(), 'ca-test-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), caPem);
      writeFileSync(join(dir, 'server.pem'), server.certificate_pem);
      assert.match(execFileSync('openssl', ['verify', '-CAfile', join(dir, 'ca.pem'), '-purpose', 'sslserver', join(dir, 'server.pem')]).toString(), /OK/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const list = json(await t.request('GET', '/api/v1/ca/certs'));
  assert.deepEqual(list.map((c: { common_name: string }) => c.common_name), ['alice', 'fw.example.lan']);
  assert.equal(list[1].sans, '192.168.1.1,fw.example.lan,www.example.lan');
  assert.ok(!JSON.stringify(list).includes('PRIVATE KEY'));
  const detail = json(await t.request('GET', `/api/v1/ca/certs/${server.id}`));
  assert.equal(detail.certificate_pem, server.certificate_pem);
  assert.equal(detail.private_key_pem, undefined);
  assert.equal((await t.request('GET', `/api/v1/ca/certs/${server.id}/cert.pem`)).body, server.certificate_pem);
  assert.equal((await t.request('GET', `/api/v1/ca/certs/${server.id}/key.pem`)).body, server.private_key_pem);

  assert.deepEqual(json(await t.request('POST', `/api/v1/ca/certs/${server.id}/revoke`)), { message: `Certificate ${server.id} revoked` });
  assert.equal((await t.request('POST', `/api/v1/ca/certs/${server.id}/revoke`)).statusCode, 409);
  const revoked = json(await t.request('GET', `/api/v1/ca/certs/${server.id}`));
  assert.equal(revoked.status, 'revoked');
  assert.ok(revoked.revoked_at);

  const crlResponse = await t.request('GET', '/api/v1/ca/crl');
  assert.equal(crlResponse.statusCode, 200);
  const crlPem = crlResponse.body;
  assert.match(crlPem, /^-----BEGIN X509 CRL-----\n/);
  const crl = new x509.X509Crl(crlPem.replace(/X509 CRL/g, 'CRL'));
  assert.ok(await crl.verify({ publicKey: await new x509.X509Certificate(caPem).publicKey.export() }), 'CRL signed by the CA');
  const serials = crl.entries.map((entry) => entry.serialNumber.toUpperCase());
  assert.deepEqual(serials, [serverCert.serialNumber]);
  assert.ok(!serials.includes(clientCert.serialNumber));
  if (hasOpenssl) {
    const text = execFileSync('openssl', ['crl', '-noout', '-text'], { input: crlPem }).toString();
    assert.match(text, new RegExp(`Serial Number: ${serverCert.serialNumber}`, 'i'));
  }

  assert.equal((await t.request('DELETE', `/api/v1/ca/certs/${client.id}`)).statusCode, 204);
  assert.equal((await t.request('GET', `/api/v1/ca/certs/${client.id}`)).statusCode, 404);
});

test('issue validation: bad cert_type and bad SAN are 400 naming the field; expiry is computed on read', async () => {
  const badType = await t.request('POST', '/api/v1/ca/certs', { cert_type: 'code', common_name: 'x' });
  assert.equal(badType.statusCode, 400);
  assert.match(json(badType).error, /cert_type/);
  const badSan = await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'ok.example', sans: ['bad name!'] });
  assert.equal(badSan.statusCode, 400);
  assert.match(json(badSan).error, /sans/);
  const short = json(await t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'short.example', validity_days: 1 }));
  t.clock.advance(2 * 86_400_000);
  // The admin session expired with the clock as well: read with a fresh one.
  const headers = await adminHeaders(t.app);
  assert.equal(json(await t.app.inject({ url: `/api/v1/ca/certs/${short.id}`, headers })).status, 'expired');
});
