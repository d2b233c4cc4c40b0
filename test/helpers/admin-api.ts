import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { startTestApp, json, type TestApp } from './app.js';
import { adminHeaders, type Headers } from './auth.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * A test file's app (started before its tests, closed after them) and an administrator's calls to it: the
 * setup and the three assertions most API suites repeat.
 */
export function adminApi(options: Parameters<typeof startTestApp>[0] = {}) {
  let t: TestApp | undefined;
  let headers: Headers = {};
  before(async () => {
    t = await startTestApp(options);
    headers = await adminHeaders(t.app);
  });
  after(() => t?.close());

  const call = async (method: Method, url: string, payload?: unknown) => {
    const response = await api.t.app.inject({ method, url, payload: payload as InjectOptions['payload'], headers });
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
