/**
 * Accounts and roles answer entity tags and honour If-Match, like every configuration object, although they
 * live outside the configuration store: a stale edit answers 412 and changes nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';

const api = adminApi();
const TAG = /^"[\w-]{22}"$/;

async function tagged(method: 'PUT' | 'DELETE', url: string, ifMatch: string, payload?: unknown) {
  const response = await api.t.app.inject({ method, url, payload: payload as object | undefined, headers: { ...api.headers, 'if-match': ifMatch } });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined, etag: response.headers.etag };
}

test('an account: read with its ETag, 304 when unchanged, a stale If-Match is 412 and changes nothing, a new password alone changes the tag', async () => {
  const user = await api.created('/api/v1/auth/users', { username: 'carol', password: 'Carol-password-1', role: 'viewer' });
  const url = `/api/v1/auth/users/${user.id}`;
  const read = await api.call('GET', url);
  const tag = String(read.headers.etag);
  assert.match(tag, TAG);
  const unchanged = await api.t.app.inject({ method: 'GET', url, headers: { ...api.headers, 'if-none-match': tag } });
  assert.equal(unchanged.statusCode, 304);

  const changed = await tagged('PUT', url, tag, { email: 'carol@example.org' });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.match(String(changed.etag), TAG);
  assert.notEqual(changed.etag, tag);
  assert.equal((await api.call('GET', url)).headers.etag, changed.etag, 'the PUT answers the tag a read answers next');

  const stale = await tagged('PUT', url, tag, { email: 'mallory@example.org' });
  assert.equal(stale.status, 412);
  assert.equal((await api.call('GET', url)).body.email, 'carol@example.org', 'the stale write changed nothing');
  // a stale password change is refused after hashing as well: the old password still works
  const stalePassword = await tagged('PUT', url, tag, { password: 'Other-password-2' });
  assert.equal(stalePassword.status, 412);
  const login = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'carol', password: 'Carol-password-1' } });
  assert.equal(login.statusCode, 200, 'the refused write did not change the password');

  const newPassword = await tagged('PUT', url, String(changed.etag), { password: 'Other-password-2' });
  assert.equal(newPassword.status, 200);
  assert.notEqual(newPassword.etag, changed.etag, 'only the password changed, and the tag did');
  assert.equal((await api.call('GET', url)).body.email, 'carol@example.org');

  assert.equal((await tagged('DELETE', url, String(changed.etag))).status, 412, 'a delete with a stale tag is refused');
  assert.equal((await api.call('GET', url)).status, 200);
  assert.equal((await tagged('DELETE', url, String(newPassword.etag))).status, 204);
  assert.equal((await api.call('GET', url)).status, 404);
});

test('a role: read one with its ETag; a stale edit or delete is 412; a built-in role reads but stays immutable', async () => {
  const role = await api.created('/api/v1/auth/roles', { name: 'auditor', permissions: ['rules:read'] });
  const url = `/api/v1/auth/roles/${role.id}`;
  const read = await api.call('GET', url);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.permissions, ['rules:read']);
  const tag = String(read.headers.etag);
  assert.match(tag, TAG);

  const changed = await tagged('PUT', url, tag, { permissions: ['rules:read', 'logs:view'] });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.equal((await api.call('GET', url)).headers.etag, changed.etag);
  const stale = await tagged('PUT', url, tag, { permissions: ['rules:write'] });
  assert.equal(stale.status, 412);
  assert.deepEqual((await api.call('GET', url)).body.permissions, ['rules:read', 'logs:view']);
  assert.equal((await tagged('DELETE', url, tag)).status, 412);
  assert.equal((await tagged('DELETE', url, String(changed.etag))).status, 204);
  assert.equal((await api.call('GET', url)).status, 404);

  const builtin = await api.call('GET', '/api/v1/auth/roles/builtin-admin');
  assert.equal(builtin.status, 200);
  assert.equal(builtin.body.builtin, true);
  assert.equal((await tagged('PUT', '/api/v1/auth/roles/builtin-admin', String(builtin.headers.etag), { description: 'x' })).status, 403);
  assert.equal((await api.call('GET', '/api/v1/auth/roles/no-such-role')).status, 404);
});
