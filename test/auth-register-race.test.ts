import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './helpers/app.js';

// No adminApi or startAreaApp: the first registration itself is raced here, over real sockets.
let t: TestApp;
let base: string;
before(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(() => t.close());

const CONTENDERS = 8;

// The account count used to be read before the ~100 ms password hash, so every request that arrived during
// another's hash saw an empty appliance and created its own administrator.
test(`first boot: of ${CONTENDERS} concurrent registrations over HTTP exactly one creates an account, the others get 403`, async () => {
  const responses = await Promise.all(
    Array.from({ length: CONTENDERS }, (_, index) =>
      fetch(`${base}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: `contender${index}`, password: `Contender-pass${index}` }),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as Record<string, unknown> })),
    ),
  );
  const statuses = responses.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, ...Array<number>(CONTENDERS - 1).fill(403)], JSON.stringify(responses));
  for (const refused of responses.filter((r) => r.status === 403)) assert.match(String(refused.body.error), /registration is closed/);

  const winner = responses.find((r) => r.status === 201)!.body;
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: winner.username, password: `Contender-pass${String(winner.username).slice('contender'.length)}` }),
  });
  assert.equal(login.status, 200);
  const { access_token: token } = (await login.json()) as { access_token: string };
  const users = await fetch(`${base}/api/v1/auth/users`, { headers: { authorization: `Bearer ${token}` } });
  const people = ((await users.json()) as { username: string; role: string }[]).filter((u) => u.username.startsWith('contender'));
  assert.deepEqual(people.map((u) => [u.username, u.role]), [[winner.username, 'admin']], 'one administrator, no other account');
  const open = await fetch(`${base}/api/v1/auth/register`);
  assert.deepEqual(await open.json(), { registration_open: false });
});
