import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { createSettingsArea } from '../src/areas/settings/routes.js';
import { lifecycleAreas, newProbe } from './helpers/config-area.js';
import { configOf } from './helpers/areas.js';

/**
 * Object-storage backups against a real S3 server on loopback: s3rver (npm), which speaks the S3 REST API
 * (buckets, objects, listing) and checks access key ids. It does not verify SigV4 signatures, so a wrong
 * secret key is only detectable against a real S3 implementation.
 */
let server: S3rver;
let endpoint: string;
let s3Dir: string;
let t: AreaApp;
let admin: Headers;

before(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 'bulwark-s3-'));
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'backups', configs: [] }] });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  // The settings area serves the administrator's outbound allow-list (/settings/outbound).
  const probe = newProbe();
  t = await startAreaApp({ areas: (context) => [...lifecycleAreas(probe)(context), createSettingsArea(context)] });
  admin = t.headers;
  // The S3 server listens on loopback: the administrator's outbound allow-list names it.
  const allowed = await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] });
  assert.equal(allowed.statusCode, 200, allowed.body);
});
after(async () => {
  await t.close();
  await server.close();
  rmSync(s3Dir, { recursive: true, force: true });
});

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url, headers: admin, payload });
const destination = () => ({
  enabled: true, endpoint, bucket: 'backups', region: 'us-east-1', prefix: 'fw1/', path_style: true,
  access_key_id: 'S3RVER', secret_access_key: 'S3RVER', allow_http: true, allowed_addresses: ['127.0.0.1/32'],
});

test('before a destination is configured, list and import answer 409 naming what to configure', async () => {
  for (const [method, url, payload] of [['GET', '/api/v1/backup/objstore/list'], ['POST', '/api/v1/backup/objstore/import', { key: 'x.json' }]] as const) {
    const response = await call(method, url, payload);
    assert.equal(response.statusCode, 409, `${method} ${url}: ${response.body}`);
    assert.deepEqual(json(response), { error: 'object storage is not configured: set bucket (PUT /api/v1/backup/objstore/config)' });
  }
  // a bucket without credentials is still not a destination
  assert.equal((await call('PUT', '/api/v1/backup/objstore/config', { bucket: 'backups' })).statusCode, 200);
  const list = await call('GET', '/api/v1/backup/objstore/list');
  assert.equal(list.statusCode, 409);
  assert.match(json(list).error, /^object storage is not configured: set access_key_id and secret_access_key/);
  const probe = json(await call('POST', '/api/v1/backup/objstore/test'));
  assert.equal(probe.ok, false, 'the connectivity test reports it as its result');
  assert.match(probe.message, /not configured/);
  assert.equal((await call('PUT', '/api/v1/backup/objstore/config', { bucket: '' })).statusCode, 200);
});

test('the destination is a settings section whose secret key is sealed and never returned', async () => {
  const initial = json(await call('GET', '/api/v1/backup/objstore/config'));
  assert.equal(initial.enabled, false);
  assert.equal(initial.has_secret_access_key, false);
  const put = await call('PUT', '/api/v1/backup/objstore/config', destination());
  assert.equal(put.statusCode, 200, put.body);
  const body = json(put);
  assert.equal(body.has_secret_access_key, true);
  assert.equal(body.secret_access_key, undefined);
  assert.ok(!put.body.includes('"S3RVER"') || body.access_key_id === 'S3RVER');
  const stored = t.app.context.store.getSingleton('backup_objstore')!;
  assert.match(String(stored.secret_access_key), /^sealed:v1:/);
  const exported = json(await call('GET', '/api/v1/config/export'));
  assert.equal(exported.objects.find((o: { kind: string }) => o.kind === 'backup_objstore').data.secret_access_key, '**REDACTED**');
  for (const bad of [{ endpoint: 'ftp://x' }, { enabled: true, bucket: '' }, { allowed_addresses: ['not an ip'] }, { schedule_hours: -1 }]) {
    const response = await call('PUT', '/api/v1/backup/objstore/config', bad);
    assert.equal(response.statusCode, 400, JSON.stringify(bad));
  }
});

test('test checks connectivity and credentials, and reports failures as ok:false with the reason', async () => {
  const good = json(await call('POST', '/api/v1/backup/objstore/test'));
  assert.equal(good.ok, true, good.message);
  assert.deepEqual(good.steps, ['bucket reachable', 'write', 'read', 'delete']);

  await call('PUT', '/api/v1/backup/objstore/config', { access_key_id: 'NOT-A-KEY' });
  const denied = json(await call('POST', '/api/v1/backup/objstore/test'));
  assert.equal(denied.ok, false);
  assert.match(denied.message, /InvalidAccessKeyId|403/);

  await call('PUT', '/api/v1/backup/objstore/config', { access_key_id: 'S3RVER', bucket: 'missing-bucket' });
  const missing = json(await call('POST', '/api/v1/backup/objstore/test'));
  assert.equal(missing.ok, false);
  assert.match(missing.message, /NotFound|NoSuchBucket|404/);
  // listing and downloading from a storage that refuses are the upstream's failure: 502 with its reason, not a 400
  const refusedListing = await call('GET', '/api/v1/backup/objstore/list');
  assert.equal(refusedListing.statusCode, 502, refusedListing.body);
  assert.match(json(refusedListing).error, /^object storage: .*(NotFound|NoSuchBucket|404)/);
  const refusedDownload = await call('POST', '/api/v1/backup/objstore/import', { key: 'fw1/anything.json' });
  assert.equal(refusedDownload.statusCode, 502, refusedDownload.body);

  // the outbound guard: loopback refused unless allow-listed, plain http refused unless allowed
  await call('PUT', '/api/v1/backup/objstore/config', { bucket: 'backups', allowed_addresses: [] });
  assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: [] })).statusCode, 200);
  const guarded = json(await call('POST', '/api/v1/backup/objstore/test'));
  assert.equal(guarded.ok, false);
  assert.match(guarded.message, /blocked address/);
  assert.equal((await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] })).statusCode, 200);
  await call('PUT', '/api/v1/backup/objstore/config', { allowed_addresses: ['127.0.0.1/32'], allow_http: false });
  assert.match(json(await call('POST', '/api/v1/backup/objstore/test')).message, /https only/);
  await call('PUT', '/api/v1/backup/objstore/config', destination());
});

test('every save uploads an export; list shows it; import downloads and restores it', async () => {
  await call('POST', '/api/v1/test/hosts', { name: 'backed-up', password: 'objstore-secret' });
  const saved = json(await call('POST', '/api/v1/config/save', { comment: 'nightly' }));
  const { objstore } = configOf(t.app);
  await objstore.idle();
  const status = json(await call('GET', '/api/v1/backup/objstore/config'));
  assert.equal(status.last_upload_error, null);
  assert.match(status.last_upload_key, new RegExp(`^fw1/bulwark-config-\\d{8}T\\d{6}Z-v${saved.version}\\.json$`));

  const listed = await call('GET', '/api/v1/backup/objstore/list');
  assert.equal(listed.statusCode, 200);
  assert.equal(listed.headers['x-total-count'], '1');
  const [item] = json(listed);
  assert.equal(item.key, status.last_upload_key);
  assert.ok(item.size > 100);

  // change the configuration, then restore the uploaded backup (a redacted one: secrets come from the live objects)
  const host = t.app.context.store.list('test_host').find((o) => o.data.name === 'backed-up')!;
  await call('PUT', `/api/v1/test/hosts/${host.id}`, { port: 9999 });
  const restored = await call('POST', '/api/v1/backup/objstore/import', { key: item.key });
  assert.equal(restored.statusCode, 200, restored.body);
  assert.equal(json(restored).source, 'objstore-import');
  const back = t.app.context.store.list('test_host').find((o) => o.data.name === 'backed-up')!;
  assert.equal(back.data.port, 22);
  assert.equal(t.app.context.models.get('test_host').secret(back, 'password'), 'objstore-secret');
  assert.equal((await call('POST', '/api/v1/backup/objstore/import', { key: 'fw1/none.json' })).statusCode, 404);
  assert.equal((await call('POST', '/api/v1/backup/objstore/import', { key: 'elsewhere/x.json' })).statusCode, 400);
});

test('with a backup passphrase uploads are portable exports; the schedule uploads a changed configuration', async () => {
  await call('PUT', '/api/v1/backup/objstore/config', { backup_passphrase: 'backup passphrase 1', schedule_hours: 6 });
  const { objstore } = configOf(t.app);
  t.clock.advance(7 * 3_600_000);
  admin = await adminHeaders(t.app);
  await call('POST', '/api/v1/test/hosts', { name: 'scheduled' });
  await objstore.scheduledTick();
  const status = json(await call('GET', '/api/v1/backup/objstore/config'));
  assert.equal(status.has_backup_passphrase, true);
  assert.equal(status.last_upload_error, null);
  assert.match(status.last_upload_key, /^fw1\/bulwark-config-\d{8}T\d{6}Z\.json$/);
  const listed = json(await call('GET', '/api/v1/backup/objstore/list'));
  assert.equal(listed.length, 2);
  assert.equal(listed[0].key, status.last_upload_key, 'newest first');
  // nothing changed since: the next due tick uploads nothing
  t.clock.advance(7 * 3_600_000);
  admin = await adminHeaders(t.app);
  await objstore.scheduledTick();
  assert.equal(json(await call('GET', '/api/v1/backup/objstore/list')).length, 2);
  // the portable backup needs its passphrase: the stored one is used, a wrong one given explicitly fails
  const wrong = await call('POST', '/api/v1/backup/objstore/import', { key: listed[0].key, passphrase: 'not the passphrase' });
  assert.equal(wrong.statusCode, 400);
  assert.match(json(wrong).error, /wrong passphrase/);
  // a portable backup restores even objects deleted since, secrets included
  const scheduled = t.app.context.store.list('test_host').find((o) => o.data.name === 'backed-up')!;
  await t.app.inject({ method: 'DELETE', url: `/api/v1/test/hosts/${scheduled.id}`, headers: admin });
  const restored = await call('POST', '/api/v1/backup/objstore/import', { key: listed[0].key });
  assert.equal(restored.statusCode, 200, restored.body);
  const back = t.app.context.store.list('test_host').find((o) => o.data.name === 'backed-up')!;
  assert.equal(t.app.context.models.get('test_host').secret(back, 'password'), 'objstore-secret');
});

test('a failed upload is recorded, not lost', async () => {
  await call('PUT', '/api/v1/backup/objstore/config', { bucket: 'missing-bucket' });
  await call('POST', '/api/v1/config/save', { comment: 'will fail to upload' });
  await configOf(t.app).objstore.idle();
  const status = json(await call('GET', '/api/v1/backup/objstore/config'));
  assert.match(status.last_upload_error, /NoSuchBucket|404/);
  const audit = t.app.context.db.prepare("SELECT outcome FROM audit_log WHERE category = 'config' AND action = 'config.objstore.upload' ORDER BY id DESC LIMIT 1").get() as { outcome: string };
  assert.equal(audit.outcome, 'failure');
});

/** The newest uploaded export document, read from s3rver's directory. */
function newestUpload(): { objects: { kind: string; data: Record<string, unknown> }[] } {
  const files: { path: string; mtime: number }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/bulwark-config-.*\.json\._S3rver_object$/.test(entry.name)) files.push({ path, mtime: statSync(path).mtimeMs });
    }
  };
  walk(s3Dir);
  files.sort((a, b) => a.mtime - b.mtime);
  assert.ok(files.length > 0, 'an upload exists');
  return JSON.parse(readFileSync(files.at(-1)!.path, 'utf8'));
}

test('uploads carry only the secrets the person who set the destination could set', async () => {
  t.app.context.store.putSingleton('admin_only_section', { token: t.app.context.sealer.seal('admin-only-token') });
  const role = await call('POST', '/api/v1/auth/roles', { name: 'backup-operators', permissions: ['backup:read', 'backup:write'] });
  assert.equal(role.statusCode, 201, role.body);
  await call('POST', '/api/v1/auth/users', { username: 'barbara', password: 'Backup-pass123', role: 'backup-operators' });
  const login = await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'barbara', password: 'Backup-pass123' } });
  const barbara = { authorization: `Bearer ${json(login).access_token}` };
  const asBarbara = (method: 'POST' | 'PUT', url: string, payload: object) => t.app.inject({ method, url, headers: barbara, payload });
  const { objstore } = configOf(t.app);

  assert.equal((await asBarbara('PUT', '/api/v1/backup/objstore/config', { ...destination(), backup_passphrase: 'barbaras passphrase' })).statusCode, 200);
  assert.equal((await asBarbara('POST', '/api/v1/config/save', { comment: 'by barbara' })).statusCode, 200);
  await objstore.idle();
  let document = newestUpload();
  assert.equal(document.objects.find((o) => o.kind === 'admin_only_section')!.data.token, '**REDACTED**', 'a settings:write secret stays home');
  assert.match(String(document.objects.find((o) => o.kind === 'test_host' && o.data.password)!.data.password), /^pw:v1:/, 'her own sections travel');

  // set by the administrator, the destination takes everything
  assert.equal((await call('PUT', '/api/v1/backup/objstore/config', { backup_passphrase: 'admins passphrase' })).statusCode, 200);
  await call('POST', '/api/v1/config/save', { comment: 'by the admin' });
  await objstore.idle();
  document = newestUpload();
  assert.match(String(document.objects.find((o) => o.kind === 'admin_only_section')!.data.token), /^pw:v1:/);
});
