import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from './app.js';
import { adminHeaders, type Headers } from './auth.js';

export interface AreaApp extends TestApp {
  headers: Headers;
  request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown): Promise<LightMyRequestResponse>;
}

/** A fresh app with a real admin session, and a shorthand for authenticated requests. */
export async function startAreaApp(options: Parameters<typeof startTestApp>[0] = {}): Promise<AreaApp> {
  const t = await startTestApp(options);
  const headers = await adminHeaders(t.app);
  return {
    ...t,
    headers,
    request: (method, url, payload) =>
      t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) }),
  };
}
