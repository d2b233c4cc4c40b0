import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from './helpers/app.js';
import { adminApi } from './helpers/admin-api.js';
import type { Headers } from './helpers/auth.js';

/**
 * Authentication keeps verified tokens and account rows in memory between requests; these tests prove that
 * whatever changes them still takes effect on the very next request.
 */
const api = adminApi();

const me = (headers: Headers) => api.t.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers });
const login = async (username: string, password: string) => {
  const response = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  assert.equal(response.statusCode, 200, response.body);
  return json(response) as { access_token: string; refresh_token: string };
};

test('a token that was accepted before still expires on time', async () => {
  const { access_token } = await login('admin', 'Adm1n-password!');
  const bearer = { authorization: `Bearer ${access_token}` };
  assert.equal((await me(bearer)).statusCode, 200);
  assert.equal((await me(bearer)).statusCode, 200);
  api.t.clock.advance(14 * 60_000);
  assert.equal((await me(bearer)).statusCode, 200, 'still inside the 15-minute lifetime');
  api.t.clock.advance(60_000);
  assert.equal((await me(bearer)).statusCode, 401, 'expired on the next request');
  await api.signIn();
});

test('a changed account is read again on the next request: disable, rename, delete', async () => {
  const created = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/users', headers: api.headers, payload: { username: 'kept', password: 'Kept-password1', role: 'admin' } });
  assert.equal(created.statusCode, 201, created.body);
  const user = json(created);
  const key = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/api-keys', headers: { authorization: `Bearer ${(await login('kept', 'Kept-password1')).access_token}` }, payload: { name: 'kept-key', permissions: ['rules:read'] } });
  assert.equal(key.statusCode, 201, key.body);
  const apiKey = { authorization: `ApiKey ${json(key).key}` };
  assert.equal(json(await me(apiKey)).username, 'kept', 'the account row is now kept in memory');

  const put = (payload: object) => api.t.app.inject({ method: 'PUT', url: `/api/v1/auth/users/${user.id}`, headers: api.headers, payload });
  assert.equal((await put({ enabled: false })).statusCode, 200);
  assert.equal((await me(apiKey)).statusCode, 401, 'disabled: refused at once');
  assert.equal((await put({ enabled: true, username: 'renamed' })).statusCode, 200);
  assert.equal(json(await me(apiKey)).username, 'renamed', 'the new name shows at once');
  assert.equal((await api.t.app.inject({ method: 'DELETE', url: `/api/v1/auth/users/${user.id}`, headers: api.headers })).statusCode, 204);
  assert.equal((await me(apiKey)).statusCode, 401, 'deleted: refused at once');
});

test('an account row read inside a transaction that rolls back is not kept', async () => {
  const { users } = api.t.app.context.identity;
  const { db } = api.t.app.context;
  const id = json(await me(api.headers)).id as string;
  assert.equal(users.byId(id)!.email, null);
  assert.throws(() => db.transaction(() => {
    users.update(id, { email: 'rolled-back@example.org' });
    assert.equal(users.byId(id)!.email, 'rolled-back@example.org', 'the transaction sees its own write');
    throw new Error('roll back');
  })(), /roll back/);
  assert.equal(users.byId(id)!.email, null);
  assert.equal(json(await me(api.headers)).email, null);
});
