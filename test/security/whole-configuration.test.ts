import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { sharedFile } from '../helpers/shared.js';
import { integrityOf, type ExportDocument } from '../../src/areas/config/export-format.js';

// Import, restore and export are whole-configuration writes and reads: they hold a caller to exactly what the
// caller could write or set through each section's own routes, and run each section's own validators.

let t: AreaApp;
let admin: Headers;
let operator: Headers;
const SMTP_PASSWORD = 'smtp-Secret-value-42';

const call = (method: string, url: string, payload?: unknown, headers?: Headers) =>
  t.app.inject({ method: method as 'GET', url, payload: payload as object, headers });

before(async () => {
  t = await startAreaApp();
  admin = t.headers;
  await call('POST', '/api/v1/auth/users', { username: 'olga', password: 'Operator-pass1', role: 'operator' }, admin);
  operator = { authorization: `Bearer ${json(await call('POST', '/api/v1/auth/login', { username: 'olga', password: 'Operator-pass1' })).access_token}` };
  const smtp = await call('PUT', '/api/v1/notify/smtp/config', { enabled: true, host: 'mail.example.org', port: 587, username: 'alerts', password: SMTP_PASSWORD, from_address: 'fw@example.org', recipients: 'ops@example.org' }, admin);
  assert.equal(smtp.statusCode, 200, smtp.body);
  const tunnel = await call('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: 51820, address: '10.8.0.1/24' }, admin);
  assert.equal(tunnel.statusCode, 201, tunnel.body);
  assert.equal((await call('POST', '/api/v1/reload', {}, admin)).statusCode, 200);
});
after(() => t.close());

/** A plain export with one object's data changed and its checksum recomputed, as anyone can. */
function tampered(document: ExportDocument, kind: string, change: (data: Record<string, unknown>) => void): ExportDocument {
  const { integrity: _old, ...body } = structuredClone(document);
  const object = body.objects.find((o) => o.kind === kind);
  assert.ok(object, `the export holds a ${kind} object`);
  change(object.data);
  return { ...body, integrity: integrityOf(body) };
}

test('an import may not change a section the caller cannot write: 403 naming it, and the preview says so', async () => {
  const exported = json<ExportDocument>(await call('GET', '/api/v1/config/export', undefined, operator));
  const document = tampered(exported, 'notify_smtp', (data) => { data.host = 'attacker.example.net'; });

  const preview = json(await call('POST', '/api/v1/config/import-preview', document, operator));
  assert.equal(preview.valid, false);
  assert.deepEqual(preview.refused_sections, [{ kind: 'notify_smtp', permission: 'settings:write' }]);

  const refused = await call('POST', '/api/v1/config/import', document, operator);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.match(json(refused).error, /notify_smtp \(needs settings:write\)/);
  const smtp = json(await call('GET', '/api/v1/notify/smtp/config', undefined, admin));
  assert.equal(smtp.host, 'mail.example.org', 'nothing was written');

  // the same document is the administrator's to import
  assert.equal((await call('POST', '/api/v1/config/import', document, admin)).statusCode, 200);
  assert.equal(json(await call('GET', '/api/v1/notify/smtp/config', undefined, admin)).host, 'attacker.example.net');
  assert.equal((await call('PUT', '/api/v1/notify/smtp/config', { host: 'mail.example.org' }, admin)).statusCode, 200);
});

test('an import runs each section\'s own validators, not only its schema', async () => {
  // the resolver section is stored from its first write on
  assert.equal((await call('PUT', '/api/v1/dns/resolver/config', { cache_min_ttl: 0 }, admin)).statusCode, 200);
  const document = json<ExportDocument>(await call('GET', '/api/v1/config/export', undefined, admin));
  // the schema takes any string here; the section's validator wants an IP address
  const bad = tampered(document, 'dns_resolver', (data) => { data.blocklist_redirect_ip = 'not an address'; });
  const refused = await call('POST', '/api/v1/config/import', bad, admin);
  assert.equal(refused.statusCode, 400, refused.body);
  assert.match(json(refused).error, /blocklist_redirect_ip must be an IP address/);
  const preview = json(await call('POST', '/api/v1/config/import-preview', bad, admin));
  assert.equal(preview.valid, false);
  assert.ok(preview.errors.some((e: string) => /blocklist_redirect_ip/.test(e)), JSON.stringify(preview.errors));
});

test('a restore may not change a section the caller cannot write', async () => {
  const before = json(await call('GET', '/api/v1/config/version', undefined, admin)).version;
  assert.equal((await call('PUT', '/api/v1/notify/smtp/config', { port: 2525 }, admin)).statusCode, 200);
  assert.equal((await call('POST', '/api/v1/reload', {}, admin)).statusCode, 200);
  const preview = json(await call('POST', '/api/v1/config/restore-preview', { version: before }, operator));
  assert.deepEqual(preview.refused_sections, [{ kind: 'notify_smtp', permission: 'settings:write' }]);
  assert.equal(preview.valid, false);
  const refused = await call('POST', '/api/v1/config/restore', { version: before }, operator);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.equal(json(await call('GET', '/api/v1/notify/smtp/config', undefined, admin)).port, 2525);
  assert.equal((await call('POST', '/api/v1/config/restore', { version: before }, admin)).statusCode, 200);
  assert.equal(json(await call('GET', '/api/v1/notify/smtp/config', undefined, admin)).port, 587);
});

test('a passphrase export carries only the secrets the caller could set itself', async () => {
  const passphrase = 'a-long-export-passphrase';
  const mine = await call('POST', '/api/v1/config/export', { passphrase }, operator);
  assert.equal(mine.statusCode, 200, mine.body);
  const document = json<ExportDocument>(mine);
  const smtp = document.objects.find((o) => o.kind === 'notify_smtp')!;
  assert.equal(smtp.data.password, '**REDACTED**', 'the SMTP password needs settings:write');
  const tunnel = document.objects.find((o) => o.kind === 'wg_tunnel')!;
  assert.match(String(tunnel.data.private_key), /^pw:v1:/, 'the tunnel key is the operator\'s to set (vpn:write)');
  assert.ok(!mine.body.includes(SMTP_PASSWORD));

  const full = json<ExportDocument>(await call('POST', '/api/v1/config/export', { passphrase }, admin));
  assert.match(String(full.objects.find((o) => o.kind === 'notify_smtp')!.data.password), /^pw:v1:/);
  // the operator's file still imports here: the redacted secret is filled from the live configuration
  assert.equal((await call('POST', '/api/v1/config/import', { ...document, passphrase }, operator)).statusCode, 200);
});

const aliases = sharedFile('fixtures/opnsense/opndossier-opnsense-aliases.xml');
test('a third-party import may not write a kind the caller cannot write', { skip: aliases.skip }, async () => {
  const role = await call('POST', '/api/v1/auth/roles', { name: 'backup-only', permissions: ['backup:read', 'backup:write'] }, admin);
  assert.equal(role.statusCode, 201, role.body);
  await call('POST', '/api/v1/auth/users', { username: 'bert', password: 'Backup-pass12', role: 'backup-only' }, admin);
  const backup = { authorization: `Bearer ${json(await call('POST', '/api/v1/auth/login', { username: 'bert', password: 'Backup-pass12' })).access_token}` };
  const xml = readFileSync(aliases.path, 'utf8');
  const preview = json(await call('POST', '/api/v1/config/preview-thirdparty', { xml }, backup));
  assert.equal(preview.objects.length, 0, 'nothing would be written');
  assert.ok(preview.skipped.some((s: { reason: string }) => /permission rules:write required/.test(s.reason)), JSON.stringify(preview.skipped.slice(0, 3)));
  const before = Number(json(await call('GET', '/api/v1/aliases?limit=1', undefined, admin)).length);
  const refused = await call('POST', '/api/v1/config/import-thirdparty', { xml }, backup);
  assert.equal(refused.statusCode, 403, refused.body);
  assert.match(json(refused).error, /needs rules:write/);
  assert.equal(Number(json(await call('GET', '/api/v1/aliases?limit=1', undefined, admin)).length), before);
});
