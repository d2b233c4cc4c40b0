import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isPermission } from '../src/core/permissions.js';
import { toSpecPath } from '../src/http/route.js';
import { adminApi } from './helpers/admin-api.js';
import { startAreaApp } from './helpers/area-app.js';
import { headersWithPermissions } from './helpers/auth.js';

const api = adminApi();

/** Any value does for a path parameter: access is decided before parameters are even validated. */
const concrete = (path: string) => toSpecPath(path).replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

test('every route: anonymous gets 401 (unless public); a credential without the permission gets 403; with it, neither', async () => {
  const none = await headersWithPermissions(api.t.app, [], api.headers);
  const routes = api.t.app.catalogue.filter((r) => r.path.startsWith('/api/v1/') && r.path !== '/api/v1/openapi.json');
  assert.ok(routes.length >= 20, `only ${routes.length} routes registered`);
  const failures: string[] = [];
  for (const route of routes) {
    const url = concrete(route.path);
    const method = route.method as 'GET';
    const anonymous = await api.t.app.inject({ method, url, payload: method === 'GET' ? undefined : {} });
    if (route.access === 'public') {
      if (anonymous.statusCode === 401 || anonymous.statusCode === 403) failures.push(`${method} ${url}: public but ${anonymous.statusCode}`);
      continue;
    }
    if (anonymous.statusCode !== 401) failures.push(`${method} ${url}: anonymous got ${anonymous.statusCode}`);
    if (route.access === 'authenticated' || route.access === undefined || !isPermission(route.access)) continue;
    const lacking = await api.t.app.inject({ method, url, headers: none, payload: method === 'GET' ? undefined : {} });
    if (lacking.statusCode !== 403) failures.push(`${method} ${url}: without ${route.access} got ${lacking.statusCode}`);
    // Event streams stay open by design and app.inject would wait for them forever; their 401/403 are checked
    // above, and their suites connect over a real socket.
    if (method === 'GET' && !url.endsWith('/stream')) {
      const holder = await headersWithPermissions(api.t.app, [route.access], api.headers);
      const allowed = await api.t.app.inject({ method, url, headers: holder });
      if (allowed.statusCode === 401 || allowed.statusCode === 403) failures.push(`${method} ${url}: with ${route.access} got ${allowed.statusCode}`);
    }
  }
  assert.deepEqual(failures, []);
});

test('access is decided before validation: a caller without access learns nothing about the body schema', async () => {
  const response = await api.t.app.inject({ method: 'POST', url: '/api/v1/auth/users', payload: '{not json', headers: { 'content-type': 'application/json' } });
  assert.equal(response.statusCode, 401);
});

test('X-Forwarded-For is ignored unless the peer is a trusted proxy; then the rightmost untrusted hop is the client', async () => {
  const login = (remoteAddress: string, forwarded: string) =>
    api.t.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress, headers: { 'x-forwarded-for': forwarded }, payload: { username: 'spoof', password: 'Nope-nope-1' } });
  await login('192.0.2.50', '198.51.100.1');
  const audit = (await api.t.app.inject({ url: '/api/v1/auth/audit?limit=1', headers: api.headers })).json();
  assert.equal(audit[0].ip_addr, '192.0.2.50', 'untrusted peer: header ignored');

  const proxied = await startAreaApp({ config: { trustedProxies: ['10.0.0.0/8'] } });
  try {
    await proxied.app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: '10.0.0.5', headers: { 'x-forwarded-for': '6.6.6.6, 198.51.100.9, 10.1.1.1' }, payload: { username: 'spoof', password: 'Nope-nope-1' } });
    const entries = (await proxied.request('GET', '/api/v1/auth/audit?limit=1')).json();
    assert.equal(entries[0].ip_addr, '198.51.100.9');
  } finally {
    await proxied.close();
  }
});
