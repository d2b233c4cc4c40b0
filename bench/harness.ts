import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';

/** Starts the real app on a loopback port with a fresh data directory. */
export async function startServer(): Promise<{ app: FastifyInstance; url: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-'));
  const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent' }, logger: false });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    app,
    url,
    async stop() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Calls fn with `concurrency` workers until `durationMs` elapses; returns per-call latencies in ms. */
export async function load(fn: () => Promise<void>, concurrency: number, durationMs: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await fn();
        latencies.push(performance.now() - start);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** Requests per second that a worker-thread client gets from `origin + path` (see load-worker.ts). */
export async function throughput(request: { origin: string; path: string; headers?: Record<string, string>; connections?: number; durationMs?: number; status?: number }): Promise<number> {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(new URL('./load-worker.js', import.meta.url), {
    workerData: { headers: {}, connections: 8, durationMs: 2000, status: 200, ...request },
  });
  const result = await new Promise<{ perSecond?: number; error?: string }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  if (result.error !== undefined) throw new Error(result.error);
  return result.perSecond!;
}
