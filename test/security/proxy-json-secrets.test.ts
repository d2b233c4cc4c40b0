import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { headersWithPermissions, type Headers } from '../helpers/auth.js';

const rp = '/api/v1/reverse-proxy';
const ALICE = 'alice:$2a$14$E1DcOIUwFbE4XL/endKgL.pWqIRWevle557VP/WjuR24iBpCnT1cO';
const CAROL = 'carol:$2y$10$abcdefghijklmnopqrstuuJ4Q1bS9b2QWmYc3yGp6Sf1rj0cD2QhS';
const TOKEN = 'Bearer upstream-token-5f2c9a';

test('secrets inside reverse-proxy JSON (basicAuth hashes, request-header tokens) are write-only: sealed, never read back, redacted in exports, still served', async () => {
  const t = await startAreaApp();
  try {
    const admin = t.headers;
    const viewer = await headersWithPermissions(t.app, ['proxy:read', 'backup:read'], admin);
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: unknown) => {
      const response = await t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
      return { status: response.statusCode, text: response.body, body: response.body ? json(response) : undefined };
    };
    const secretsIn = (text: string) => [ALICE.split(':')[1], TOKEN].filter((secret) => text.includes(secret));

    const auth = await call('POST', `${rp}/http/middlewares`, admin, { name: 'auth', middleware_type: 'basicAuth', config_json: JSON.stringify({ users: [ALICE], realm: 'site' }) });
    assert.equal(auth.status, 201, auth.text);
    const headers = await call('POST', `${rp}/http/middlewares`, admin, {
      name: 'hdr', middleware_type: 'headers',
      config_json: JSON.stringify({ customRequestHeaders: { Authorization: TOKEN, 'X-Gone': '' }, customResponseHeaders: { 'X-Frame-Options': 'DENY' } }),
    });
    assert.equal(headers.status, 201, headers.text);
    assert.deepEqual(secretsIn(auth.text + headers.text), [], 'the create answers no secret');
    assert.deepEqual(JSON.parse(auth.body.config_json), { users: ['alice:**REDACTED**'], realm: 'site' }, 'user names stay readable');
    assert.deepEqual(JSON.parse(headers.body.config_json).customRequestHeaders, { Authorization: '**REDACTED**', 'X-Gone': '' });
    assert.equal(JSON.parse(headers.body.config_json).customResponseHeaders['X-Frame-Options'], 'DENY', 'response headers are public');
    assert.equal(auth.body.config_secrets, undefined);

    // A viewer reads the list and one record; the export (redacted) carries none either; neither does the database.
    const list = await call('GET', `${rp}/http/middlewares`, viewer);
    assert.equal(list.status, 200);
    assert.deepEqual(secretsIn(list.text), [], 'proxy:read sees no secret');
    const exported = await call('GET', '/api/v1/config/export', viewer);
    assert.equal(exported.status, 200);
    assert.deepEqual(secretsIn(exported.text), [], 'the export is redacted');
    assert.ok(exported.text.includes('**REDACTED**'));
    t.app.context.db.pragma('wal_checkpoint(TRUNCATE)');
    assert.deepEqual(secretsIn(readFileSync(`${t.dataDir}/bulwark.db`, 'latin1')), [], 'sealed at rest');

    // Echoing the record back keeps the secret; a new user is taken; a placeholder for an unknown user is a 400.
    const echoed = await call('PUT', `${rp}/http/middlewares/${auth.body.id}`, admin, { ...auth.body, config_json: JSON.stringify({ users: ['alice:**REDACTED**', CAROL], realm: 'staff' }) });
    assert.equal(echoed.status, 200, echoed.text);
    assert.deepEqual(JSON.parse(echoed.body.config_json).users, ['alice:**REDACTED**', 'carol:**REDACTED**']);
    const unknown = await call('PUT', `${rp}/http/middlewares/${auth.body.id}`, admin, { config_json: JSON.stringify({ users: ['mallory:**REDACTED**'] }) });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error, /^body\.config_json users\[0\]: no secret is stored/);
    const direct = await call('POST', `${rp}/http/middlewares`, admin, { name: 'x', middleware_type: 'basicAuth', config_json: '{"users":[]}', config_secrets: '{}' });
    assert.equal(direct.status, 400);
    assert.match(direct.body.error, /config_secrets is kept by the server/);
    assert.equal((await call('PUT', `${rp}/http/middlewares/${headers.body.id}`, admin, { enabled: true })).status, 200, 'an edit without config_json keeps the secrets');

    // The proxy still gets every secret.
    const applied = await call('POST', `${rp}/apply`, admin);
    assert.equal(applied.status, 200, applied.text);
    const rendered = readFileSync(applied.body.path, 'utf8');
    for (const secret of [ALICE.split(':')[1], CAROL.split(':')[1], TOKEN]) assert.ok(rendered.includes(secret), `${secret} reaches the proxy`);
    assert.ok(!rendered.includes('**REDACTED**'));

    // A redacted export imports back onto the same appliance: the secrets come from the live configuration.
    const backup = await call('GET', '/api/v1/config/export', admin);
    const imported = await call('POST', '/api/v1/config/import', admin, backup.body);
    assert.equal(imported.status, 200, imported.text);
    const again = readFileSync((await call('POST', `${rp}/apply`, admin)).body.path, 'utf8');
    assert.ok(again.includes(TOKEN) && again.includes(CAROL.split(':')[1]));
  } finally {
    await t.close();
  }
});

test('secrets an older release kept inside config_json are sealed at start', async () => {
  const first = await startAreaApp();
  const dataDir = first.dataDir;
  let id: string;
  try {
    const admin = first.headers;
    const created = await first.app.inject({ method: 'POST', url: `${rp}/http/middlewares`, headers: admin, payload: { name: 'legacy', middleware_type: 'basicAuth', config_json: '{"users":[]}' } });
    id = json(created).id;
    // As an older release stored it: the hash in config_json itself.
    const object = first.app.context.store.get('rp_http_middleware', id)!;
    first.app.context.store.update('rp_http_middleware', id, { ...object.data, config_json: JSON.stringify({ users: [ALICE] }) });
  } finally {
    await first.app.close();
  }
  const second = await startAreaApp({ dataDir });
  try {
    const admin = second.headers;
    const read = await second.app.inject({ url: `${rp}/http/middlewares`, headers: admin });
    assert.ok(!read.body.includes(ALICE.split(':')[1]), read.body);
    assert.deepEqual(JSON.parse(json(read)[0].config_json).users, ['alice:**REDACTED**']);
    const applied = await second.app.inject({ method: 'POST', url: `${rp}/apply`, headers: admin });
    assert.ok(readFileSync(json(applied).path, 'utf8').includes(ALICE.split(':')[1]), 'still served');
  } finally {
    await second.close();
    await first.close();
  }
});
