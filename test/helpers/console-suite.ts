import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { buildConsole, chromiumSkipReason, launchChromium, openWatchedPage, startConsoleServer, UNCONDITIONAL_ON_PURPOSE, unconditionalWrites, type ConsoleServer, type WatchedPage } from './console-browser.js';
import { apiAs, signIn, type ApiAnswer } from './console-session.js';

export interface Credentials {
  username: string;
  password: string;
}

export interface ConsoleSuite {
  /** The skip reason of every test of the file (no chromium), or false. */
  readonly skip: string | false;
  readonly server: ConsoleServer;
  /** The API as the administrator (setting up and checking, not what the browser does). */
  admin(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  /** A fresh browser context signed in through the console's form, closed when the file's tests end. */
  signedIn(credentials: Credentials, viewport?: { width: number; height: number }): Promise<WatchedPage>;
  /** Keeps a picture of the page when BULWARK_CONSOLE_SCREENSHOTS names a directory (docs/console/*.png). */
  screenshot(page: Page, name: string, fullPage?: boolean): Promise<void>;
}

/**
 * One console browser test file's world: the console built from web/, the real server with an administrator and
 * the other accounts given (role by role), and chromium; all of it started before the file's tests and removed
 * after them.
 */
export function consoleSuite(accounts: {
  admin: Credentials;
  others?: readonly (Credentials & { role: string })[];
  /** What the file's tests start from, made through the API once the accounts exist (a second root `before` may run first). */
  setUp?: (admin: ConsoleSuite['admin']) => Promise<void>;
}): ConsoleSuite {
  const skip = chromiumSkipReason();
  const screenshots = process.env.BULWARK_CONSOLE_SCREENSHOTS;
  const opened: WatchedPage[] = [];
  let consoleDir: string;
  let server: ConsoleServer;
  let browser: Browser;
  let admin: ConsoleSuite['admin'];

  before(async () => {
    if (skip) return;
    consoleDir = await buildConsole();
    server = await startConsoleServer(consoleDir);
    browser = await launchChromium();
    if (screenshots) mkdirSync(screenshots, { recursive: true });
    const registered = await fetch(`${server.baseUrl}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(accounts.admin) });
    assert.ok(registered.ok, `register: ${registered.status}`);
    admin = await apiAs(server.baseUrl, accounts.admin);
    for (const account of accounts.others ?? []) assert.equal((await admin('POST', '/auth/users', account)).status, 201, `account ${account.username}`);
    await accounts.setUp?.(admin);
  });

  after(async () => {
    if (skip) return;
    // every write of every page this file opened carried the ETag it was read with, where the API takes one
    const unconditional = await unconditionalWrites(server.baseUrl, opened.flatMap((watched) => watched.writes), UNCONDITIONAL_ON_PURPOSE);
    for (const watched of opened) await watched.context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
    rmSync(consoleDir, { recursive: true, force: true });
    rmSync(server.dataDir, { recursive: true, force: true });
    assert.deepEqual(unconditional, [], 'writes sent without the If-Match the API takes');
  });

  return {
    skip,
    get server() {
      return server;
    },
    admin: (method, path, body) => admin(method, path, body),
    async signedIn(credentials, viewport = { width: 1280, height: 800 }) {
      const watched = await openWatchedPage(browser, server.baseUrl);
      opened.push(watched);
      await watched.page.setViewportSize(viewport);
      await signIn(watched.page, credentials.username, credentials.password);
      return watched;
    },
    async screenshot(page, name, fullPage = false) {
      if (screenshots) await page.screenshot({ path: `${screenshots}/${name}.png`, fullPage });
    },
  };
}
