import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { buildConsole, chromiumSkipReason, launchChromium, openWatchedPage, startConsoleServer, type ConsoleServer, type WatchedPage } from './helpers/console-browser.js';
import { apiAs, signIn, type ApiAnswer } from './helpers/console-session.js';

// The Cluster page (issue 39 item 4), in a real browser (Debian's chromium) against the real server (simulated
// platform): an administrator sees the live role, peer and state sync, health and the failover history, and
// demotes and promotes the node after a confirmation (a dismissed one changes nothing); an operator (no ha:manage)
// has no Cluster link.

const skip = chromiumSkipReason();
const ADMIN = { username: 'admin', password: 'Cluster-admin-pass1' };
const OPERATOR = { username: 'otto', password: 'Otto-operator-pass1' };

let consoleDir: string;
let server: ConsoleServer;
let browser: Browser;
let admin: (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;
const opened: WatchedPage[] = [];

before(async () => {
  if (skip) return;
  consoleDir = await buildConsole();
  server = await startConsoleServer(consoleDir);
  browser = await launchChromium();
  const registered = await fetch(`${server.baseUrl}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  assert.ok(registered.ok, `register: ${registered.status}`);
  admin = await apiAs(server.baseUrl, ADMIN);
  assert.equal((await admin('POST', '/auth/users', { ...OPERATOR, role: 'operator' })).status, 201);
  assert.equal((await admin('POST', '/cluster/carp', { vhid: 21, virtual_ip: '10.21.0.1', prefix: 24, interface: 'eth0', password: 'pw21' })).status, 201);
  assert.equal((await admin('PUT', '/cluster/pfsync', { sync_interface: 'sync0', sync_peer: '10.21.9.2', enabled: true })).status, 200);
  assert.equal((await admin('PUT', '/cluster/role', { role: 'primary' })).status, 200);
});

after(async () => {
  if (skip) return;
  for (const watched of opened) await watched.context.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
  rmSync(consoleDir, { recursive: true, force: true });
  rmSync(server.dataDir, { recursive: true, force: true });
});

async function signedIn(credentials: { username: string; password: string }): Promise<WatchedPage> {
  const watched = await openWatchedPage(browser, server.baseUrl);
  opened.push(watched);
  await signIn(watched.page, credentials.username, credentials.password);
  return watched;
}

const history = (page: Page) => page.getByRole('table', { name: 'Role changes of the last 24 hours' });
/** Waits for the status table to show `setting` with `value`. */
const statusShows = (page: Page, setting: string, value: string) => page.getByRole('table', { name: 'Cluster status' }).getByRole('row', { name: `${setting} ${value}`, exact: true }).waitFor();

test('an administrator sees role, peer, state sync, health and history, and demotes and promotes after a confirmation', { skip, timeout: 240_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Cluster', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Cluster' }).waitFor();
  await history(page).getByRole('cell', { name: 'role_set', exact: true }).waitFor();
  await statusShows(page, 'role', 'primary');
  await statusShows(page, 'peer (state sync)', '10.21.9.2 on sync0');
  await page.getByRole('region', { name: 'Cluster health' }).getByText('No health checks.').waitFor();

  // A dismissed confirmation demotes nothing.
  page.once('dialog', (dialog) => void dialog.dismiss());
  await page.getByRole('button', { name: 'Demote' }).click();
  const afterDismiss = (await admin('GET', '/cluster/failover-history')).json as { cause: string }[];
  assert.ok(!afterDismiss.some((entry) => entry.cause === 'demote'), JSON.stringify(afterDismiss));

  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Demote' }).click();
  await history(page).getByRole('cell', { name: 'demote', exact: true }).waitFor();
  await statusShows(page, 'role', 'secondary');
  await page.getByRole('region', { name: 'Cluster health' }).getByText(/this node is demoted/).waitFor();

  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Promote' }).click();
  await history(page).getByRole('cell', { name: 'promote', exact: true }).waitFor();
  await statusShows(page, 'role', 'primary');
  assert.deepEqual(watched.problems.console, [], 'console errors');
  assert.deepEqual(watched.problems.failedResponses, [], 'failed responses');
});

test('without ha:manage there is no Cluster link', { skip, timeout: 120_000 }, async () => {
  const { page } = await signedIn(OPERATOR);
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Dashboard', exact: true }).waitFor();
  assert.equal(await nav.getByRole('link', { name: 'Cluster', exact: true }).count(), 0);
});
