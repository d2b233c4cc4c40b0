import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { startTestApp, json, type TestApp } from './app.js';
import { adminHeaders, type Headers } from './auth.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface AdminApiOptions {
  /** Also serve on a loopback port (for streams, WebSockets and real HTTP clients): its address is `api.base`. */
  listen?: boolean;
}

/**
 * A test file's app (started before its tests, closed after them) and an administrator's calls to it: the
 * setup and the three assertions most API suites repeat.
 */
export function adminApi(options: Parameters<typeof startTestApp>[0] & AdminApiOptions = {}) {
  const { listen, ...appOptions } = options;
  let t: TestApp | undefined;
  let headers: Headers = {};
  let base = '';
  before(async () => {
    t = await startTestApp(appOptions);
    if (listen) base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    headers = await adminHeaders(t.app);
  });
  after(() => t?.close());

  /** A request with the administrator's headers, or with `as` (another caller's, `{}` for none). */
  const call = async (method: Method, url: string, payload?: unknown, as: Headers = headers) => {
    const response = await api.t.app.inject({ method, url, payload: payload as InjectOptions['payload'], headers: as });
    return { status: response.statusCode, body: response.body ? json(response) : undefined, headers: response.headers };
  };
  const api = {
    get t(): TestApp {
      if (!t) throw new Error('the test app starts in before()');
      return t;
    },
    get headers(): Headers {
      return headers;
    },
    /** The loopback address the app serves on (`http://127.0.0.1:port`), with `listen: true`. */
    get base(): string {
      if (!base) throw new Error('adminApi serves on a port only with listen: true');
      return base;
    },
    /** Signs the administrator in again (after the clock outran the session): new headers for every later call. */
    async signIn(): Promise<Headers> {
      headers = await adminHeaders(api.t.app);
      return headers;
    },
    call,
    /** POST that must answer 201; the record created. */
    async created(url: string, payload: unknown) {
      const response = await call('POST', url, payload);
      assert.equal(response.status, 201, `${url} ${JSON.stringify(payload)} → ${JSON.stringify(response.body)}`);
      return response.body;
    },
    /** A write that must answer 400 `{error}` with a message matching `message`; the message. */
    async refused(method: 'POST' | 'PUT', url: string, payload: unknown, message: RegExp): Promise<string> {
      const response = await call(method, url, payload);
      assert.equal(response.status, 400, `${JSON.stringify(payload)} → ${response.status} ${JSON.stringify(response.body)}`);
      assert.deepEqual(Object.keys(response.body), ['error']);
      assert.match(response.body.error, message, JSON.stringify(payload));
      return response.body.error as string;
    },
  };
  return api;
}
