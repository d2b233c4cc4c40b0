import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { PERMISSIONS } from '../src/core/permissions.js';
import { cookieHeader, setCookies, startSsoApp, SsoDriver, type SsoTestApp } from './helpers/sso-app.js';
import { makeCertificate, startOidcProvider, type OidcTestProvider } from './helpers/sso.js';

// The whole authorization-code flow against a real OpenID Connect provider (oidc-provider on 127.0.0.1 over
// https with a throwaway certificate, trusted through the SSO settings and reached through the outbound
// guard's allow-list): state, PKCE, account resolution, TOTP hand-off, cookies and CSRF.

const PUBLIC_URL = 'https://fw.example.test';
const CLIENT_ID = 'bulwark-fw';
const SECRET = 'Oidc-client-secret-canary-5521';
const WRONG_SECRET = 'Wrong-secret-canary-0042';
const certificate = makeCertificate();

let oidc: OidcTestProvider;
let t: SsoTestApp;
let admin: Headers;
let driver: SsoDriver;
let corpId: string;

before(async () => {
  oidc = await startOidcProvider({
    certificate, clientId: CLIENT_ID, clientSecret: SECRET,
    redirectUris: ['corp', 'other'].map((name) => `${PUBLIC_URL}/api/v1/auth/oauth/${name}/callback`),
  });
  t = await startSsoApp();
  // An API key rather than a 15-minute access token: the tests move the clock by tens of minutes.
  const key = await t.call('POST', '/api/v1/auth/api-keys', { name: 'sso-test-admin', permissions: [...PERMISSIONS] }, await adminHeaders(t.app));
  admin = { authorization: `ApiKey ${key.json().key as string}` };
  const settings = await t.call('PUT', '/api/v1/auth/oauth/settings', { public_url: PUBLIC_URL, allowed_networks: ['127.0.0.1'], trusted_ca_pem: certificate.cert }, admin);
  assert.equal(settings.statusCode, 200, settings.body);
  const endpoints = { auth_url: `${oidc.issuer}/auth`, token_url: `${oidc.issuer}/token`, userinfo_url: `${oidc.issuer}/me` };
  const corp = await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'corp', provider_type: 'oidc', client_id: CLIENT_ID, client_secret: SECRET, ...endpoints }, admin);
  assert.equal(corp.statusCode, 201, corp.body);
  corpId = corp.json().id;
  await t.call('POST', '/api/v1/auth/oauth/providers', { name: 'other', provider_type: 'oidc', client_id: CLIENT_ID, client_secret: SECRET, ...endpoints }, admin);
  driver = new SsoDriver(t, certificate, PUBLIC_URL);
  oidc.accounts.set('sub-newbie', { email: 'newbie@example.org', email_verified: true, preferred_username: 'newbie' });
  oidc.accounts.set('sub-carol', { email: 'Carol@Example.org', email_verified: true });
  oidc.accounts.set('sub-mallory', { email: 'carol@example.org', email_verified: false, preferred_username: 'mallory' });
  oidc.accounts.set('sub-stranger', { email: 'stranger@example.org', email_verified: true });
});
after(async () => {
  await t.close();
  await oidc.close();
});

const signInAs = (subject: string, provider = 'corp') => {
  oidc.nextLogin = { subject };
  return driver.signIn(provider);
};
const users = async () => (await t.call('GET', '/api/v1/auth/users', undefined, admin)).json() as { id: string; username: string; role: string; auth_provider: string; email: string | null }[];
const lastAudit = async (action: string) =>
  ((await t.call('GET', '/api/v1/auth/audit?limit=50', undefined, admin)).json() as { action: string; details: string; actor: string }[]).find((e) => e.action === action);
const sessionCookies = (response: Parameters<typeof setCookies>[0]) => {
  const { values } = setCookies(response);
  return { bulwark_at: values.bulwark_at, bulwark_rt: values.bulwark_rt };
};

let newbieCookies: Record<string, string>;

test('first sign-in: PKCE S256 and the client secret at the token endpoint, a viewer auto-created with an unusable password, session cookies, redirect to the UI', async () => {
  oidc.nextLogin = { subject: 'sub-newbie' };
  const start = await driver.start('corp');
  const response = await driver.callback(await driver.atProvider(start), start.browserCookie);
  assert.equal(response.statusCode, 303);
  assert.equal(response.headers.location, '/');

  const token = oidc.tokenRequests.at(-1)!;
  assert.equal(token.get('grant_type'), 'authorization_code');
  assert.equal(token.get('client_secret'), SECRET);
  assert.equal(token.get('redirect_uri'), `${PUBLIC_URL}/api/v1/auth/oauth/corp/callback`);
  const verifier = token.get('code_verifier')!;
  assert.match(verifier, /^[A-Za-z0-9_-]{43,128}$/);
  assert.equal(createHash('sha256').update(verifier).digest('base64url'), start.authorizeUrl.searchParams.get('code_challenge'));

  const { lines } = setCookies(response);
  const access = lines.find((l) => l.startsWith('bulwark_at='))!;
  const refresh = lines.find((l) => l.startsWith('bulwark_rt='))!;
  for (const line of [access, refresh]) {
    assert.match(line, /; HttpOnly/);
    assert.match(line, /; Secure/, 'the public URL is https');
    assert.match(line, /; SameSite=Lax/);
  }
  assert.match(access, /Path=\/;/);
  assert.match(access, /Max-Age=900/);
  assert.match(refresh, /Path=\/api\/v1\/auth;/);
  newbieCookies = sessionCookies(response);

  const newbie = (await users()).find((u) => u.username === 'newbie@example.org')!;
  assert.equal(newbie.role, 'viewer');
  assert.equal(newbie.auth_provider, 'corp');
  assert.equal(newbie.email, 'newbie@example.org');
  assert.ok(await lastAudit('oauth_user_provisioned'));
  const password = await t.call('POST', '/api/v1/auth/login', { username: 'newbie@example.org', password: 'Any-password-1' });
  assert.equal(password.statusCode, 401, 'an auto-created account has no usable password');
});

test('the access cookie authenticates API calls like a Bearer JWT; a state-changing cookie call needs the CSRF header', async () => {
  const cookie = { cookie: cookieHeader(newbieCookies) };
  const me = await t.call('GET', '/api/v1/auth/me', undefined, cookie);
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().username, 'newbie@example.org');
  assert.equal(me.json().role, 'viewer');
  assert.equal((await t.call('GET', '/api/v1/auth/users', undefined, cookie)).statusCode, 403, 'permissions are the viewer role\'s');

  const forged = await t.call('POST', '/api/v1/auth/ws-ticket', undefined, cookie);
  assert.equal(forged.statusCode, 403);
  assert.match(forged.json().error, /x-bulwark-csrf/);
  const blank = await t.call('POST', '/api/v1/auth/ws-ticket', undefined, { ...cookie, 'x-bulwark-csrf': ' ' });
  assert.equal(blank.statusCode, 403);
  const allowed = await t.call('POST', '/api/v1/auth/ws-ticket', undefined, { ...cookie, 'x-bulwark-csrf': '1' });
  assert.equal(allowed.statusCode, 200);
  assert.match(allowed.json().ticket, /^[0-9a-f]{64}$/);

  assert.equal((await t.call('GET', '/api/v1/auth/me', undefined, { cookie: 'bulwark_at=garbage' })).statusCode, 401);
  // A header credential wins over the cookie, and header clients never need the CSRF header.
  const withHeader = await t.call('GET', '/api/v1/auth/me', undefined, { ...cookie, ...admin });
  assert.equal(withHeader.json().credential, 'api_key');
});

test('a second sign-in of the same subject uses its (provider, subject) link, even after the email changed', async () => {
  const before = (await users()).find((u) => u.username === 'newbie@example.org')!;
  oidc.accounts.set('sub-newbie', { email: 'renamed@example.org', email_verified: true });
  const response = await signInAs('sub-newbie');
  assert.equal(response.headers.location, '/');
  const me = await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader(sessionCookies(response)) });
  assert.equal(me.json().id, before.id);
  assert.equal((await users()).filter((u) => u.auth_provider === 'corp').length, 1, 'no second account');
});

test('a verified email equal to an existing username links that account; an unverified one never does', async () => {
  const carol = await t.call('POST', '/api/v1/auth/users', { username: 'carol@example.org', password: 'Carol-pass-123', role: 'operator' }, admin);
  assert.equal(carol.statusCode, 201);

  // The impostor claims carol's address without the provider vouching for it.
  const impostor = await signInAs('sub-mallory');
  assert.equal(impostor.headers.location, '/');
  const impostorMe = (await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader(sessionCookies(impostor)) })).json();
  assert.notEqual(impostorMe.id, carol.json().id);
  assert.equal(impostorMe.username, 'corp:mallory', 'named after the provider login, never after an unverified email');
  assert.equal(impostorMe.email, null);
  assert.equal(impostorMe.role, 'viewer');

  const real = await signInAs('sub-carol');
  const realMe = (await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader(sessionCookies(real)) })).json();
  assert.equal(realMe.id, carol.json().id, 'linked by verified email (case-insensitive)');
  assert.equal(realMe.role, 'operator');
  assert.match((await lastAudit('oauth_identity_linked'))!.details, /verified email/);
  // The link now stands on its own: an email change at the provider keeps the same account.
  oidc.accounts.set('sub-carol', { email: 'carol.new@example.org', email_verified: false });
  const again = await signInAs('sub-carol');
  assert.equal((await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader(sessionCookies(again)) })).json().id, carol.json().id);
});

test('with auto-create off, an unknown person gets no_account and nothing is created; detail only in the log and audit', async () => {
  await t.call('PUT', '/api/v1/auth/oauth/settings', { auto_create_oauth_users: false }, admin);
  const count = (await users()).length;
  const response = await signInAs('sub-stranger');
  assert.equal(response.statusCode, 303);
  assert.equal(response.headers.location, '/login?oauth_error=no_account');
  assert.equal(setCookies(response).lines.some((l) => l.startsWith('bulwark_at=')), false);
  assert.equal((await users()).length, count);
  const failure = (await lastAudit('oauth_login_failed'))!;
  assert.match(failure.details, /corp: no_account: .*sub-stranger.*auto-create is off/);
  assert.ok(t.logLines.some((line) => line.includes('"oauth_error":"no_account"') && line.includes('auto-create is off')));
  await t.call('PUT', '/api/v1/auth/oauth/settings', { auto_create_oauth_users: true }, admin);
});

test('state: a replayed callback, an expired state (10 minutes), another browser, or another provider\'s path are refused', async () => {
  oidc.nextLogin = { subject: 'sub-newbie' };
  const start = await driver.start('corp');
  const redirect = await driver.atProvider(start);
  assert.equal((await driver.callback(redirect, start.browserCookie)).headers.location, '/');
  const replay = await driver.callback(redirect, start.browserCookie);
  assert.equal(replay.headers.location, '/login?oauth_error=state', 'single use');

  const late = await driver.start('corp');
  const lateRedirect = await driver.atProvider(late);
  t.clock.advance(10 * 60_000 + 1000);
  assert.equal((await driver.callback(lateRedirect, late.browserCookie)).headers.location, '/login?oauth_error=state', 'expired');

  const justInTime = await driver.start('corp');
  const justInTimeRedirect = await driver.atProvider(justInTime);
  t.clock.advance(10 * 60_000 - 1000);
  assert.equal((await driver.callback(justInTimeRedirect, justInTime.browserCookie)).headers.location, '/', 'still valid just before 10 minutes');

  const stolen = await driver.start('corp');
  const stolenRedirect = await driver.atProvider(stolen);
  const elsewhere = await driver.callback(stolenRedirect, { bulwark_sso: 'f'.repeat(64) });
  assert.equal(elsewhere.headers.location, '/login?oauth_error=state', 'state bound to the browser that asked for it');
  assert.equal((await driver.callback(stolenRedirect, stolen.browserCookie)).headers.location, '/login?oauth_error=state', 'and spent by the failed attempt');

  const crossed = await driver.start('corp');
  const crossedRedirect = await driver.atProvider(crossed);
  const otherPath = new URL(crossedRedirect.href.replace('/oauth/corp/', '/oauth/other/'));
  assert.equal((await driver.callback(otherPath, crossed.browserCookie)).headers.location, '/login?oauth_error=state');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /state belongs to provider "corp", not "other"/);
});

test('PKCE: a code cannot be redeemed with another sign-in\'s verifier (code injection)', async () => {
  oidc.nextLogin = { subject: 'sub-newbie' };
  const victim = await driver.start('corp');
  const attacker = await driver.start('corp');
  const victimRedirect = await driver.atProvider(victim);
  // The attacker's callback carries the victim's code with the attacker's state: Bulwark sends the
  // attacker's verifier, and the provider refuses it.
  const injected = new URL(victimRedirect);
  injected.searchParams.set('state', attacker.state);
  const response = await driver.callback(injected, attacker.browserCookie);
  assert.equal(response.headers.location, '/login?oauth_error=exchange');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /exchange: .*(invalid_grant|PKCE)/i);
  assert.equal(setCookies(response).lines.some((l) => l.startsWith('bulwark_at=')), false);
});

test('provider refusal is denied; a disabled provider or account is disabled; a wrong client secret fails the exchange', async () => {
  oidc.nextLogin = { deny: true };
  const refused = await driver.signIn('corp');
  assert.equal(refused.headers.location, '/login?oauth_error=denied');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /access_denied/);

  oidc.nextLogin = { subject: 'sub-newbie' };
  const start = await driver.start('corp');
  const redirect = await driver.atProvider(start);
  await t.call('PUT', `/api/v1/auth/oauth/providers/${corpId}`, { enabled: false }, admin);
  assert.equal((await driver.callback(redirect, start.browserCookie)).headers.location, '/login?oauth_error=disabled');
  await t.call('PUT', `/api/v1/auth/oauth/providers/${corpId}`, { enabled: true }, admin);

  const newbie = (await users()).find((u) => u.username === 'newbie@example.org')!;
  await t.call('PUT', `/api/v1/auth/users/${newbie.id}`, { enabled: false }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/login?oauth_error=disabled');
  await t.call('PUT', `/api/v1/auth/users/${newbie.id}`, { enabled: true }, admin);

  await t.call('PUT', `/api/v1/auth/oauth/providers/${corpId}`, { client_secret: WRONG_SECRET }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/login?oauth_error=exchange');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /invalid_client/);
  await t.call('PUT', `/api/v1/auth/oauth/providers/${corpId}`, { client_secret: SECRET }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/');
});

test('outbound guard: without the allow-list the loopback provider is refused (exchange), without the CA the TLS check fails', async () => {
  await t.call('PUT', '/api/v1/auth/oauth/settings', { allowed_networks: [] }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/login?oauth_error=exchange');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /blocked address/);
  await t.call('PUT', '/api/v1/auth/oauth/settings', { allowed_networks: ['127.0.0.1'], trusted_ca_pem: '' }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/login?oauth_error=exchange');
  assert.match((await lastAudit('oauth_login_failed'))!.details, /certificate/i);
  await t.call('PUT', '/api/v1/auth/oauth/settings', { trusted_ca_pem: certificate.cert }, admin);
});

test('TOTP after single sign-on: a single-use 5-minute ticket, finished by POST /auth/oauth/totp, which installs the cookies', async () => {
  // Enrol TOTP from the cookie session (with the CSRF header), as the UI would.
  const session = sessionCookies(await signInAs('sub-newbie'));
  const headers = { cookie: cookieHeader(session), 'x-bulwark-csrf': '1' };
  const setup = await t.call('POST', '/api/v1/auth/totp/setup', undefined, headers);
  assert.equal(setup.statusCode, 200, setup.body);
  const totp = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(setup.json().secret) });
  const code = () => {
    t.clock.advance(30_000); // each code is accepted once: move to the next step
    return totp.generate({ timestamp: t.clock.now() });
  };
  assert.equal((await t.call('POST', '/api/v1/auth/totp/verify', { code: code() }, headers)).statusCode, 200);
  await t.call('PUT', '/api/v1/auth/oauth/settings', { require_totp_for_oauth: true }, admin);

  const gated = await signInAs('sub-newbie');
  assert.equal(gated.statusCode, 303);
  const location = new URL(gated.headers.location as string, PUBLIC_URL);
  assert.equal(location.pathname, '/login');
  const ticket = location.searchParams.get('oauth_totp')!;
  assert.match(ticket, /^[0-9a-f]{64}$/);
  assert.equal(setCookies(gated).lines.some((l) => l.startsWith('bulwark_at=')), false, 'no session before the second factor');

  const wrong = await t.call('POST', '/api/v1/auth/oauth/totp', { ticket, totp_code: '000000' });
  assert.equal(wrong.statusCode, 401);
  assert.deepEqual(Object.keys(wrong.json()), ['error']);
  assert.equal((await t.call('POST', '/api/v1/auth/oauth/totp', { ticket, totp_code: code() })).statusCode, 401, 'the ticket was spent by the wrong code');

  const expiring = new URL((await signInAs('sub-newbie')).headers.location as string, PUBLIC_URL).searchParams.get('oauth_totp')!;
  t.clock.advance(5 * 60_000 + 1000);
  assert.equal((await t.call('POST', '/api/v1/auth/oauth/totp', { ticket: expiring, totp_code: totp.generate({ timestamp: t.clock.now() }) })).statusCode, 401, 'expired after 5 minutes');

  const good = new URL((await signInAs('sub-newbie')).headers.location as string, PUBLIC_URL).searchParams.get('oauth_totp')!;
  const finished = await t.call('POST', '/api/v1/auth/oauth/totp', { ticket: good, totp_code: code() });
  assert.equal(finished.statusCode, 200, finished.body);
  assert.equal(finished.json().username, 'newbie@example.org');
  assert.equal('access_token' in finished.json() || 'refresh_token' in finished.json(), false, 'tokens travel only in HttpOnly cookies');
  const cookies = sessionCookies(finished);
  assert.equal((await t.call('GET', '/api/v1/auth/me', undefined, { cookie: cookieHeader(cookies) })).json().username, 'newbie@example.org');
  assert.equal((await t.call('POST', '/api/v1/auth/oauth/totp', { ticket: good, totp_code: code() })).statusCode, 401, 'single use');

  // An account without TOTP is not held up; with the switch off the provider is trusted for MFA.
  assert.equal((await signInAs('sub-carol')).headers.location, '/');
  await t.call('PUT', '/api/v1/auth/oauth/settings', { require_totp_for_oauth: false }, admin);
  assert.equal((await signInAs('sub-newbie')).headers.location, '/');
});

test('refresh and logout work from the cookies: CSRF header required, rotated cookies, tokens never in the body; logout clears both', async () => {
  const session = sessionCookies(await signInAs('sub-carol'));
  const refreshCookie = { cookie: `bulwark_rt=${session.bulwark_rt}` };
  const forged = await t.call('POST', '/api/v1/auth/refresh', undefined, refreshCookie);
  assert.equal(forged.statusCode, 403, 'a cross-site form cannot refresh');
  assert.equal((await t.call('POST', '/api/v1/auth/refresh')).statusCode, 400, 'no body token and no cookie');

  const refreshed = await t.call('POST', '/api/v1/auth/refresh', undefined, { ...refreshCookie, 'x-bulwark-csrf': '1' });
  assert.equal(refreshed.statusCode, 200, refreshed.body);
  assert.equal(refreshed.json().access_token, undefined);
  assert.equal(refreshed.json().refresh_token, undefined);
  assert.match(refreshed.json().access_expires_at, /^\d{4}-/);
  const rotated = sessionCookies(refreshed);
  assert.ok(rotated.bulwark_at && rotated.bulwark_rt && rotated.bulwark_rt !== session.bulwark_rt);
  assert.equal((await t.call('GET', '/api/v1/auth/me', undefined, { cookie: `bulwark_at=${rotated.bulwark_at}` })).statusCode, 200);

  const logout = await t.call('POST', '/api/v1/auth/logout', undefined, { cookie: cookieHeader(rotated), 'x-bulwark-csrf': '1' });
  assert.equal(logout.statusCode, 204);
  const cleared = setCookies(logout).lines;
  assert.ok(cleared.some((l) => /^bulwark_at=;/.test(l) && /Max-Age=0/.test(l)));
  assert.ok(cleared.some((l) => /^bulwark_rt=;/.test(l) && /Max-Age=0/.test(l) && /Path=\/api\/v1\/auth/.test(l)));
  assert.equal((await t.call('GET', '/api/v1/auth/me', undefined, { cookie: `bulwark_at=${rotated.bulwark_at}` })).statusCode, 401);
  assert.equal((await t.call('POST', '/api/v1/auth/refresh', undefined, { cookie: `bulwark_rt=${rotated.bulwark_rt}`, 'x-bulwark-csrf': '1' })).statusCode, 401);
});

test('no response and no log line ever carried a client secret', () => {
  assert.ok(t.responses.length > 50);
  assert.ok(t.logLines.length > 50);
  for (const secret of [SECRET, WRONG_SECRET]) {
    assert.equal(t.responses.filter((r) => r.includes(secret)).length, 0, `a response contains ${secret}`);
    assert.equal(t.logLines.filter((l) => l.includes(secret)).length, 0, `a log line contains ${secret}`);
  }
});
