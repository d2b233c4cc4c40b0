import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadStartupConfig, StartupError } from '../src/config.js';
import { PERMISSIONS } from '../src/core/permissions.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { cookieHeader, setCookies, startSsoApp, SsoDriver, type SsoTestApp } from './helpers/sso-app.js';
import { makeCertificate, startOidcProvider, startPresetB, type OidcTestProvider, type PresetBStandIn } from './helpers/sso.js';

// The two presets with their endpoint URLs pointed at local servers by configuration: preset_a at a real
// OpenID Connect provider, preset_b at a stand-in for a code-hosting provider whose profile lacks a verified
// email (read from its separate emails endpoint instead).

const PUBLIC_URL = 'https://fw.example.test';
const SECRET_A = 'Preset-a-secret-canary-1187';
const SECRET_B = 'Preset-b-secret-canary-9034';
const certificate = makeCertificate();

let oidc: OidcTestProvider;
let standIn: PresetBStandIn;
let t: SsoTestApp;
let admin: Headers;
let driver: SsoDriver;
let codeHostId: string;

before(async () => {
  oidc = await startOidcProvider({ certificate, clientId: 'preset-a-client', clientSecret: SECRET_A, redirectUris: [`${PUBLIC_URL}/api/v1/auth/oauth/Workspace/callback`] });
  standIn = await startPresetB(certificate, 'preset-b-client', SECRET_B);
  // The same overrides BULWARK_OAUTH_PRESET_A_AUTH_URL (and friends) give at startup.
  t = await startSsoApp({
    oauthPresets: {
      preset_a: { auth_url: `${oidc.issuer}/auth`, token_url: `${oidc.issuer}/token`, userinfo_url: `${oidc.issuer}/me`, issuer: oidc.issuer },
      preset_b: {
        auth_url: `${standIn.base}/login/oauth/authorize`,
        token_url: `${standIn.base}/login/oauth/access_token`,
        userinfo_url: `${standIn.base}/user`,
        emails_url: `${standIn.base}/user/emails`,
      },
    },
  });
  const key = await t.call('POST', '/api/v1/auth/api-keys', { name: 'presets-admin', permissions: [...PERMISSIONS] }, await adminHeaders(t.app));
  admin = { authorization: `ApiKey ${key.json().key as string}` };
  await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: PUBLIC_URL, allowed_networks: ['127.0.0.0/8'], trusted_ca_pem: certificate.cert }, admin);
  const a = await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'Workspace', provider_type: 'preset_a', client_id: 'preset-a-client', client_secret: SECRET_A }, admin);
  assert.equal(a.statusCode, 201, a.body);
  const b = await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'code-host', provider_type: 'preset_b', client_id: 'preset-b-client', client_secret: SECRET_B }, admin);
  assert.equal(b.statusCode, 201, b.body);
  codeHostId = b.json().id;
  driver = new SsoDriver(t, certificate, PUBLIC_URL);
});
after(async () => {
  await t.close();
  await oidc.close();
  await standIn.close();
});

const me = async (response: Parameters<typeof setCookies>[0]) => {
  const { values } = setCookies(response);
  return (await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader({ bulwark_at: values.bulwark_at }) })).json();
};
const lastFailure = async () =>
  ((await t.call('GET', '/api/v1/auth/audit?limit=20', undefined, admin)).json() as { action: string; details: string }[]).find((e) => e.action === 'oauth_login_failed')!;

test('preset URLs come from the environment at startup, https only', () => {
  const config = loadStartupConfig([], {
    BULWARK_OAUTH_PRESET_B_TOKEN_URL: 'https://git.example.org/login/oauth/access_token',
    BULWARK_OAUTH_PRESET_A_ISSUER: 'https://idp.example.org',
  });
  assert.deepEqual(config.oauthPresets, {
    preset_a: { issuer: 'https://idp.example.org' },
    preset_b: { token_url: 'https://git.example.org/login/oauth/access_token' },
  });
  assert.throws(() => loadStartupConfig([], { BULWARK_OAUTH_PRESET_A_AUTH_URL: 'http://idp.example.org/auth' }), (error: Error) => error instanceof StartupError && /BULWARK_OAUTH_PRESET_A_AUTH_URL must be an https/.test(error.message));
});

test('preset_a: a provider with no URLs of its own signs in through the configured OpenID Connect endpoints', async () => {
  oidc.accounts.set('a-dana', { email: 'dana@example.org', email_verified: true });
  oidc.nextLogin = { subject: 'a-dana' };
  const start = await driver.start('Workspace');
  assert.equal(start.authorizeUrl.origin + start.authorizeUrl.pathname, `${oidc.issuer}/auth`);
  assert.equal(start.authorizeUrl.searchParams.get('scope'), 'openid email profile');
  const response = await driver.callback(await driver.atProvider(start), start.browserCookie);
  assert.equal(response.headers.location, '/');
  const dana = await me(response);
  assert.equal(dana.username, 'dana@example.org');
  assert.equal(dana.auth_provider, 'Workspace');
  assert.equal(oidc.tokenRequests.at(-1)!.get('client_secret'), SECRET_A);
});

test('preset_b: the verified primary address from the emails endpoint links an existing account; the profile email is ignored', async () => {
  const owner = await t.call('POST', '/api/v1/auth/users', { username: 'octo@example.org', password: 'Octo-pass-1234', role: 'operator' }, admin);
  assert.equal(owner.statusCode, 201);
  await t.call('POST', '/api/v1/auth/users', { username: 'public@example.org', password: 'Public-pass-1234' }, admin);
  standIn.user = { id: 4242, login: 'octo', email: 'public@example.org' };
  standIn.emails = [
    { email: 'public@example.org', primary: false, verified: true },
    { email: 'octo@example.org', primary: true, verified: true },
  ];
  const start = await driver.start('code-host');
  assert.equal(start.authorizeUrl.origin + start.authorizeUrl.pathname, `${standIn.base}/login/oauth/authorize`);
  assert.equal(start.authorizeUrl.searchParams.get('scope'), 'read:user user:email');
  const response = await driver.callback(await driver.atProvider(start), start.browserCookie);
  assert.equal(response.headers.location, '/');
  const octo = await me(response);
  assert.equal(octo.id, owner.json().id);
  assert.equal(octo.role, 'operator');
  const token = standIn.tokenRequests.at(-1)!;
  assert.equal(token.get('client_secret'), SECRET_B);
  assert.ok(token.get('code_verifier'), 'PKCE verifier sent (the stand-in checked it against the S256 challenge)');
});

test('preset_b: an unverified primary address never links; the new account is named <provider>:<login>', async () => {
  await t.call('POST', '/api/v1/auth/users', { username: 'victim@example.org', password: 'Victim-pass-1234', role: 'admin' }, admin);
  standIn.user = { id: 777, login: 'Eve Smith', email: 'victim@example.org' };
  standIn.emails = [
    { email: 'victim@example.org', primary: true, verified: false },
    { email: 'eve@example.org', primary: false, verified: true },
  ];
  const response = await driver.signIn('code-host');
  assert.equal(response.headers.location, '/');
  const eve = await me(response);
  assert.equal(eve.username, 'code-host:Eve_Smith');
  assert.equal(eve.role, 'viewer');
  assert.equal(eve.email, null, 'only a verified primary address is kept');

  // Same login at another subject: the name is taken, so a suffix keeps it unique.
  standIn.user = { id: 778, login: 'Eve Smith', email: null };
  standIn.emails = [];
  assert.equal((await me(await driver.signIn('code-host'))).username, 'code-host:Eve_Smith-1');
});

test('preset_b: profile endpoint failure is userinfo; a refused client secret is exchange', async () => {
  standIn.user = { id: 4242, login: 'octo', email: null };
  standIn.failUserinfo = true;
  assert.equal((await driver.signIn('code-host')).headers.location, '/login?oauth_error=userinfo');
  assert.match((await lastFailure()).details, /code-host: userinfo: .*HTTP 500/);
  standIn.failUserinfo = false;

  await t.call('PUT', `/api/v1/auth/oauth/providers/${codeHostId}`, { client_secret: 'Not-the-secret-1' }, admin);
  assert.equal((await driver.signIn('code-host')).headers.location, '/login?oauth_error=exchange');
  await t.call('PUT', `/api/v1/auth/oauth/providers/${codeHostId}`, { client_secret: SECRET_B }, admin);
  standIn.emails = [{ email: 'octo@example.org', primary: true, verified: true }];
  assert.equal((await driver.signIn('code-host')).headers.location, '/');
});

test('preset_b: URLs set on the provider override the preset; the emails endpoint follows its userinfo URL', async () => {
  const created = await t.call('POST', '/api/v1/auth/oauth/providers', {
    name: 'enterprise-host', provider_type: 'preset_b', client_id: 'preset-b-client', client_secret: SECRET_B,
    auth_url: `${standIn.base}/login/oauth/authorize`, token_url: `${standIn.base}/login/oauth/access_token`, userinfo_url: `${standIn.base}/user`,
  }, admin);
  assert.equal(created.statusCode, 201, created.body);
  standIn.user = { id: 9001, login: 'ent', email: null };
  standIn.emails = [{ email: 'ent@example.org', primary: true, verified: true }];
  const response = await driver.signIn('enterprise-host');
  assert.equal(response.headers.location, '/');
  assert.equal((await me(response)).username, 'ent@example.org');
});

test('no response and no log line carried a client secret', () => {
  for (const secret of [SECRET_A, SECRET_B, 'Not-the-secret-1']) {
    assert.equal(t.responses.filter((r) => r.includes(secret)).length, 0, secret);
    assert.equal(t.logLines.filter((l) => l.includes(secret)).length, 0, secret);
  }
});
