import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadStartupConfig, type StartupConfig } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';

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
      await app.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
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
