import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import { createAuthArea } from '../src/areas/auth/routes.js';
import { createConfigArea } from '../src/areas/config/routes.js';
import type { AppContext } from '../src/context.js';
import type { Area } from '../src/areas/area.js';
import { collectionRoutes } from '../src/http/collection-routes.js';
import { fmt, percentile } from './harness.js';

/**
 * Save, diff and restore of a configuration of 10,000 objects, through HTTP. Baselines, measured in the same
 * run: the raw cost of what each operation cannot avoid (reading all rows and serialising them for a save;
 * fetching and serialising two versions for a diff; rewriting all rows for a restore), plus a trivial
 * authenticated GET for the HTTP overhead.
 */
const OBJECTS = 10_000;
const RUNS = 7;

function benchArea(context: AppContext): Area {
  const rules = context.models.collection({
    kind: 'bench_rule', noun: 'rule', writeAccess: 'backup:write',
    schema: Type.Object({
      action: Type.String(), interface: Type.String(), protocol: Type.String(), source: Type.String(), destination: Type.String(),
      port: Type.Integer(), log: Type.Boolean(), description: Type.String(), psk: Type.Optional(Type.String()),
    }),
    writeOnly: ['psk'],
  });
  context.apply.register('noop', async () => undefined);
  return { name: 'bench', routes: collectionRoutes(rules, { path: '/api/v1/bench/rules', access: { read: 'backup:read', write: 'backup:write' }, tags: ['bench'] }) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-config-'));
const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent' }, logger: false, areas: (context) => [createAuthArea(context), benchArea(context), createConfigArea(context)] });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const credentials = { username: 'admin', password: 'Bench-password1' };
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
await post('/api/v1/auth/register', credentials);
const { access_token } = (await (await post('/api/v1/auth/login', credentials)).json()) as { access_token: string };
const auth = { authorization: `Bearer ${access_token}` };
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, { method, headers: { ...auth, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as Record<string, any>;
};

const { store, sealer } = app.context;
store.transaction(() => {
  for (let i = 0; i < OBJECTS; i++) {
    store.insert('bench_rule', {
      action: i % 3 ? 'pass' : 'block', interface: `eth${i % 4}`, protocol: 'tcp', source: `10.${(i >> 8) & 255}.${i & 255}.0/24`,
      destination: 'any', port: 1024 + (i % 5000), log: i % 2 === 0, description: `rule number ${i} of the benchmark`,
      ...(i % 10 === 0 ? { psk: sealer.seal(`secret-${i}`) } : {}),
    });
  }
});

async function timed(fn: () => Promise<unknown> | unknown, runs = RUNS): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b);
}
const line = (label: string, samples: number[]) => console.log(`${label.padEnd(62)} p50 ${fmt(percentile(samples, 50)).padStart(7)} ms   max ${fmt(samples.at(-1)!).padStart(7)} ms`);

await call('POST', '/api/v1/config/save', { comment: 'warm-up' });
const httpBaseline = await timed(() => call('GET', '/api/v1/config/retention'), 50);
line('baseline: trivial authenticated GET /config/retention', httpBaseline);

// ---- save
const snapshotBaseline = await timed(() => JSON.stringify(store.snapshot()));
let n = 0;
const saves = await timed(async () => {
  // a change per save, so each save stores a new content (no deduplication shortcut)
  const first = store.list('bench_rule')[0];
  store.update('bench_rule', first.id, { ...first.data, port: 2000 + n++ });
  await call('POST', '/api/v1/config/save', { comment: `bench ${n}` });
});
line(`save of ${OBJECTS} objects (POST /config/save)`, saves);
line('baseline: read all rows + JSON.stringify (no hash, no compression)', snapshotBaseline);

// ---- diff
const versions = (await (await fetch(`${url}/api/v1/config/history?limit=2`, { headers: auth })).json()) as { version: number }[];
const [newer, older] = versions.map((v) => v.version);
const objects = store.list('bench_rule');
store.transaction(() => {
  for (let i = 0; i < 10; i++) store.update('bench_rule', objects[i * 997].id, { ...objects[i * 997].data, description: `changed ${i}` });
  for (let i = 0; i < 10; i++) store.insert('bench_rule', { ...objects[i].data, description: `added ${i}` });
  for (let i = 0; i < 10; i++) store.remove('bench_rule', objects[5000 + i].id);
});
const small = await call('POST', '/api/v1/config/save', { comment: '30 objects changed' });
const diffSmall = await timed(() => call('GET', `/api/v1/config/diff?from=${newer}&to=${small.version}`));
const diffOne = await timed(() => call('GET', `/api/v1/config/diff?from=${older}&to=${newer}`));
const versionRead = await timed(async () => {
  await call('GET', `/api/v1/config/version?version=${newer}`);
  await call('GET', `/api/v1/config/version?version=${small.version}`);
});
const check = await call('GET', `/api/v1/config/diff?from=${newer}&to=${small.version}`);
line(`diff of two ${OBJECTS}-object versions, 30 objects differ`, diffSmall);
line(`diff of two ${OBJECTS}-object versions, 1 object differs`, diffOne);
line('baseline: GET both versions (read, decompress, redact, serialise)', versionRead);
console.log(`  (diff summary ${JSON.stringify(check.summary)}, unified text ${check.unified.length} bytes)`);
store.transaction(() => {
  for (const o of store.list('bench_rule').slice(0, 10)) store.remove('bench_rule', o.id);
});
const empty = await call('POST', '/api/v1/config/save', { comment: 'all removed' });
void empty;

// ---- restore
const target = Number(small.version);
const content = app.context.apply.versions.content(target)!;
const replaceBaseline = await timed(() => store.replaceAll(content));
const restores = await timed(() => call('POST', '/api/v1/config/restore', { version: target }));
line(`restore of a ${OBJECTS}-object version (replace + apply + record)`, restores);
line('baseline: store.replaceAll of the same objects (rows only)', replaceBaseline);
console.log(`ratios: save ${fmt(percentile(saves, 50) / percentile(snapshotBaseline, 50))}x its baseline, diff ${fmt(percentile(diffSmall, 50) / percentile(versionRead, 50))}x, restore ${fmt(percentile(restores, 50) / percentile(replaceBaseline, 50))}x`);

await app.close();
rmSync(dataDir, { recursive: true, force: true });
