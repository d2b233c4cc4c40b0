import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import { fmt, percentile } from './harness.js';

/**
 * The web console's weight and first load on loopback. Builds web/ with Vite, reports every file's raw, gzip
 * and brotli size, then loads pages in Debian's chromium with a cold cache each time (a new browser context):
 * the sign-in page until its form is usable, and the dashboard until its first live frame. Baseline, in the
 * same run: navigating the same browser to a tiny JSON answer of the same server (browser and loopback cost
 * without the console).
 */
const CHROMIUM = '/usr/bin/chromium';
const RUNS = 15;
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: ${CHROMIUM} not found (apt-get install chromium)`);
  process.exit(0);
}

const consoleDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-console-'));
await build({ configFile: join(process.cwd(), 'web', 'vite.config.ts'), logLevel: 'silent', build: { outDir: consoleDir, emptyOutDir: true } });

const kib = (bytes: number) => `${fmt(bytes / 1024)} KiB`;
const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : NaN);
let totals = { raw: 0, gzip: 0, brotli: 0 };
console.log('bundle (what a first visit downloads):');
for (const file of ['index.html', ...readdirSync(join(consoleDir, 'assets')).filter((name) => !/\.(gz|br)$/.test(name)).map((name) => `assets/${name}`)]) {
  const path = join(consoleDir, file);
  const raw = statSync(path).size;
  const gzip = file === 'index.html' ? raw : sizeOf(`${path}.gz`);
  const brotli = file === 'index.html' ? raw : sizeOf(`${path}.br`);
  totals = { raw: totals.raw + raw, gzip: totals.gzip + gzip, brotli: totals.brotli + brotli };
  console.log(`  ${file.padEnd(32)} ${kib(raw).padStart(10)} raw ${kib(gzip).padStart(10)} gzip ${kib(brotli).padStart(10)} brotli`);
}
console.log(`  ${'total'.padEnd(32)} ${kib(totals.raw).padStart(10)} raw ${kib(totals.gzip).padStart(10)} gzip ${kib(totals.brotli).padStart(10)} brotli`);
const indexHtml = readFileSync(join(consoleDir, 'index.html'), 'utf8');
console.log(`  requests for the first page: ${1 + (indexHtml.match(/(src|href)="\/assets\//g) ?? []).length} (index.html and its assets)`);

const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-'));
const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent' }, logger: false, consoleDir });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const credentials = { username: 'admin', password: 'Bench-password1' };
await fetch(`${url}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

/** Milliseconds from the start of `goto` until `ready` resolves, each in a cold browser context. */
async function measure(path: string, ready: (page: import('playwright-core').Page) => Promise<unknown>, before?: (page: import('playwright-core').Page) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < RUNS + 2; run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await before?.(page);
    const start = performance.now();
    await page.goto(`${url}${path}`);
    await ready(page);
    const elapsed = performance.now() - start;
    if (run >= 2) times.push(elapsed); // the first runs warm the server's file cache and the JIT
    await context.close();
  }
  return times.sort((a, b) => a - b);
}

const report = (label: string, times: number[]) =>
  console.log(`${label.padEnd(58)} median ${fmt(percentile(times, 50))} ms, p90 ${fmt(percentile(times, 90))} ms (${times.length} cold loads)`);

const baseline = await measure('/api/v1/auth/register', (page) => page.waitForLoadState('load'));
const signIn = await measure('/login', (page) => page.getByRole('button', { name: 'Sign in', exact: true }).waitFor());
const dashboard = await measure(
  '/',
  (page) => page.getByText(/^Live — update/).waitFor(),
  async (page) => {
    // a signed-in tab: the session the sign-in page would have stored
    const login = (await (await fetch(`${url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) })).json()) as { access_token: string; refresh_token: string };
    await page.addInitScript(`sessionStorage.setItem('bulwark.session', ${JSON.stringify(JSON.stringify({ kind: 'bearer', accessToken: login.access_token, refreshToken: login.refresh_token }))})`);
  },
);
report('baseline: a small JSON answer of the same server', baseline);
report('sign-in page, navigation until the form is usable', signIn);
report('dashboard (signed in) until the first live frame', dashboard);

await browser.close();
await app.close();
rmSync(dataDir, { recursive: true, force: true });
rmSync(consoleDir, { recursive: true, force: true });
