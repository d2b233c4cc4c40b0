import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { json } from '../helpers/app.js';
import { adminApi } from '../helpers/admin-api.js';
import type { Headers } from '../helpers/auth.js';
import { AUDIENCE, ISSUER } from '../../src/auth/tokens.js';

const api = adminApi();


const call = (method: string, url: string, payload?: unknown, headers?: Headers) =>
  api.t.app.inject({ method: method as 'GET', url, payload: payload as object, headers });

async function login(username: string, password: string, role: string) {
  const created = await call('POST', '/api/v1/auth/users', { username, password, role }, api.headers);
  assert.equal(created.statusCode, 201, created.body);
  const session = json(await call('POST', '/api/v1/auth/login', { username, password }));
  return { user: json(created), session, bearer: { authorization: `Bearer ${session.access_token}` } };
}

/** Signs a token with the appliance's own key, as someone who read jwt.key would. */
async function forge(claims: Record<string, unknown>): Promise<string> {
  const key = Buffer.from(readFileSync(join(api.t.dataDir, 'jwt.key'), 'utf8').trim(), 'hex');
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('10m').setJti(crypto.randomUUID())
    .sign(key);
}

test('a token minted with the signing key gains nothing beyond its own session: permissions come from the server', async () => {
  const { session, bearer } = await login('oscar', 'Operator-pass1', 'operator');
  assert.equal((await call('DELETE', '/api/v1/auth/users/00000000-0000-4000-8000-000000000000', undefined, bearer)).statusCode, 403, 'an operator cannot change users');
  const claims = JSON.parse(Buffer.from(session.access_token.split('.')[1], 'base64url').toString());
  const everything = 2 ** 37 - 1;
  const forged = await forge({ ...claims, perm: everything, role: 'admin' });
  const promoted = await call('POST', '/api/v1/auth/users', { username: 'mallory', password: 'Mallory-pass1', role: 'admin' }, { authorization: `Bearer ${forged}` });
  assert.equal(promoted.statusCode, 403, 'a forged permission mask is ignored');
  const me = json(await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${forged}` }));
  assert.equal(me.role, 'operator');
  assert.ok(!me.permissions.includes('users:write'));

  // Naming another account with one's own session id is refused outright.
  const adminId = json(await call('GET', '/api/v1/auth/me', undefined, api.headers)).id;
  const impersonation = await forge({ ...claims, sub: adminId, username: 'admin', perm: everything });
  assert.equal((await call('GET', '/api/v1/auth/me', undefined, { authorization: `Bearer ${impersonation}` })).statusCode, 401);
});

test('an API key is bounded by its owner: demoting the owner narrows the key at once', async () => {
  const { user, bearer } = await login('amelia', 'Amelia-pass12', 'admin');
  const created = await call('POST', '/api/v1/auth/api-keys', { name: 'amelia-automation', permissions: ['users:write', 'users:read', 'rules:read'] }, bearer);
  assert.equal(created.statusCode, 201, created.body);
  const key = { authorization: `ApiKey ${json(created).key}` };
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, key)).statusCode, 200);

  assert.equal((await call('PUT', `/api/v1/auth/users/${user.id}`, { role: 'viewer' }, api.headers)).statusCode, 200);
  const escalation = await call('POST', '/api/v1/auth/users', { username: 'eve', password: 'Eve-password1', role: 'admin' }, key);
  assert.equal(escalation.statusCode, 403, 'the demoted owner\'s key no longer creates admins');
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, key)).statusCode, 403);
  assert.equal((await call('GET', '/api/v1/rules', undefined, key)).statusCode, 200, 'what the owner still holds keeps working');
  const me = json(await call('GET', '/api/v1/auth/me', undefined, key));
  assert.deepEqual(me.permissions, ['rules:read']);

  assert.equal((await call('PUT', `/api/v1/auth/users/${user.id}`, { role: 'admin' }, api.headers)).statusCode, 200);
  assert.equal((await call('GET', '/api/v1/auth/users', undefined, key)).statusCode, 200, 'restored with the owner');
});

test('creating a key with a permission the creator lacks is 403', async () => {
  const role = await call('POST', '/api/v1/auth/roles', { name: 'key-managers', permissions: ['users:read', 'users:write'] }, api.headers);
  assert.equal(role.statusCode, 201, role.body);
  const { bearer } = await login('otto', 'Operator-pass2', 'key-managers');
  const refused = await call('POST', '/api/v1/auth/api-keys', { name: 'otto-key', permissions: ['settings:write'] }, bearer);
  assert.equal(refused.statusCode, 403);
  assert.match(json(refused).error, /settings:write/);
});
