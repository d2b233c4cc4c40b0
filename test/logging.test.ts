import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startTestApp } from './helpers/app.js';
import { ADMIN } from './helpers/auth.js';

test('no password, token, key or secret ever reaches a log line; one line per request with its id', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // Signs in by hand, not through startAreaApp: what registration and login write to the log is under test.
  const t = await startTestApp({ logger: { level: 'trace', stream } });
  try {
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: ADMIN });
    const login = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: ADMIN })).json();
    const headers = { authorization: `Bearer ${login.access_token}` };
    const key = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/api-keys', headers, payload: { name: 'k', permissions: ['dashboard:view'] } })).json().key;
    await t.app.inject({ url: '/api/v1/about', headers: { authorization: `ApiKey ${key}` } });
    const ticket = (await t.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers })).json().ticket;
    await t.app.inject({ url: `/api/v1/about?ticket=${ticket}` });
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: login.refresh_token } });
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'Wrong-Secret-99' } });

    const log = lines.join('');
    for (const secret of [ADMIN.password, 'Wrong-Secret-99', login.access_token, login.refresh_token, key, ticket]) {
      assert.equal(log.includes(secret), false, `log contains ${secret.slice(0, 12)}…`);
    }
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    assert.equal(requestLines.length, 8);
    assert.ok(requestLines.every((l) => typeof l.reqId === 'string' && l.status && l.path));
  } finally {
    await t.close();
  }
});
