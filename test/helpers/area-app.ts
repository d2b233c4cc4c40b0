import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from './app.js';
import { adminHeaders, type Headers } from './auth.js';
import { PERMISSIONS } from '../../src/core/permissions.js';
import type { Authenticator } from '../../src/http/access.js';

export interface AreaApp extends TestApp {
  headers: Headers;
  request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
}

/**
 * Until the identity area is present in this build (it lands on main separately), area tests authenticate
 * with a fixed admin identity holding every permission; once login exists they use a real admin session.
 */
const allPermissions = (): Authenticator => ({
  authenticate: async () => ({
    credential: 'session', userId: 'test-admin', username: 'admin', role: 'admin',
    permissions: new Set(PERMISSIONS), credentialId: 'test',
  }),
});

/** A fresh app with an admin credential, and a shorthand for authenticated requests. */
export async function startAreaApp(options: Parameters<typeof startTestApp>[0] = {}): Promise<AreaApp> {
  let t = await startTestApp(options);
  let headers: Headers = {};
  if (t.app.catalogue.some((route) => route.path === '/api/v1/auth/login')) {
    headers = await adminHeaders(t.app);
  } else {
    await t.close();
    t = await startTestApp({ ...options, authenticator: allPermissions });
  }
  return {
    ...t,
    headers,
    request: (method, url, payload) =>
      t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) }),
  };
}
