import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminHeaders, headersWithPermissions, type Headers } from './helpers/auth.js';
import { setCookies, startSsoApp, type SsoTestApp } from './helpers/sso-app.js';
import { makeCertificate } from './helpers/sso.js';

// Providers, SSO settings, login options and the authorization request: everything before the provider is
// contacted (the flows against a real provider are in sso-flow.test.ts and sso-presets.test.ts).

const SECRET = 'Provider-secret-canary-7731';
let t: SsoTestApp;
let admin: Headers;
before(async () => {
  t = await startSsoApp();
  admin = await adminHeaders(t.app);
});
after(() => t.close());

const oidcProvider = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider_type: 'oidc',
  client_id: `${name}-client`,
  client_secret: SECRET,
  auth_url: 'https://idp.example.org/oauth2/authorize',
  token_url: 'https://idp.example.org/oauth2/token',
  userinfo_url: 'https://idp.example.org/oauth2/userinfo',
  ...extra,
});

test('providers: create, list, update and delete; client_secret is write-only, sealed at rest and kept across updates', async () => {
  const created = await t.call('POST', '/api/v1/auth/oauth/providers', oidcProvider('corp'), admin);
  assert.equal(created.statusCode, 201);
  const corp = created.json();
  assert.equal(corp.name, 'corp');
  assert.equal(corp.enabled, true);
  assert.equal(corp.scopes, '');
  assert.equal('client_secret' in corp, false);

  const list = await t.call('GET', '/api/v1/auth/oauth/providers', undefined, admin);
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['x-total-count'], '1');
  assert.deepEqual(list.json().map((p: { name: string }) => p.name), ['corp']);

  const updated = await t.call('PUT', `/api/v1/auth/oauth/providers/${corp.id}`, { scopes: 'openid email', enabled: false }, admin);
  assert.equal(updated.statusCode, 200);
  assert.equal(updated.json().scopes, 'openid email');
  assert.equal(updated.json().enabled, false);

  const stored = t.app.context.store.get('oauth_provider', corp.id)!;
  assert.match(String(stored.data.client_secret), /^sealed:v1:/);
  assert.equal(t.app.context.models.get('oauth_provider').secret(stored, 'client_secret'), SECRET, 'an update without the secret keeps it');
  const database = readFileSync(join(t.dataDir, 'bulwark.db'));
  assert.equal(database.includes(Buffer.from(SECRET)), false, 'the plaintext is nowhere in the database file');

  assert.equal((await t.call('PUT', `/api/v1/auth/oauth/providers/${corp.id}`, { client_secret: 'Rotated-secret-99' }, admin)).statusCode, 200);
  const rotated = t.app.context.store.get('oauth_provider', corp.id)!;
  assert.equal(t.app.context.models.get('oauth_provider').secret(rotated, 'client_secret'), 'Rotated-secret-99');

  assert.equal((await t.call('DELETE', `/api/v1/auth/oauth/providers/${corp.id}`, undefined, admin)).statusCode, 204);
  assert.equal((await t.call('DELETE', `/api/v1/auth/oauth/providers/${corp.id}`, undefined, admin)).statusCode, 404);
  assert.equal((await t.call('PUT', `/api/v1/auth/oauth/providers/${corp.id}`, { enabled: true }, admin)).statusCode, 404);
});

test('providers: https-only URLs, URLs required for oidc, presets need none, names unique regardless of case', async () => {
  const bad = async (body: Record<string, unknown>, pattern: RegExp, status = 400) => {
    const response = await t.call('POST', '/api/v1/auth/oauth/providers', body, admin);
    assert.equal(response.statusCode, status, response.body);
    assert.match(response.json().error, pattern);
  };
  await bad(oidcProvider('plain', { token_url: 'http://idp.example.org/token' }), /body\.token_url must be an https:\/\/ URL/);
  await bad(oidcProvider('nourl', { userinfo_url: undefined }), /body\.userinfo_url is required for provider_type oidc/);
  await bad(oidcProvider('empty', { auth_url: '' }), /body\.auth_url is required/);
  await bad(oidcProvider('kind', { provider_type: 'google' }), /body\.provider_type must be one of: preset_a, preset_b, oidc/);
  await bad(oidcProvider('has/slash'), /body\.name/);
  await bad({ ...oidcProvider('nosecret'), client_secret: undefined }, /body\.client_secret is required/);
  await bad(oidcProvider('extra', { colour: 'red' }), /body\.colour is not a known field/);

  const presetA = await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'Workspace', provider_type: 'preset_a', client_id: 'a', client_secret: SECRET }, admin);
  assert.equal(presetA.statusCode, 201, presetA.body);
  const presetB = await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'code-host', provider_type: 'preset_b', client_id: 'b', client_secret: SECRET }, admin);
  assert.equal(presetB.statusCode, 201, presetB.body);
  await bad({ name: 'WORKSPACE', provider_type: 'preset_a', client_id: 'x', client_secret: SECRET }, /already exists/, 409);
  await bad({ name: 'override', provider_type: 'preset_a', client_id: 'x', client_secret: SECRET, auth_url: 'ftp://x.example/' }, /https/);

  const renamed = await t.call('PUT', `/api/v1/auth/oauth/providers/${presetB.json().id}`, { name: 'workspace' }, admin);
  assert.equal(renamed.statusCode, 409, 'renaming onto another name (any case) is a conflict');
});

test('login options are public and list enabled providers only, by name and kind, nothing else', async () => {
  const hidden = (await t.call('POST', '/api/v1/auth/oauth/providers', oidcProvider('hidden', { enabled: false }), admin)).json();
  const response = await t.call('GET', '/api/v1/auth/oauth/login-options');
  assert.equal(response.statusCode, 200);
  const options = response.json();
  assert.deepEqual(options, [
    { name: 'Workspace', provider_type: 'preset_a' },
    { name: 'code-host', provider_type: 'preset_b' },
  ]);
  assert.ok(!response.body.includes(SECRET) && !response.body.includes('client'));
  await t.call('PUT', `/api/v1/auth/oauth/providers/${hidden.id}`, { enabled: true }, admin);
  assert.equal((await t.call('GET', '/api/v1/auth/oauth/login-options')).json().length, 3);
});

test('SSO settings: public_url normalised and validated, network and CA checks, switches shared with /auth/settings', async () => {
  const initial = await t.call('GET', '/api/v1/auth/oauth/settings', undefined, admin);
  assert.deepEqual(initial.json(), { public_url: '', allowed_networks: [], trusted_ca_pem: '', auto_create_oauth_users: true, require_totp_for_oauth: false });
  const reader = await headersWithPermissions(t.app, ['settings:read'], admin);
  assert.equal((await t.call('GET', '/api/v1/auth/oauth/settings', undefined, reader)).statusCode, 403, 'the table says settings:write for GET');

  const set = await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: ' https://fw.example.org:8443/ ' }, admin);
  assert.equal(set.statusCode, 200);
  assert.equal(set.json().public_url, 'https://fw.example.org:8443');
  for (const [body, pattern] of [
    [{ public_url: 'fw.example.org' }, /public_url/],
    [{ public_url: 'ftp://fw.example.org' }, /public_url must start with http/],
    [{ public_url: 'https://fw.example.org/?next=x' }, /query/],
    [{ allowed_networks: ['10.0.0.0/33'] }, /allowed_networks\.0/],
    [{ allowed_networks: ['127.0.0.1', 'localhost'] }, /allowed_networks\.1/],
    [{ trusted_ca_pem: 'not a certificate' }, /trusted_ca_pem/],
    [{ trusted_ca_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, /not a valid X\.509/],
    [{ auto_create_oauth_users: 'yes' }, /auto_create_oauth_users must be boolean/],
  ] as const) {
    const response = await t.call('PUT', '/api/v1/auth/oauth/settings', body, admin);
    assert.equal(response.statusCode, 400, JSON.stringify(body));
    assert.match(response.json().error, pattern);
  }
  assert.equal((await t.call('GET', '/api/v1/auth/oauth/settings', undefined, admin)).json().public_url, 'https://fw.example.org:8443', 'nothing changed by refused PUTs');

  const certificate = makeCertificate();
  const switched = await t.call('PUT', '/api/v1/auth/oauth/settings', { auto_create_oauth_users: false, require_totp_for_oauth: true, trusted_ca_pem: certificate.cert, allowed_networks: ['192.168.10.0/24'] }, admin);
  assert.equal(switched.statusCode, 200, switched.body);
  const auth = (await t.call('GET', '/api/v1/auth/settings', undefined, admin)).json();
  assert.equal(auth.auto_create_oauth_users, false);
  assert.equal(auth.require_totp_for_oauth, true);
  await t.call('PUT', '/api/v1/auth/settings', { auto_create_oauth_users: true, require_totp_for_oauth: false }, admin);
  const view = (await t.call('GET', '/api/v1/auth/oauth/settings', undefined, admin)).json();
  assert.equal(view.auto_create_oauth_users, true);
  assert.equal(view.require_totp_for_oauth, false);
  assert.deepEqual(view.allowed_networks, ['192.168.10.0/24']);
  await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: '' }, admin);
});

test('authorize: state nonce + PKCE S256 in the URL; redirect URI from the Host, or pinned by public_url; unknown or disabled provider 404', async () => {
  const fromHost = await t.app.inject({ url: '/api/v1/auth/oauth/hidden/authorize', headers: { host: 'fw.lan:8080' } });
  assert.equal(fromHost.statusCode, 200, fromHost.body);
  const body = fromHost.json();
  const url = new URL(body.authorize_url);
  assert.equal(url.origin + url.pathname, 'https://idp.example.org/oauth2/authorize');
  const p = url.searchParams;
  assert.equal(p.get('response_type'), 'code');
  assert.equal(p.get('client_id'), 'hidden-client');
  assert.equal(p.get('redirect_uri'), 'http://fw.lan:8080/api/v1/auth/oauth/hidden/callback');
  assert.equal(body.redirect_uri, p.get('redirect_uri'));
  assert.equal(p.get('state'), body.state);
  assert.match(body.state, /^[0-9a-f]{64}$/, '256-bit state');
  assert.equal(p.get('code_challenge_method'), 'S256');
  assert.match(p.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(p.get('scope'), 'openid email profile', 'oidc default scopes');
  assert.ok(p.get('nonce'), 'OpenID Connect sign-ins carry a nonce');
  assert.equal(url.href.includes(SECRET), false);
  const cookie = setCookies(fromHost).lines.find((line) => line.startsWith('bulwark_sso='))!;
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Lax/);
  assert.match(cookie, /Path=\/api\/v1\/auth\/oauth/);
  assert.doesNotMatch(cookie, /Secure/, 'plain http: no Secure flag');

  const presetB = (await t.app.inject({ url: '/api/v1/auth/oauth/CODE-HOST/authorize', headers: { host: 'fw.lan' } })).json();
  const presetUrl = new URL(presetB.authorize_url);
  assert.equal(presetUrl.origin, 'https://github.com', 'preset_b built-in endpoint');
  assert.equal(presetUrl.searchParams.get('scope'), 'read:user user:email');
  assert.equal(presetUrl.searchParams.get('nonce'), null, 'no OpenID Connect, no nonce');
  assert.equal(presetUrl.searchParams.get('redirect_uri'), 'http://fw.lan/api/v1/auth/oauth/code-host/callback', 'the stored name, whatever case the path used');

  await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: 'https://fw.example.org/' }, admin);
  const pinned = await t.app.inject({ url: '/api/v1/auth/oauth/Workspace/authorize', headers: { host: 'evil.example' } });
  assert.equal(new URL(pinned.json().authorize_url).searchParams.get('redirect_uri'), 'https://fw.example.org/api/v1/auth/oauth/Workspace/callback');
  assert.equal(new URL(pinned.json().authorize_url).origin, 'https://accounts.google.com', 'preset_a built-in endpoint');
  assert.match(setCookies(pinned).lines.join('\n'), /bulwark_sso=.*Secure/, 'https public URL: Secure cookie');

  const unknown = await t.call('GET', '/api/v1/auth/oauth/nobody/authorize');
  assert.equal(unknown.statusCode, 404);
  assert.match(unknown.json().error, /no enabled single sign-on provider named "nobody"/);
  const hidden = (await t.call('GET', '/api/v1/auth/oauth/providers', undefined, admin)).json().find((p: { name: string }) => p.name === 'hidden');
  await t.call('PUT', `/api/v1/auth/oauth/providers/${hidden.id}`, { enabled: false }, admin);
  assert.equal((await t.call('GET', '/api/v1/auth/oauth/hidden/authorize')).statusCode, 404, 'disabled provider');
  await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: '' }, admin);
});

test('callbacks without a valid state redirect to the sign-in page with oauth_error=state', async () => {
  for (const query of ['', '?code=abc', `?code=abc&state=${'0'.repeat(64)}`, '?state=../../etc']) {
    const response = await t.call('GET', `/api/v1/auth/oauth/hidden/callback${query}`);
    assert.equal(response.statusCode, 303, query);
    assert.equal(response.headers.location, '/login?oauth_error=state');
  }
  const audit = (await t.call('GET', '/api/v1/auth/audit?limit=4', undefined, admin)).json();
  assert.ok(audit.every((entry: { action: string; details: string }) => entry.action === 'oauth_login_failed' && /state/.test(entry.details)));
});

test('no response and no log line carried the client secret', () => {
  assert.ok(t.responses.length > 20);
  assert.equal(t.responses.filter((r) => r.includes(SECRET)).length, 0);
  assert.equal(t.logLines.filter((l) => l.includes(SECRET)).length, 0);
});
