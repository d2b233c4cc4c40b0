import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertFits, assertLabelled, assertNoProblems, assertOnlyRefused, assertRefusedAtField, tabTo } from './helpers/console-session.js';
import { consoleSuite } from './helpers/console-suite.js';

// The Cluster page (issue 39 item 4, issue 34), in a real browser (Debian's chromium) against the real server
// (simulated platform): an administrator sees the live role, peer and state sync, health and the failover history,
// and demotes and promotes the node after a confirmation (a dismissed one changes nothing); edits the virtual
// addresses, health checks and state sync (each 400 shown at its field; edits and deletes carry If-Match, checked
// for the whole file by consoleSuite); an operator and a viewer (no ha:manage) have no Cluster link.

const ADMIN = { username: 'admin', password: 'Cluster-admin-pass1' };
const OPERATOR = { username: 'otto', password: 'Otto-operator-pass1' };
const VIEWER = { username: 'vera', password: 'Vera-viewer-pass1' };

const { skip, admin, signedIn, screenshot } = consoleSuite({
  admin: ADMIN,
  others: [{ ...OPERATOR, role: 'operator' }, { ...VIEWER, role: 'viewer' }],
  async setUp(api) {
    assert.equal((await api('POST', '/cluster/carp', { vhid: 21, virtual_ip: '10.21.0.1', prefix: 24, interface: 'eth0', password: 'pw21' })).status, 201);
    assert.equal((await api('PUT', '/cluster/pfsync', { sync_interface: 'sync0', sync_peer: '10.21.9.2', enabled: true })).status, 200);
    assert.equal((await api('PUT', '/cluster/role', { role: 'primary' })).status, 200);
  },
});

const openCluster = async (page: Page) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Cluster', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Cluster' }).waitFor();
};

const history = (page: Page) => page.getByRole('table', { name: 'Role changes of the last 24 hours' });
/** Waits for the status table to show `setting` with `value`. */
const statusShows = (page: Page, setting: string, value: string) => page.getByRole('table', { name: 'Cluster status' }).getByRole('row', { name: `${setting} ${value}`, exact: true }).waitFor();

test('an administrator sees role, peer, state sync, health and history, and demotes and promotes after a confirmation', { skip, timeout: 240_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openCluster(page);
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
  assertNoProblems(watched, 'Cluster');
});

test('an administrator edits the virtual addresses, health checks and state sync; each refusal is shown at its field', { skip, timeout: 240_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openCluster(page);
  const addresses = page.getByRole('region', { name: 'Virtual addresses' });
  await addresses.getByRole('cell', { name: '10.21.0.1/24', exact: true }).waitFor();

  // a virtual address: the VHID out of range is refused at its field, then one is added by keyboard
  await tabTo(page, 'Add virtual address', 60);
  await page.keyboard.press('Enter');
  const create = addresses.getByRole('form', { name: 'New virtual address' });
  await create.getByLabel('Virtual router id', { exact: true }).fill('300');
  await create.getByLabel('Virtual address', { exact: true }).fill('10.22.0.1');
  await create.getByLabel('Prefix length', { exact: true }).fill('24');
  await create.getByLabel('Interface', { exact: true }).fill('eth1');
  await create.getByLabel('Password', { exact: true }).fill('pw22sec');
  await assertLabelled(page, 'the virtual address form');
  await create.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(create, 'Virtual router id', /body\.vhid must be <= 255/, 'the refused virtual address');
  assertOnlyRefused(watched, ['400 /api/v1/cluster/carp'], 'the refused virtual address');
  await create.getByLabel('Virtual router id', { exact: true }).fill('22');
  await create.getByRole('button', { name: 'Create' }).click();
  await addresses.getByRole('cell', { name: '10.22.0.1/24', exact: true }).waitFor();
  assert.equal((await page.content()).includes('pw22sec'), false, 'the password is never in the page');

  // edited: the stored address changes, the password is kept (never prefilled)
  await addresses.getByRole('row').filter({ hasText: '10.22.0.1/24' }).getByRole('button', { name: 'Edit' }).click();
  const edit = addresses.getByRole('form', { name: 'Edit virtual address' });
  assert.equal(await edit.getByLabel('Password', { exact: true }).inputValue(), '');
  await edit.getByLabel('Virtual address', { exact: true }).fill('10.22.0.5');
  await edit.getByRole('button', { name: 'Save' }).click();
  await addresses.getByRole('cell', { name: '10.22.0.5/24', exact: true }).waitFor();
  const carp = (await admin('GET', '/cluster/carp')).json as { id: string; vhid: number; virtual_ip: string }[];
  assert.deepEqual(carp.map((entry) => `${entry.vhid} ${entry.virtual_ip}`).sort(), ['21 10.21.0.1', '22 10.22.0.5']);

  // a health check: a tcp_port target without a port is refused at Target; then added, run, and deleted
  const checks = page.getByRole('region', { name: 'Health checks' });
  await checks.getByRole('button', { name: 'Add health check' }).click();
  const check = checks.getByRole('form', { name: 'New health check' });
  await check.getByLabel('Name', { exact: true }).fill('gateway');
  await check.getByLabel('Check', { exact: true }).selectOption('tcp_port');
  await check.getByLabel('Target', { exact: true }).fill('10.21.0.254');
  await check.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(check, 'Target', /body\.target must be address:port/, 'the refused health check');
  assertOnlyRefused(watched, ['400 /api/v1/cluster/health'], 'the refused health check');
  await check.getByLabel('Target', { exact: true }).fill('10.21.0.254:443');
  await check.getByRole('button', { name: 'Create' }).click();
  await checks.getByRole('cell', { name: '10.21.0.254:443', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Run the health checks now' }).click();
  await page.getByText('The checks are running').waitFor();
  await page.getByRole('table', { name: 'Health check outcomes' }).getByRole('cell', { name: 'gateway', exact: true }).waitFor();

  // state sync: a peer that is no address is refused at its field, then saved and applied
  const sync = page.getByRole('region', { name: 'State sync' });
  assert.equal(await sync.getByLabel('Sync interface', { exact: true }).inputValue(), 'sync0', 'the form shows what is stored');
  await sync.getByLabel('Peer address', { exact: true }).fill('not a peer');
  await sync.getByRole('button', { name: 'Save' }).click();
  await assertRefusedAtField(sync, 'Peer address', /body\.sync_peer/, 'the refused state sync');
  assertOnlyRefused(watched, ['400 /api/v1/cluster/pfsync'], 'the refused state sync');
  await sync.getByLabel('Peer address', { exact: true }).fill('10.21.9.3');
  await sync.getByRole('button', { name: 'Save' }).click();
  await sync.getByText('State sync: saved and applied.').waitFor();
  await statusShows(page, 'peer (state sync)', '10.21.9.3 on sync0');
  assert.equal((await admin('GET', '/cluster/pfsync')).json.sync_peer, '10.21.9.3');
  await screenshot(page, 'cluster');

  page.once('dialog', (dialog) => void dialog.accept());
  await checks.getByRole('row').filter({ hasText: 'gateway' }).getByRole('button', { name: 'Delete' }).click();
  await checks.getByText('No health check.').waitFor();
  assert.deepEqual((await admin('GET', '/cluster/health')).json, []);
  await assertFits(page, 'Cluster');
  assertNoProblems(watched, 'Cluster');
});

test('without ha:manage (an operator, a viewer) there is no Cluster link', { skip, timeout: 120_000 }, async () => {
  for (const account of [OPERATOR, VIEWER]) {
    const { page } = await signedIn(account);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Dashboard', exact: true }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Cluster', exact: true }).count(), 0, `${account.username}: no Cluster link`);
  }
});
