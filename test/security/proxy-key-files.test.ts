import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import type { Headers } from '../helpers/auth.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';

const rp = '/api/v1/reverse-proxy';

test('proxy TLS certificates name only keys the role may hand to the proxy; other keys need the administrator\'s allow-list', async () => {
  // The proxy of the linux platform (Caddy's JSON, certificates copied for its user), its checker standing in.
  const simulated = createSimulatedPlatform();
  const platform = { ...simulated, reverseProxy: { ...simulated.reverseProxy, dialect: 'caddy-json' as const, validate: async () => null } };
  const t = await startAreaApp({ platform });
  try {
    const admin = t.headers;
    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, headers: Headers, payload?: unknown) => {
      const response = await t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
      return { status: response.statusCode, body: response.body ? json(response) : undefined };
    };
    assert.equal((await call('POST', '/api/v1/auth/users', admin, { username: 'pat', password: 'Operator-pass-12', role: 'operator' })).status, 201);
    const login = await call('POST', '/api/v1/auth/login', {}, { username: 'pat', password: 'Operator-pass-12' });
    const operator = { authorization: `Bearer ${login.body.access_token}` };

    // Another daemon's key and the system's: refused to proxy:write, naming the field and the way out.
    for (const [index, key] of ['/etc/ssl/private/ssl-cert-snakeoil.key', '/etc/swanctl/private/gateway.key', '/etc/unbound/unbound_server.key'].entries()) {
      const refused = await call('POST', `${rp}/tls/certs`, operator, { name: `stolen${index}`, cert_file: '/etc/ssl/certs/site.pem', key_file: key });
      assert.equal(refused.status, 400, `${key}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.body.error, /^body\.key_file is not a key Bulwark keeps/);
    }
    // Bulwark's own store is fine.
    assert.equal((await call('POST', `${rp}/tls/certs`, operator, { name: 'own', cert_file: '/etc/bulwark/site.pem', key_file: '/etc/bulwark/site.key' })).status, 201);

    // The allow-list is the administrator's (settings:write); proxy:read sees it.
    const allowed = '/etc/ssl/private/site.key';
    assert.equal((await call('PUT', `${rp}/tls/key-files`, operator, { paths: [allowed] })).status, 403);
    assert.equal((await call('PUT', `${rp}/tls/key-files`, admin, { paths: ['/root/.ssh/id_rsa'] })).status, 400, 'only certificate files under the certificate directories');
    assert.equal((await call('PUT', `${rp}/tls/key-files`, admin, { paths: [allowed] })).status, 200);
    assert.deepEqual((await call('GET', `${rp}/tls/key-files`, operator)).body, { paths: [allowed] });
    const listed = await call('POST', `${rp}/tls/certs`, operator, { name: 'listed', cert_file: '/etc/ssl/certs/site.pem', key_file: allowed });
    assert.equal(listed.status, 201, 'a key the administrator listed');

    // Taken off the list, the stored certificate is refused where the key would be read and copied for the proxy.
    assert.equal((await call('PUT', `${rp}/tls/key-files`, admin, { paths: [] })).status, 200);
    const validated = await call('POST', `${rp}/validate`, operator);
    assert.equal(validated.body.valid, false);
    assert.match(validated.body.message, /TLS certificate listed key_file is not a key Bulwark keeps/);
  } finally {
    await t.close();
  }
});
