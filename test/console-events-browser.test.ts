import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { assertFits, assertLabelled, assertNoProblems, assertOnlyRefused, assertRefusedAtField, buttonsOf, openArea } from './helpers/console-session.js';
import { consoleSuite } from './helpers/console-suite.js';

// The Notifications and Flow export pages (issue 34: "new pages for ... notifications and flow export"), in a real
// browser (Debian's chromium) against the real server (simulated platform): an administrator adds a webhook (the
// API's 400 shown naming url), tests it against a loopback receiver (the answer shown, the receiver got the signed
// POST), routes an event to it (the 400 naming rate_limit_secs shown), is refused deleting a webhook in use, edits
// and deletes the rule; saves flow export (the 400 naming collectors shown) and sees the exporter run. An operator
// (settings:read only) reads both pages with no write control; a viewer (no settings:read) has neither link.
// Assertions (docs/assertions.md): an administrator adds one (the 400 naming source shown), checks every assertion
// now and sees the same result the API stored; a viewer reads the table with no button. The webhook secret is never in the page. 1280×800 and a
// phone's width.

const ADMIN = { username: 'admin', password: 'Events-admin-pass1' };
const OPERATOR = { username: 'otto', password: 'Otto-operator-pass1' };
const VIEWER = { username: 'vera', password: 'Vera-viewer-pass1' };
const SECRET = 'console-ext-hook-secret-42';
const { skip, admin, signedIn } = consoleSuite({ admin: ADMIN, others: [{ ...OPERATOR, role: 'operator' }, { ...VIEWER, role: 'viewer' }] });

const received: IncomingHttpHeaders[] = [];
let receiver: Server;
let receiverPort = 0;

before(async () => {
  if (skip) return;
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received.push(request.headers);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
});

after(async () => {
  // a test that failed midway may leave a kept-alive connection, which close() would wait for
  receiver?.closeAllConnections();
  if (receiver) await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** The page's document, as far as the secret check (run in the browser) uses it. */
declare const document: { body: { innerText: string } };

const secretNotShown = async (page: Page) => assert.ok(!(await page.evaluate(() => document.body.innerText)).includes(SECRET), 'the secret is never shown');

test('an administrator adds, tests and routes a webhook; the API\'s refusals are shown at their form', { skip, timeout: 240_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'Notifications');
  const webhooks = page.getByRole('table', { name: 'Webhooks' });

  await page.getByRole('button', { name: 'Add webhook' }).click();
  const create = page.getByRole('form', { name: 'New webhook' });
  await create.getByLabel('Name', { exact: true }).fill('noc');
  await create.getByLabel('URL', { exact: true }).fill('ftp://127.0.0.1/hook');
  await create.getByLabel('Secret', { exact: true }).fill(SECRET);
  await create.getByLabel('Allowed addresses', { exact: true }).fill('127.0.0.1');
  await assertLabelled(page, 'the webhook form');
  await create.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(create, 'URL', /body\.url/, 'the refused webhook');
  assertOnlyRefused(watched, ['400 /api/v1/notify/webhooks'], 'the refused webhook');
  await create.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${receiverPort}/hook`);
  await create.getByRole('button', { name: 'Create' }).click();
  await webhooks.getByRole('cell', { name: 'noc', exact: true }).waitFor();
  await webhooks.getByRole('cell', { name: 'set', exact: true }).waitFor();
  await secretNotShown(page);

  await page.getByRole('button', { name: 'Test noc' }).click();
  await page.getByRole('region', { name: 'Webhooks' }).getByText(/noc: test notification delivered \(HTTP 204\)/).waitFor();
  assert.equal(received.length, 1, 'the receiver got the test notification');
  assert.match(String(received[0]!['x-bulwark-signature']), /^sha256=[0-9a-f]{64}$/, 'signed with the secret');

  // Route an event to it; a rate limit of 0 is refused naming the field.
  const routing = page.getByRole('region', { name: 'Event routing' });
  await routing.getByRole('button', { name: 'Add rule' }).click();
  const rule = routing.getByRole('form', { name: 'New rule' });
  await rule.getByLabel('Event', { exact: true }).selectOption('gateway_down');
  await rule.getByLabel('E-mail', { exact: true }).check();
  await rule.getByLabel('Webhooks', { exact: true }).fill('noc');
  await rule.getByLabel('Rate limit (seconds)', { exact: true }).fill('0');
  await assertLabelled(page, 'the rule form');
  await rule.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(rule, 'Rate limit (seconds)', /rate_limit_secs/, 'the refused rule');
  assertOnlyRefused(watched, ['400 /api/v1/notify/events'], 'the refused rule');
  await rule.getByLabel('Rate limit (seconds)', { exact: true }).fill('600');
  await rule.getByRole('button', { name: 'Create' }).click();
  const rules = page.getByRole('table', { name: 'Event routing' });
  await rules.getByRole('row', { name: /gateway_down yes noc any 600 s/ }).waitFor();
  const hook = ((await admin('GET', '/notify/webhooks')).json as { id: string }[])[0]!;
  assert.deepEqual((await admin('GET', '/notify/events')).json, [{ event: 'gateway_down', email: true, webhooks: [hook.id], rate_limit_secs: 600 }]);

  // A webhook in use cannot be deleted: the 409 is shown.
  page.once('dialog', (dialog) => void dialog.accept());
  await webhooks.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('region', { name: 'Webhooks' }).getByRole('alert').getByText(/used by \/notify\/events for gateway_down/).waitFor();
  assertOnlyRefused(watched, [`409 /api/v1/notify/webhooks/${hook.id}`], 'the refused delete');

  await rules.getByRole('button', { name: 'Edit' }).click();
  const edit = routing.getByRole('form', { name: 'Edit rule' });
  assert.equal(await edit.getByLabel('Webhooks', { exact: true }).inputValue(), 'noc', 'the rule shows the webhook by name');
  // someone else changes the routing while the form is open: the save is refused (412), nothing is overwritten
  const theirs = [{ event: 'gateway_down', email: true, webhooks: [hook.id], rate_limit_secs: 900 }];
  assert.equal((await admin('PUT', '/notify/events', theirs)).status, 200);
  await edit.getByLabel('Minimum severity', { exact: true }).selectOption('error');
  await edit.getByRole('button', { name: 'Save' }).click();
  await routing.getByRole('alert').getByText(/changed by someone else since it was read; nothing was saved/).waitFor();
  assertOnlyRefused(watched, ['412 /api/v1/notify/events'], 'the stale save');
  assert.deepEqual((await admin('GET', '/notify/events')).json, theirs, 'the stale save changed nothing');
  await rules.getByRole('row', { name: /gateway_down yes noc any 900 s/ }).waitFor();
  await rules.getByRole('button', { name: 'Edit' }).click();
  await edit.getByLabel('Minimum severity', { exact: true }).selectOption('error');
  await edit.getByRole('button', { name: 'Save' }).click();
  await rules.getByRole('row', { name: /gateway_down yes noc error 900 s/ }).waitFor();
  const routingWrites = watched.writes.filter((write) => write.path === '/api/v1/notify/events');
  assert.equal(routingWrites.length, 4, 'the refused and the accepted create, the stale save and the save');
  assert.ok(routingWrites.every((write) => /^"[\w-]{22}"$/.test(write.ifMatch ?? '')), `each carried the list's ETag: ${routingWrites.map((write) => write.ifMatch)}`);
  await assertFits(page, 'Notifications');

  page.once('dialog', (dialog) => void dialog.accept());
  await rules.getByRole('button', { name: 'Delete' }).click();
  await rules.getByText('No event is routed anywhere.').waitFor();
  assert.deepEqual((await admin('GET', '/notify/events')).json, []);
  await secretNotShown(page);
  assertNoProblems(watched, 'Notifications');
});

test('an administrator saves flow export and sees the exporter run; a refused collector is named', { skip, timeout: 180_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'Flow export');
  const form = page.getByRole('form', { name: 'Flow export settings' });
  await form.getByLabel('Enabled', { exact: true }).check();
  await form.getByLabel('Protocol', { exact: true }).selectOption('netflow9');
  await form.getByLabel('Collectors', { exact: true }).fill('not a collector');
  await form.getByLabel('Interfaces', { exact: true }).fill('eth0');
  await form.getByLabel('Sampling (1 in N packets)', { exact: true }).fill('10');
  await assertLabelled(page, 'the flow export form');
  await form.getByRole('button', { name: 'Save' }).click();
  await assertRefusedAtField(form, 'Collectors', /collectors/, 'the refused collector');
  assertOnlyRefused(watched, ['400 /api/v1/settings/flow-export'], 'the refused collector');
  await form.getByLabel('Collectors', { exact: true }).fill('9.9.9.9:2055');
  await form.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Saved and applied.').waitFor();
  const status = page.getByRole('table', { name: 'Exporter status' });
  await status.getByRole('row', { name: 'running yes', exact: true }).waitFor();
  await status.getByRole('row', { name: 'collectors (resolved) 9.9.9.9:2055', exact: true }).waitFor();
  await page.getByRole('table', { name: 'Exporters per interface' }).getByRole('cell', { name: 'eth0', exact: true }).waitFor();
  const stored = (await admin('GET', '/settings/flow-export')).json as { config: Record<string, unknown>; status: { running: boolean } };
  assert.deepEqual([stored.config.enabled, stored.config.protocol, stored.config.sampling, stored.status.running], [true, 'netflow9', 10, true]);
  await assertFits(page, 'Flow export');
  assertNoProblems(watched, 'Flow export');
});

test('an operator (settings:read, not settings:write) reads both pages with no write control, at a phone\'s width too; a viewer has neither link', { skip, timeout: 180_000 }, async () => {
  const created = await admin('POST', '/notify/webhooks', { name: 'ops', url: 'https://hooks.example.org/ops', secret: SECRET });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  assert.equal((await admin('PUT', '/notify/events', [{ event: 'disk_nearly_full', email: false, webhooks: [created.json.id] }])).status, 200);
  const watched = await signedIn(OPERATOR, { width: 390, height: 844 });
  const { page } = watched;
  await page.setViewportSize({ width: 1280, height: 800 });
  await openArea(page, 'Notifications');
  await page.getByRole('table', { name: 'Webhooks' }).getByRole('cell', { name: 'ops', exact: true }).waitFor();
  await page.getByRole('table', { name: 'Event routing' }).getByRole('row', { name: /disk_nearly_full no ops any 300 s/ }).waitFor();
  assert.deepEqual(await buttonsOf(page), [], 'no write control on Notifications');
  await secretNotShown(page);
  await assertFits(page, 'Notifications (viewer)');

  await openArea(page, 'Flow export');
  await page.getByRole('table', { name: 'Flow export settings' }).getByRole('row', { name: /^protocol/ }).waitFor();
  assert.equal(await page.getByRole('form', { name: 'Flow export settings' }).count(), 0, 'no settings form');
  assert.deepEqual(await buttonsOf(page), ['Refresh'], 'only Refresh on Flow export');
  await assertFits(page, 'Flow export (viewer)');
  assertNoProblems(watched, 'operator');

  const viewer = await signedIn(VIEWER);
  const nav = viewer.page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Dashboard', exact: true }).waitFor();
  for (const name of ['Notifications', 'Flow export']) assert.equal(await nav.getByRole('link', { name, exact: true }).count(), 0, `no ${name} link without settings:read`);
});

test('assertions: an administrator adds one (the 400 names source), checks them all now and sees the result; a viewer reads only', { skip, timeout: 200_000 }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'Assertions');
  await page.getByRole('button', { name: 'Add assertion' }).click();
  const create = page.getByRole('form', { name: 'New assertion' });
  await create.getByLabel('Name', { exact: true }).fill('lan reaches web');
  await create.getByLabel('Entering on', { exact: true }).fill('eth0');
  await create.getByLabel('Protocol', { exact: true }).selectOption('tcp');
  await create.getByLabel('Source', { exact: true }).fill('not an address');
  await create.getByLabel('Destination', { exact: true }).fill('10.44.1.10');
  await create.getByLabel('Port', { exact: true }).fill('80');
  await assertLabelled(page, 'the assertion form');
  await create.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(create, 'Source', /source/, 'the refused assertion');
  assertOnlyRefused(watched, ['400 /api/v1/assertions'], 'the refused assertion');
  await create.getByLabel('Source', { exact: true }).fill('10.44.0.2');
  await create.getByRole('button', { name: 'Create' }).click();
  const table = page.getByRole('table', { name: 'Assertions' });
  await table.getByRole('cell', { name: 'tcp 10.44.0.2 → 10.44.1.10:80 in on eth0', exact: true }).waitFor();

  await page.getByRole('button', { name: 'Check every assertion now' }).click();
  const judged = (await admin('GET', '/assertions')).json as { name: string; last_result: { holds: boolean; outcome: string; expect: string } }[];
  const result = judged[0]!.last_result;
  assert.ok(result, 'the check stored a result');
  const shown = `${result.holds ? 'holds' : 'BROKEN'} (${result.outcome}, expects ${result.expect}`;
  await page.getByRole('region', { name: 'Check now' }).getByText(`1 judged, ${result.holds ? 0 : 1} broken.`).waitFor();
  await page.getByRole('table', { name: 'Results of the check' }).getByRole('cell', { name: new RegExp(`^${shown.replace(/[()]/g, '\\$&')}`) }).waitFor();
  await table.getByRole('cell', { name: new RegExp(`^${shown.replace(/[()]/g, '\\$&')}`) }).waitFor();
  await assertFits(page, 'Assertions');
  assertNoProblems(watched, 'Assertions');

  const viewer = await signedIn(VIEWER, { width: 390, height: 844 });
  await openArea(viewer.page, 'Assertions');
  await viewer.page.getByRole('table', { name: 'Assertions' }).getByRole('cell', { name: 'lan reaches web', exact: true }).waitFor();
  assert.deepEqual(await buttonsOf(viewer.page), [], 'no write control for a viewer');
  await assertFits(viewer.page, 'Assertions (viewer)');
  assertNoProblems(viewer, 'Assertions (viewer)');
});
