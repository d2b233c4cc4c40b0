import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';

test('an operator\'s commit-confirm window, when it expires, reverts only the sections an operator may write', async () => {
  const t = await startAreaApp();
  try {
    const admin = t.headers;
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: unknown) => {
      const response = await t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
      return { status: response.statusCode, body: response.body ? json(response) : undefined };
    };
    assert.equal((await call('POST', '/api/v1/auth/users', admin, { username: 'oscar', password: 'Operator-pass-12', role: 'operator' })).status, 201);
    const login = await call('POST', '/api/v1/auth/login', {}, { username: 'oscar', password: 'Operator-pass-12' });
    const operator = { authorization: `Bearer ${login.body.access_token}` };
    assert.equal((await call('POST', '/api/v1/reload', admin)).status, 200, 'a running version to roll back to');

    // The operator opens a window and makes a change of their own.
    assert.equal((await call('POST', '/api/v1/config/commit-confirm', operator, { timeout_seconds: 60 })).status, 200);
    assert.equal((await call('POST', '/api/v1/aliases', operator, { name: 'risky', alias_type: 'host', entries: ['10.0.0.9'] })).status, 201);
    assert.equal((await call('POST', '/api/v1/reload', operator)).status, 200);
    // Meanwhile an administrator changes a section the operator may not write (settings:write), and applies.
    assert.equal((await call('PUT', '/api/v1/auth/settings', operator, { max_login_attempts: 7 })).status, 403, 'not the operator\'s to write');
    assert.equal((await call('PUT', '/api/v1/auth/settings', admin, { max_login_attempts: 7 })).status, 200);
    assert.equal((await call('POST', '/api/v1/reload', admin)).status, 200);

    // The window expires unconfirmed.
    t.clock.advance(61_000);
    const status = await call('GET', '/api/v1/config/commit-confirm/status', admin);
    assert.equal(status.body.active, false);
    assert.equal(status.body.last.outcome, 'rolled_back');
    const aliases = (await call('GET', '/api/v1/aliases', admin)).body as { name: string }[];
    assert.ok(!aliases.some((alias) => alias.name === 'risky'), 'the operator\'s own change is reverted');
    assert.equal((await call('GET', '/api/v1/auth/settings', admin)).body.max_login_attempts, 7, 'the administrator\'s change to a section the operator may not write is kept');
  } finally {
    await t.close();
  }
});
