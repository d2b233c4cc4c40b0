import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { loadStartupConfig } from '../../src/config.js';
import { systemSkip } from './system-skip.js';

/** Debian's chromium; playwright never downloads a browser of its own here. */
export const CHROMIUM = '/usr/bin/chromium';
/** Without the background-networking flags Chromium keeps trying to reach hosts this machine cannot reach. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Skip reason when chromium is absent, or a failure when REQUIRE_SYSTEM_TESTS=1 demands the browser tests. */
export const chromiumSkipReason = (): string | false =>
  systemSkip('the console browser tests', { also: [[`${CHROMIUM} (apt-get install chromium)`, existsSync(CHROMIUM)]] });

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Builds the console from web/ with Vite's JavaScript API into a fresh directory, so the test serves what the
 * sources say now (not a stale dist/) and works on a fresh clone where nothing was built yet.
 */
export async function buildConsole(): Promise<string> {
  const { build } = await import('vite');
  const outDir = mkdtempSync(join(tmpdir(), 'bulwark-console-build-'));
  await build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}

export interface ConsoleServer {
  app: FastifyInstance;
  baseUrl: string;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The real server (simulated platform unless `platform` says otherwise, real clock so the dashboard ticks) on
 * 127.0.0.1, serving `consoleDir`.
 */
export async function startConsoleServer(consoleDir: string, options: { platform?: 'linux' } = {}): Promise<ConsoleServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-console-data-'));
  const app = await buildApp({ logger: false, consoleDir, config: { ...loadStartupConfig([], {}), dataDir, ...(options.platform ? { platform: options.platform } : {}) } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  // On linux the daemons it started outlive the API (they are detached): the test's teardown stops them.
  const close = async () => {
    await app.context.platform.stopServices?.();
    await app.close();
  };
  return { app, baseUrl: `http://127.0.0.1:${port}`, dataDir, close };
}

/** What went wrong in a page: console errors, uncaught exceptions, and API answers of 5xx (or any >= 400). */
export interface PageProblems {
  console: string[];
  failedResponses: { status: number; url: string }[];
}

/** A write the page sent to the API, and the If-Match it carried. */
export interface ApiWrite {
  method: string;
  path: string;
  ifMatch: string | undefined;
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  problems: PageProblems;
  /** Every PUT, PATCH and DELETE to the API, checked by assertConditionalWrites. */
  writes: ApiWrite[];
}

/** A fresh browser context (its own sessionStorage and cookies) whose problems are recorded. */
export async function openWatchedPage(browser: Browser, baseUrl: string, options: { ignoreHTTPSErrors?: boolean } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1400, height: 1000 }, ignoreHTTPSErrors: options.ignoreHTTPSErrors });
  const page = await context.newPage();
  const problems: PageProblems = { console: [], failedResponses: [] };
  page.on('console', (message) => {
    if (message.type() === 'error') problems.console.push(message.text());
  });
  page.on('pageerror', (error) => problems.console.push(`uncaught: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.failedResponses.push({ status: response.status(), url: response.url() });
  });
  const watched: WatchedPage = { context, page, problems, writes: [] };
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname;
    if (['PUT', 'PATCH', 'DELETE'].includes(request.method()) && path.startsWith('/api/v1/')) watched.writes.push({ method: request.method(), path, ifMatch: request.headers()['if-match'] });
  });
  return watched;
}

/** Writes the console sends without If-Match on purpose, and why. */
export const UNCONDITIONAL_ON_PURPOSE: readonly string[] = [
  // the role form sets a role outright: it starts from no stored role it could be stale against
  'PUT /api/v1/interfaces/{name}/role',
];

/**
 * Writes that are unconditional against the API's own promise: the OpenAPI document declares If-Match on the
 * operation, and a GET of the same path gives the tag to send, yet the console sent none (issue 34: every edit
 * carries the ETag it was read with). `allowed` lists the exceptions, each with its reason where it is declared.
 */
export async function unconditionalWrites(baseUrl: string, writes: readonly ApiWrite[], allowed: readonly string[]): Promise<string[]> {
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>> };
  // the literal path first (`/rules/reorder` before `/rules/{id}`)
  const templates = Object.keys(document.paths).sort((a, b) => a.split('{').length - b.split('{').length);
  const templateOf = (path: string) => templates.find((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
  const found: string[] = [];
  for (const write of writes) {
    const template = templateOf(write.path);
    if (!template || write.ifMatch) continue;
    const operations = document.paths[template]!;
    const takesIfMatch = (operations[write.method.toLowerCase()]?.parameters ?? []).some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'if-match');
    const line = `${write.method} ${template}`;
    if (takesIfMatch && operations.get && !allowed.includes(line) && !found.includes(line)) found.push(line);
  }
  return found;
}
