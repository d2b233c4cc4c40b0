import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadStartupConfig, type StartupConfig } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';

export interface TestApp {
  app: FastifyInstance;
  dataDir: string;
  clock: ManualClock;
  close(): Promise<void>;
}

/** A fresh app on a fresh data directory with an injectable clock, served through `app.inject`. */
export async function startTestApp(options: Omit<Partial<BuildOptions>, 'config'> & { config?: Partial<StartupConfig>; dataDir?: string } = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'bulwark-test-'));
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock(Date.now());
  const config = { ...loadStartupConfig([], {}), dataDir, ...options.config };
  const app = await buildApp({ logger: false, ...options, config, clock });
  await app.ready();
  return {
    app,
    dataDir,
    clock,
    async close() {
      // The API's own stop leaves the daemons running (they outlive it); a test's teardown stops them.
      await app.context.platform.stopServices?.();
      await app.close();
      // A caller that brought its data directory (a restart test) cleans up both itself.
      if (options.dataDir) return;
      rmSync(dataDir, { recursive: true, force: true });
      // On linux the daemons' tree is outside the data directory (src/platform/daemon-runtime.ts), in
      // /var/lib/bulwark-daemons unless --runtime-dir says otherwise: never left behind there.
      rmSync(runtimeRoot(config), { recursive: true, force: true });
    },
  };
}

/** Parses a JSON response body, failing loudly with the raw text when it is not JSON. */
export function json<T = any>(response: { body: string }): T {
  try {
    return JSON.parse(response.body) as T;
  } catch {
    throw new Error(`response is not JSON: ${response.body.slice(0, 200)}`);
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * `call` (status and parsed body) and `ok` (asserts a 2xx, returns the body) against an app a test may restart:
 * both read the current app and headers when called.
 */
export function apiCalls(current: () => { app: FastifyInstance; headers: Record<string, string> }) {
  const call = async (method: Method, url: string, payload?: unknown) => {
    const { app, headers } = current();
    const response = await app.inject({ method, url, payload: payload as object, headers });
    return { status: response.statusCode, body: response.body ? json(response) : undefined };
  };
  const ok = async (method: Exclude<Method, 'GET'>, url: string, payload?: unknown) => {
    const response = await call(method, url, payload);
    assert.ok(response.status >= 200 && response.status < 300, `${method} ${url} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  return { call, ok };
}
