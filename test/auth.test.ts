import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOTP, Secret } from 'otpauth';
import { startTestApp, json, type TestApp } from './helpers/app.js';
import { ADMIN, adminHeaders, headersWithPermissions, type Headers } from './helpers/auth.js';
import { BUILTIN_ROLES, PERMISSIONS, toMask } from '../src/core/permissions.js';
import { TARGETED_LOGIN_DELAY_MS } from '../src/auth/login-limits.js';

// No adminApi or startAreaApp: registration, login and the first administrator are what these tests exercise.
let t: TestApp;
let admin: Headers;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers: Headers = {}, remoteAddress?: string) =>
  t.app.inject({ method, url, payload: payload as object | undefined, headers, remoteAddress });

const decode = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

test('first boot: register works once, creates an admin, then answers 403', async () => {
  assert.equal((await call('GET', '/api/v1/auth/me')).statusCode, 401);
  assert.deepEqual(json(await call('GET', '/api/v1/auth/register')), { registration_open: true }, 'the sign-in page can tell first boot');
  const weak = await call('POST', '/api/v1/auth/register', { username: 'admin', password: 'short' });
  assert.equal(weak.statusCode, 400);
  assert.match(json(weak).error, /password/);
  const created = await call('POST', '/api/v1/auth/register', { ...ADMIN, role: 'viewer' });
  assert.equal(created.statusCode, 201);
  assert.equal(json(created).role, 'admin');
  assert.equal(json(created).password, undefined);
  const again = await call('POST', '/api/v1/auth/register', { username: 'second', password: 'Another-pass1' });
  assert.equal(again.statusCode, 403);
  assert.deepEqual(Object.keys(json(again)), ['error']);
  assert.deepEqual(json(await call('GET', '/api/v1/auth/register')), { registration_open: false });
  admin = await adminHeaders(t.app);
});

test('login returns a signed JWT with the permission bitmask and a refresh token; keys are kept 0600', async () => {
  const login = await call('POST', '/api/v1/auth/login', ADMIN);
  assert.equal(login.statusCode, 200);
  const body = json(login);
  assert.equal(body.totp_required, false);
  assert.equal(body.token_type, 'Bearer');
  assert.match(body.refresh_token, /^rfx_[0-9a-f]{64}$/);
  const claims = decode(body.access_token);
  assert.equal(claims.perm, Number(toMask(PERMISSIONS)));
  assert.equal(claims.perm, 137438953471);
  assert.equal(claims.iss, 'bulwark');
  assert.equal(claims.role, 'admin');
  for (const file of ['jwt.key', 'secrets.key', 'recovery.key', 'daemon-api.key']) {
    assert.equal(statSync(join(t.dataDir, file)).mode & 0o777, 0o600, file);
  }
  const me = await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${body.access_token}` });
  assert.equal(me.statusCode, 200);
  assert.equal(json(me).username, 'admin');
  assert.equal(json(me).permissions.length, 37);
  const wrong = await call('POST', '/api/v1/auth/login', { username: 'admin', password: 'Wrong-password1' }, {}, '10.9.9.9');
  assert.equal(wrong.statusCode, 401);
  assert.deepEqual(Object.keys(json(wrong)), ['error']);
  const unknown = await call('POST', '/api/v1/auth/login', { username: 'nobody', password: 'Wrong-password1' }, {}, '10.9.9.9');
  assert.equal(unknown.statusCode, 401);
  assert.equal(json(unknown).error, json(wrong).error, 'unknown user and wrong password look the same');
});

test('tampered, foreign-algorithm, expired and garbage tokens are 401', async () => {
  const { access_token } = json(await call('POST', '/api/v1/auth/login', ADMIN));
  const [header, payload, signature] = access_token.split('.');
  const forged = `${header}.${Buffer.from(JSON.stringify({ ...decode(access_token), perm: 1 })).toString('base64url')}.${signature}`;
  const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
  for (const token of [forged, none, 'garbage', `${access_token}x`]) {
    assert.equal((await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${token}` })).statusCode, 401, token.slice(0, 20));
  }
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, { authorization: 'Basic abc' })).statusCode, 401);
  t.clock.advance(16 * 60_000); // default access lifetime is 15 minutes
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${access_token}` })).statusCode, 401);
  admin = await adminHeaders(t.app);
});

test('refresh rotates; reuse of a rotated token revokes the whole session; logout ends it at once', async () => {
  const first = json(await call('POST', '/api/v1/auth/login', ADMIN));
  const second = await call('POST', '/api/v1/auth/refresh', { refresh_token: first.refresh_token });
  assert.equal(second.statusCode, 200);
  const rotated = json(second);
  assert.notEqual(rotated.refresh_token, first.refresh_token);
  const reuse = await call('POST', '/api/v1/auth/refresh', { refresh_token: first.refresh_token });
  assert.equal(reuse.statusCode, 401);
  // the whole session is gone: the newer token and its access token stop working too
  assert.equal((await call('POST', '/api/v1/auth/refresh', { refresh_token: rotated.refresh_token })).statusCode, 401);
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${rotated.access_token}` })).statusCode, 401);

  const session = json(await call('POST', '/api/v1/auth/login', ADMIN));
  const bearer = { authorization: `Bearer ${session.access_token}` };
  const out = await call('POST', '/api/v1/auth/logout', undefined, bearer);
  assert.equal(out.statusCode, 204);
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, bearer)).statusCode, 401);
  assert.equal((await call('POST', '/api/v1/auth/refresh', { refresh_token: session.refresh_token })).statusCode, 401);
  const audit = json(await call('GET', '/api/v1/auth/audit?limit=50', undefined, admin));
  assert.ok(audit.some((e: { action: string }) => e.action === 'refresh_reuse_revoked_session'));
  assert.ok(audit.some((e: { action: string }) => e.action === 'logout'));
});

test('users: CRUD, write-only password, system role refused, no self-delete, unknown role 400, duplicate 409', async () => {
  const created = await call('POST', '/api/v1/auth/users', { username: 'olivia', password: 'Operator-pass1', email: 'olivia@example.org', role: 'operator' }, admin);
  assert.equal(created.statusCode, 201);
  const olivia = json(created);
  assert.equal(olivia.role, 'operator');
  assert.equal(olivia.email, 'olivia@example.org');
  assert.ok(!created.body.includes('Operator-pass1'));
  assert.equal((await call('POST', '/api/v1/auth/users', { username: 'olivia', password: 'Operator-pass1' }, admin)).statusCode, 409);
  const system = await call('POST', '/api/v1/auth/users', { username: 'sys', password: 'System-pass1', role: 'system' }, admin);
  assert.equal(system.statusCode, 400);
  assert.match(json(system).error, /system role cannot be assigned/);
  assert.equal((await call('POST', '/api/v1/auth/users', { username: 'x', password: 'System-pass1', role: 'nope' }, admin)).statusCode, 400);
  assert.equal((await call('PUT', `/api/v1/auth/users/${olivia.id}`, { role: 'system' }, admin)).statusCode, 400);
  const list = json(await call('GET', '/api/v1/auth/users', undefined, admin));
  assert.ok(list.some((u: { username: string; auth_provider: string }) => u.username === 'bulwark-daemon' && u.auth_provider === 'system'));
  assert.ok(list.every((u: Record<string, unknown>) => !('password' in u) && !('password_hash' in u)));
  const me = json(await call('GET', '/api/v1/auth/me', undefined, admin));
  const self = await call('DELETE', `/api/v1/auth/users/${me.id}`, undefined, admin);
  assert.equal(self.statusCode, 400);
  assert.match(json(self).error, /own account/);
  assert.equal((await call('GET', '/api/v1/auth/users/00000000-0000-4000-8000-000000000000', undefined, admin)).statusCode, 404);
  assert.equal((await call('DELETE', `/api/v1/auth/users/${olivia.id}`, undefined, admin)).statusCode, 204);
  assert.equal((await call('GET', `/api/v1/auth/users/${olivia.id}`, undefined, admin)).statusCode, 404);
});

test('a role change or disabling takes effect at once; refresh then carries the new permissions', async () => {
  const user = json(await call('POST', '/api/v1/auth/users', { username: 'vera', password: 'Viewer-pass12', role: 'operator' }, admin));
  const session = json(await call('POST', '/api/v1/auth/login', { username: 'vera', password: 'Viewer-pass12' }));
  const bearer = { authorization: `Bearer ${session.access_token}` };
  assert.equal((await call('GET', '/api/v1/config/history', undefined, bearer)).statusCode !== 403, true);
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, bearer)).statusCode, 200);
  await call('PUT', `/api/v1/auth/users/${user.id}`, { role: 'viewer' }, admin);
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, bearer)).statusCode, 401, 'old access token stops at once');
  const refreshed = json(await call('POST', '/api/v1/auth/refresh', { refresh_token: session.refresh_token }));
  assert.equal(decode(refreshed.access_token).perm, Number(toMask(BUILTIN_ROLES.viewer)));
  const newBearer = { authorization: `Bearer ${refreshed.access_token}` };
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, newBearer)).statusCode, 403);
  await call('PUT', `/api/v1/auth/users/${user.id}`, { enabled: false }, admin);
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, newBearer)).statusCode, 401);
  assert.equal((await call('POST', '/api/v1/auth/refresh', { refresh_token: refreshed.refresh_token })).statusCode, 401);
  assert.equal((await call('POST', '/api/v1/auth/login', { username: 'vera', password: 'Viewer-pass12' })).statusCode, 401);
});

test('roles: built-ins exact and immutable; custom roles validated; in-use delete 409; permission change applies at once', async () => {
  const roles = json(await call('GET', '/api/v1/auth/roles', undefined, admin));
  const byName = Object.fromEntries(roles.map((r: { name: string }) => [r.name, r]));
  assert.equal(byName.admin.permissions.length, 37);
  assert.deepEqual(byName.system.permissions, ['ha:manage']);
  assert.ok(!byName.operator.permissions.includes('users:write'));
  assert.ok(!byName.viewer.permissions.includes('backup:read'));
  assert.ok(byName.viewer.permissions.every((p: string) => p.endsWith(':read') || p.endsWith(':view')));
  assert.equal((await call('PUT', `/api/v1/auth/roles/${byName.admin.id}`, { permissions: [] }, admin)).statusCode, 403);
  assert.equal((await call('DELETE', `/api/v1/auth/roles/${byName.viewer.id}`, undefined, admin)).statusCode, 403);
  const bad = await call('POST', '/api/v1/auth/roles', { name: 'auditor', permissions: ['logs:view', 'root:all'] }, admin);
  assert.equal(bad.statusCode, 400);
  assert.match(json(bad).error, /root:all/);
  const auditor = json(await call('POST', '/api/v1/auth/roles', { name: 'auditor', permissions: ['logs:view', 'users:read'] }, admin));
  assert.equal((await call('POST', '/api/v1/auth/roles', { name: 'Auditor', permissions: [] }, admin)).statusCode, 409);
  const user = json(await call('POST', '/api/v1/auth/users', { username: 'audrey', password: 'Auditor-pass1', role: 'auditor' }, admin));
  assert.equal(user.role, 'auditor');
  const session = json(await call('POST', '/api/v1/auth/login', { username: 'audrey', password: 'Auditor-pass1' }));
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, { authorization: `Bearer ${session.access_token}` })).statusCode, 200);
  assert.equal((await call('DELETE', `/api/v1/auth/roles/${auditor.id}`, undefined, admin)).statusCode, 409);
  await call('PUT', `/api/v1/auth/roles/${auditor.id}`, { permissions: ['logs:view'] }, admin);
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, { authorization: `Bearer ${session.access_token}` })).statusCode, 401);
  const refreshed = json(await call('POST', '/api/v1/auth/refresh', { refresh_token: session.refresh_token }));
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, { authorization: `Bearer ${refreshed.access_token}` })).statusCode, 403);
  const permissions = json(await call('GET', '/api/v1/auth/permissions', undefined, admin));
  assert.equal(permissions.length, 37);
  assert.deepEqual(permissions.map((p: { key: string }) => p.key), [...PERMISSIONS]);
});

test('API keys: own permissions, secret once, listed without secret, expiry and revocation answer 401', async () => {
  const created = await call('POST', '/api/v1/auth/api-keys', { name: 'monitoring', permissions: ['dashboard:view'], expires_at: new Date(t.clock.now() + 3600_000).toISOString() }, admin);
  assert.equal(created.statusCode, 201);
  const key = json(created);
  assert.match(key.key, /^bwk_[0-9a-f]{64}$/);
  const headers = { authorization: `ApiKey ${key.key}` };
  assert.equal((await call('GET', '/api/v1/about', undefined, headers)).statusCode, 200);
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, headers)).statusCode, 403);
  const listed = await call('GET', '/api/v1/auth/api-keys', undefined, admin);
  assert.ok(!listed.body.includes(key.key));
  const entry = json(listed).find((k: { id: string }) => k.id === key.id);
  assert.ok(entry.last_used_at);
  assert.equal(entry.key, undefined);
  assert.equal((await call('POST', '/api/v1/auth/api-keys', { name: 'bad', permissions: ['x:y'] }, admin)).statusCode, 400);
  assert.equal((await call('POST', '/api/v1/auth/api-keys', { name: 'past', permissions: [], expires_at: '2000-01-01T00:00:00Z' }, admin)).statusCode, 400);
  assert.equal((await call('POST', '/api/v1/auth/api-keys', { name: 'daemon-loopback', permissions: [] }, admin)).statusCode, 400);
  // a key may not hold a permission its creator lacks
  const limited = await headersWithPermissions(t.app, ['users:write', 'logs:view'], admin);
  const escalate = await call('POST', '/api/v1/auth/api-keys', { name: 'escalate', permissions: ['system:reboot'] }, limited);
  assert.equal(escalate.statusCode, 403);
  t.clock.advance(3601_000);
  assert.equal((await call('GET', '/api/v1/about', undefined, headers)).statusCode, 401, 'expired key');
  admin = await adminHeaders(t.app);
  const other = json(await call('POST', '/api/v1/auth/api-keys', { name: 'short-lived', permissions: ['dashboard:view'] }, admin));
  assert.equal((await call('GET', '/api/v1/about', undefined, { authorization: `ApiKey ${other.key}` })).statusCode, 200);
  assert.equal((await call('DELETE', `/api/v1/auth/api-keys/${other.id}`, undefined, admin)).statusCode, 204);
  assert.equal((await call('GET', '/api/v1/about', undefined, { authorization: `ApiKey ${other.key}` })).statusCode, 401);
});

test('the daemon service account is locked and its loopback key holds only ha:manage', async () => {
  const key = readFileSync(join(t.dataDir, 'daemon-api.key'), 'utf8').trim();
  const me = json(await call('GET', '/api/v1/auth/me', undefined, { authorization: `ApiKey ${key}` }));
  assert.deepEqual(me.permissions, ['ha:manage']);
  assert.equal(me.auth_provider, 'system');
  assert.equal((await call('POST', '/api/v1/auth/login', { username: 'bulwark-daemon', password: '' })).statusCode, 400);
  assert.equal((await call('POST', '/api/v1/auth/login', { username: 'bulwark-daemon', password: 'Anything-1' })).statusCode, 401);
});

test('TOTP: setup, verify with a computed code, challenge login, replay refused, recovery code single use, disable needs password', async () => {
  await call('POST', '/api/v1/auth/users', { username: 'tina', password: 'Totp-user-pass1', role: 'viewer' }, admin);
  const login = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  const bearer = { authorization: `Bearer ${login.access_token}` };
  const setup = json(await call('POST', '/api/v1/auth/totp/setup', undefined, bearer));
  assert.match(setup.provisioning_uri, /^otpauth:\/\/totp\/Bulwark:tina\?/);
  assert.match(setup.qr_code, /^data:image\/svg\+xml;base64,/);
  const totp = new TOTP({ secret: Secret.fromBase32(setup.secret), digits: 6, period: 30, algorithm: 'SHA1' });
  const code = () => totp.generate({ timestamp: t.clock.now() });
  assert.equal((await call('POST', '/api/v1/auth/totp/verify', { code: '000000' === code() ? '111111' : '000000' }, bearer)).statusCode, 400);
  const verified = await call('POST', '/api/v1/auth/totp/verify', { code: code() }, bearer);
  assert.equal(verified.statusCode, 200);
  const recovery: string[] = json(verified).recovery_codes;
  assert.equal(recovery.length, 10);

  t.clock.advance(30_000); // a new step, so the code is fresh
  const challenged = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  assert.equal(challenged.totp_required, true);
  assert.equal(challenged.access_token, undefined);
  const fresh = code();
  const done = await call('POST', '/api/v1/auth/totp/login', { challenge: challenged.challenge, code: fresh });
  assert.equal(done.statusCode, 200);
  assert.ok(json(done).access_token);
  assert.equal((await call('POST', '/api/v1/auth/totp/login', { challenge: challenged.challenge, code: fresh })).statusCode, 401, 'challenge is single use');
  const again = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  assert.equal((await call('POST', '/api/v1/auth/totp/login', { challenge: again.challenge, code: fresh })).statusCode, 401, 'a used code is refused');
  const third = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  assert.equal((await call('POST', '/api/v1/auth/totp/login', { challenge: third.challenge, code: recovery[0].toLowerCase() })).statusCode, 200);
  const fourth = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  assert.equal((await call('POST', '/api/v1/auth/totp/login', { challenge: fourth.challenge, code: recovery[0] })).statusCode, 401, 'recovery code is single use');
  const fifth = json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' }));
  t.clock.advance(6 * 60_000);
  assert.equal((await call('POST', '/api/v1/auth/totp/login', { challenge: fifth.challenge, code: recovery[1] })).statusCode, 401, 'challenge expired');

  const session = json(await call('POST', '/api/v1/auth/totp/login', { challenge: json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' })).challenge, code: recovery[2] }));
  const tina = { authorization: `Bearer ${session.access_token}` };
  assert.equal((await call('POST', '/api/v1/auth/totp/disable', { password: 'Wrong-pass-123' }, tina)).statusCode, 400);
  assert.equal((await call('POST', '/api/v1/auth/totp/disable', { password: 'Totp-user-pass1' }, tina)).statusCode, 200);
  assert.equal(json(await call('POST', '/api/v1/auth/login', { username: 'tina', password: 'Totp-user-pass1' })).totp_required, false);
});

test('brute force: per address and username, with higher ceilings per address and per username; 429 with Retry-After', async () => {
  await call('POST', '/api/v1/auth/users', { username: 'bob', password: 'Bobs-password1', role: 'viewer' }, admin);
  await call('POST', '/api/v1/auth/users', { username: 'alice', password: 'Alices-password1', role: 'viewer' }, admin);
  const login = (username: string, password: string, ip: string) => call('POST', '/api/v1/auth/login', { username, password }, {}, ip);

  // One person's typos behind a shared address lock only that person out, not their colleagues.
  const office = '203.0.113.10';
  const typos: number[] = [];
  for (let i = 0; i < 6; i++) typos.push((await login('bob', 'Wrong-pass-1', office)).statusCode);
  assert.deepEqual(typos, [401, 401, 401, 401, 401, 429]);
  const blocked = await login('bob', 'Bobs-password1', office);
  assert.equal(blocked.statusCode, 429, 'even the right password, for that account from that address');
  assert.ok(Number(blocked.headers['retry-after']) > 0);
  assert.deepEqual(Object.keys(json(blocked)), ['error']);
  assert.equal((await login('alice', 'Alices-password1', office)).statusCode, 200, 'a colleague behind the same address signs in');
  assert.equal((await login('bob', 'Bobs-password1', '198.51.100.7')).statusCode, 200, 'bob from elsewhere signs in');

  // Spraying many usernames from one address stops at the address ceiling (10 x max_login_attempts).
  const attacker = '203.0.113.66';
  const spray: number[] = [];
  for (let i = 0; i < 51; i++) spray.push((await login(`guess${i}`, 'Nope-nope-1', attacker)).statusCode);
  assert.equal(spray.filter((status) => status === 401).length, 50);
  assert.equal(spray.at(-1), 429);
  assert.equal((await login('alice', 'Alices-password1', attacker)).statusCode, 429, 'the address is blocked for everyone');
  assert.equal((await login('alice', 'Alices-password1', '198.51.100.8')).statusCode, 200);

  t.clock.advance(301_000);
  assert.equal((await login('bob', 'Bobs-password1', office)).statusCode, 200, 'lockout ends');
  const audit = json(await call('GET', '/api/v1/auth/audit?limit=500', undefined, await adminHeaders(t.app)));
  assert.ok(audit.some((e: { action: string; ip_addr: string }) => e.action === 'lockout' && e.ip_addr === attacker));
});

test('an outsider cannot lock a named account out: guesses from many addresses slow it, the owner from a clean address gets in', async () => {
  admin = await adminHeaders(t.app);
  await call('POST', '/api/v1/auth/users', { username: 'carol', password: 'Carols-password1', role: 'viewer' }, admin);
  const login = (password: string, ip: string) => call('POST', '/api/v1/auth/login', { username: 'carol', password }, {}, ip);
  const timed = async (password: string, ip: string) => {
    const before = t.clock.now();
    const response = await login(password, ip);
    return { status: response.statusCode, waited: t.clock.now() - before };
  };
  // 20 failures (4 x max_login_attempts) from 4 addresses, 5 each: every address is refused for carol.
  const attackers = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'];
  const statuses: number[] = [];
  for (const ip of attackers) for (let i = 0; i < 5; i++) statuses.push((await login('Wrong-pass-1', ip)).statusCode);
  assert.deepEqual(statuses, Array(20).fill(401));
  for (const ip of attackers) assert.equal((await login('Carols-password1', ip)).statusCode, 429, `${ip} is refused for carol (per address and user)`);

  // A new address guessing is slowed; the owner, from an address with no failures, is slowed too but gets in.
  const guess = await timed('Wrong-pass-1', '192.0.2.5');
  assert.deepEqual(guess, { status: 401, waited: TARGETED_LOGIN_DELAY_MS }, 'an attempt on a username under attack waits (on the injectable clock)');
  const owner = await timed('Carols-password1', '198.51.100.20');
  assert.deepEqual(owner, { status: 200, waited: TARGETED_LOGIN_DELAY_MS }, 'the right password from a clean address signs in, slowed, not refused');
  const other = await timed('Alices-password1', '192.0.2.99');
  assert.equal(other.waited, 0, 'other accounts are not slowed');
  const audit = json(await call('GET', '/api/v1/auth/audit?limit=500', undefined, admin));
  assert.ok(audit.some((e: { action: string; details: string }) => e.action === 'login_slowed' && e.details === 'user:carol'));
  t.clock.advance(301_000);
});

test('auth settings: defaults, validation, live effect on lockout threshold', async () => {
  admin = await adminHeaders(t.app);
  const settings = json(await call('GET', '/api/v1/auth/settings', undefined, admin));
  assert.equal(settings.max_login_attempts, 5);
  assert.equal(settings.refresh_token_expiry_days, 30);
  assert.equal((await call('PUT', '/api/v1/auth/settings', { max_login_attempts: 0 }, admin)).statusCode, 400);
  assert.equal((await call('PUT', '/api/v1/auth/settings', { require_totp: true }, admin)).statusCode, 400, 'admin without TOTP cannot require it');
  const updated = await call('PUT', '/api/v1/auth/settings', { max_login_attempts: 2 }, admin);
  assert.equal(updated.statusCode, 200);
  assert.equal(json(updated).max_login_attempts, 2);
  const address = '203.0.113.200';
  await call('POST', '/api/v1/auth/login', { username: 'x1', password: 'Nope-nope-1' }, {}, address);
  await call('POST', '/api/v1/auth/login', { username: 'x1', password: 'Nope-nope-1' }, {}, address);
  assert.equal((await call('POST', '/api/v1/auth/login', { username: 'x1', password: 'Nope-nope-1' }, {}, address)).statusCode, 429);
  await call('PUT', '/api/v1/auth/settings', { max_login_attempts: 5 }, admin);
});

test('WebSocket tickets: Bearer sessions only, 64 hex chars, single use within 30 s', async () => {
  const apiKey = await headersWithPermissions(t.app, ['dashboard:view'], admin);
  assert.equal((await call('POST', '/api/v1/auth/ws-ticket', undefined, apiKey)).statusCode, 403);
  const issued = await call('POST', '/api/v1/auth/ws-ticket', undefined, admin);
  assert.equal(issued.statusCode, 200);
  const { ticket } = json(issued);
  assert.match(ticket, /^[0-9a-f]{64}$/);
  const identity = t.app.context.identity;
  assert.equal(identity.tickets.take(ticket)?.username, 'admin');
  assert.equal(identity.tickets.take(ticket), undefined, 'single use');
  const late = json(await call('POST', '/api/v1/auth/ws-ticket', undefined, admin)).ticket;
  t.clock.advance(31_000);
  assert.equal(identity.tickets.take(late), undefined, 'expired');
  admin = await adminHeaders(t.app);
});

test('deleting the last person returns the appliance to first boot', async () => {
  const key = await headersWithPermissions(t.app, ['users:write', 'users:read'], admin);
  const owner = json(await call('GET', '/api/v1/auth/me', undefined, key)).id;
  const users = json(await call('GET', '/api/v1/auth/users', undefined, key));
  const people = users.filter((u: { auth_provider: string; id: string }) => u.auth_provider !== 'system' && u.id !== owner);
  for (const user of [...people, { id: owner, username: 'owner of the key' }]) {
    assert.equal((await call('DELETE', `/api/v1/auth/users/${user.id}`, undefined, key)).statusCode, 204, user.username);
  }
  // the key belonged to the deleted admin: it died with its owner
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, key)).statusCode, 401);
  const again = await call('POST', '/api/v1/auth/register', { username: 'newadmin', password: 'New-admin-pass1' });
  assert.equal(again.statusCode, 201);
  assert.equal(json(again).role, 'admin');
});
