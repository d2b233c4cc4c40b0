import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import type { Platform } from '../src/platform/platform.js';
import type { TimedRequest } from './timed-client.js';
import type { AliasData, FirewallConfig, RuleData, WithId } from '../src/compile/firewall-types.js';

/** Starts the real app on a loopback port with a fresh data directory. */
export async function startServer(options: { platform?: Platform } = {}): Promise<{ app: FastifyInstance; url: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-'));
  const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent' }, logger: false, ...options });
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

/** Registers the first administrator of a fresh server and signs in: the Authorization header of its session. */
export async function adminBearer(url: string): Promise<{ authorization: string }> {
  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const credentials = { username: 'admin', password: 'Bench-password1' };
  await post('/api/v1/auth/register', credentials);
  const { access_token } = (await (await post('/api/v1/auth/login', credentials)).json()) as { access_token: string };
  return { authorization: `Bearer ${access_token}` };
}

export function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median milliseconds of `runs` calls of fn, after one warm-up call. */
export function time(fn: () => unknown, runs: number): number {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** A firewall configuration of generated rules (ids in order) over the given aliases, as the compilers take it. */
export function benchFirewallConfig(count: number, ruleData: (i: number) => RuleData, aliases: WithId<AliasData>[]): FirewallConfig {
  const rules = Array.from({ length: count }, (_, i) => ({ id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, data: ruleData(i) }));
  return {
    rules, aliases, schedules: [], nat: [],
    settings: { block_logging: true },
    system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 1 },
    time: { day: 'wed', minute: 600 },
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

/** A client in a child process for timing single requests (bench/timed-client.ts); one request at a time. */
export async function timedClient(): Promise<{ request(request: TimedRequest): Promise<{ ms: number; status: number; body: string }>; close(): void }> {
  const { fork } = await import('node:child_process');
  const child = fork(new URL('./timed-client.js', import.meta.url));
  await new Promise((resolve) => child.once('spawn', resolve));
  return {
    request: (request) => new Promise((resolve, reject) => {
      child.once('message', (answer: { ms: number; status: number; body: string } | { error: string }) => ('error' in answer ? reject(new Error(answer.error)) : resolve(answer)));
      child.send(request);
    }),
    close: () => child.kill(),
  };
}

/**
 * Requests per second a client in a child process gets from `origin + path`, and the CPU time this process (the
 * server's) spent per request meanwhile: the second figure does not depend on how busy the machine is.
 */
export async function throughput(request: { origin: string; path: string; headers?: Record<string, string>; connections?: number; durationMs?: number; status?: number; ca?: string; newConnectionEach?: boolean }): Promise<{ perSecond: number; cpuMicrosPerRequest: number }> {
  const { fork } = await import('node:child_process');
  const child = fork(new URL('./load-worker.js', import.meta.url));
  await new Promise((resolve) => child.once('spawn', resolve));
  const cpu = process.cpuUsage();
  child.send({ headers: {}, connections: 8, durationMs: 2000, status: 200, ...request });
  const result = await new Promise<{ completed?: number; seconds?: number; error?: string }>((resolve, reject) => {
    child.once('message', resolve);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code} before reporting`)));
  });
  const used = process.cpuUsage(cpu);
  if (result.error !== undefined) throw new Error(result.error);
  return { perSecond: result.completed! / result.seconds!, cpuMicrosPerRequest: (used.user + used.system) / result.completed! };
}
