import { createServer } from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resolver } from 'node:dns/promises';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import { findProgram } from '../src/platform/daemon-tools.js';
import { unboundPythonDir } from '../src/platform/unbound-python.js';
import { fmt } from './harness.js';

/**
 * A one-million-name blocklist on the linux platform, end to end through the API: download (from a loopback
 * HTTP server, through the outbound guard), parse, then render, check (unbound-checkconf) and load into a real
 * Unbound until it answers. Targets (issue 14): render and load under 10 s, Unbound under 300 MB resident.
 * Baselines, measured in the same run: the same apply without any list (what Unbound costs anyway), and the
 * rejected design — one `local-zone` line per name — checked and loaded by the same Unbound.
 */
const NAMES = 1_000_000;
const TARGET_SECONDS = 10;
const TARGET_MB = 300;

const missing = ['unbound', 'unbound-checkconf', 'unbound-control'].filter((p) => !findProgram(p));
if (missing.length || !unboundPythonDir()) {
  console.log(`skipped: ${[...missing, ...(unboundPythonDir() ? [] : ['python3-unbound'])].join(', ')} not installed`);
  process.exit(0);
}

/** Realistic-looking, distinct names: a label or two under a few hundred registrable domains and TLDs. */
function names(count: number): string[] {
  const tlds = ['com', 'net', 'org', 'io', 'de', 'info', 'xyz', 'co.uk'];
  const words = ['ads', 'track', 'pixel', 'metrics', 'cdn', 'stat', 'beacon', 'promo', 'click', 'tag'];
  const list: string[] = [];
  for (let i = 0; i < count; i++) {
    const base = `${words[i % words.length]}${(i * 7919).toString(36)}.${tlds[i % tlds.length]}`;
    list.push(i % 3 === 0 ? `${words[(i >> 3) % words.length]}.${base}` : base);
  }
  return list;
}

const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
};

const list = names(NAMES);
const body = `# benchmark list\n${list.map((name) => `0.0.0.0 ${name}`).join('\n')}\n`;
const server = createServer((_request, response) => response.end(body));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const listPort = (server.address() as { port: number }).port;

const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-dns-'));
const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, platform: 'linux', logLevel: 'silent' }, logger: false });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const post = (path: string, payload: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) });
await post('/api/v1/auth/register', { username: 'admin', password: 'Bench-password1' });
const { access_token } = (await (await post('/api/v1/auth/login', { username: 'admin', password: 'Bench-password1' })).json()) as { access_token: string };
const call = async (method: string, path: string, payload?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method, headers: { authorization: `Bearer ${access_token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, any>;
};
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const start = performance.now();
  const result = await fn();
  return [result, (performance.now() - start) / 1000];
};

let failed = false;
try {
  const dnsPort = 20_000 + Math.floor(Math.random() * 20_000);
  await call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port: dnsPort, forwarding_enabled: false, dnssec: false, num_threads: 1 });

  // Baseline: Unbound with nothing to block.
  const [, baselineSeconds] = await timed(() => call('POST', '/api/v1/dns/resolver/apply'));
  const baselinePid = (await call('GET', '/api/v1/dns/resolver/status')).pid as number;
  const baselineMemory = rssMb(baselinePid);

  // Download and parse one million names while the resolver is stopped (so the refresh only stores them).
  await call('POST', '/api/v1/dns/resolver/stop');
  await call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] });
  await call('PUT', '/api/v1/dns/blocklists/schedule', { allow_http: true, allow_private_sources: ['127.0.0.1/32'] });
  await call('PUT', '/api/v1/dns/blocklists/enabled', { enabled: true });
  const source = await call('POST', '/api/v1/dns/blocklists', { name: 'bench', category: 'custom', url: `http://127.0.0.1:${listPort}/hosts`, format: 'hosts' });
  const [refresh, refreshSeconds] = await timed(() => call('POST', `/api/v1/dns/blocklists/${source.id}/refresh`));
  if (!refresh.ok || refresh.rule_count !== NAMES) throw new Error(`refresh: ${JSON.stringify(refresh)}`);

  // The measured figure: render, check and load into Unbound until it answers.
  const [, applySeconds] = await timed(() => call('POST', '/api/v1/dns/resolver/apply'));
  const status = await call('GET', '/api/v1/dns/resolver/status');
  const memory = rssMb(status.pid as number);
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsPort}`]);
  const blocked = await resolver.resolve4(list[NAMES - 1]).then(() => 'answered', (error: NodeJS.ErrnoException) => error.code);
  if (blocked !== 'ENOTFOUND') throw new Error(`the last listed name was not blocked: ${blocked}`);

  // Rejected design, same Unbound: one local-zone per name, checked then loaded.
  const zoneDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-zones-'));
  const zoneConf = join(zoneDir, 'unbound.conf');
  writeFileSync(join(zoneDir, 'zones.conf'), `${list.map((name) => `local-zone: "${name}." always_nxdomain`).join('\n')}\n`);
  writeFileSync(zoneConf, [
    'server:', `  directory: "${zoneDir}"`, '  chroot: ""', '  username: ""', `  pidfile: "${zoneDir}/unbound.pid"`, '  use-syslog: no',
    '  interface: 127.0.0.1', `  port: ${dnsPort + 1}`, '  num-threads: 1', '  module-config: "iterator"', `  include: "${zoneDir}/zones.conf"`,
    'remote-control:', '  control-enable: yes', `  control-interface: "${zoneDir}/unbound.ctl"`, '  control-use-cert: no', '',
  ].join('\n'));
  const [, zoneCheckSeconds] = await timed(async () => spawnSync(findProgram('unbound-checkconf')!, [zoneConf]));
  const zoneStart = performance.now();
  const zoneUnbound = spawn(findProgram('unbound')!, ['-d', '-c', zoneConf], { stdio: 'ignore' });
  while (spawnSync(findProgram('unbound-control')!, ['-c', zoneConf, 'status']).status !== 0) await new Promise((resolve) => setTimeout(resolve, 100));
  const zoneLoadSeconds = (performance.now() - zoneStart) / 1000;
  const zoneMemory = rssMb(zoneUnbound.pid!);
  zoneUnbound.kill('SIGTERM');
  rmSync(zoneDir, { recursive: true, force: true });

  const within = applySeconds < TARGET_SECONDS && memory.rss < TARGET_MB;
  failed = !within;
  console.log(`names: ${NAMES.toLocaleString('en')} (hosts format, ${fmt(body.length / 1e6)} MB)`);
  console.log(`download + parse + store (refresh):             ${fmt(refreshSeconds, 2)} s`);
  console.log(`render + check + load, filter (apply):          ${fmt(applySeconds, 2)} s   target < ${TARGET_SECONDS} s`);
  console.log(`Unbound resident with the filter:               ${fmt(memory.rss)} MB (peak ${fmt(memory.peak)} MB)   target < ${TARGET_MB} MB`);
  console.log(`baseline: apply without a list:                 ${fmt(baselineSeconds, 2)} s, Unbound ${fmt(baselineMemory.rss)} MB`);
  console.log(`rejected: one local-zone per name, check + load: ${fmt(zoneCheckSeconds, 2)} s + ${fmt(zoneLoadSeconds, 2)} s, Unbound ${fmt(zoneMemory.rss)} MB`);
  console.log(within ? 'PASS' : 'FAIL: a target was missed');
} finally {
  await app.close();
  server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}-daemons`, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
