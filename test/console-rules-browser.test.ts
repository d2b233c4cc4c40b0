import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { SimulatedPacketFilter } from '../src/platform/simulated/packet-filter.js';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { assertLabelled, assertNoProblems, forgetExpectedProblems, openArea, tabTo } from './helpers/console-session.js';
import { systemSkip } from './helpers/system-skip.js';
import { consoleSuite } from './helpers/console-suite.js';

// Bulwark's own strengths on the rules page, in a real browser (Debian's chromium) against the real server:
// "Test a packet" (POST /rules/simulate) with the deciding rule highlighted and NAT shown, the rule analysis'
// findings as badges, and the change-set screen (POST /changes, previewed with ?dry_run=true). Each is tried as
// an operator and as a viewer, by keyboard, at 1280×800 and at a phone's width.

const ADMIN = { username: 'admin', password: 'Rules-admin-pass1' };
const OPERATOR = { username: 'otto', password: 'Otto-operator-pass1' };
const VIEWER = { username: 'vera', password: 'Vera-viewer-pass1' };
const suite = consoleSuite({ admin: ADMIN, others: [{ ...OPERATOR, role: 'operator' }, { ...VIEWER, role: 'viewer' }], setUp: startingRules });
const { skip, admin, signedIn, screenshot } = suite;
const rules: Record<'web' | 'webAgain' | 'rest', string> = { web: '', webAgain: '', rest: '' };

/** The page's document, as far as the functions below (run in the browser) use it. */
declare const document: {
  activeElement: { tagName: string; textContent: string | null; getAttribute(name: string): string | null } | null;
  documentElement: { scrollWidth: number; clientWidth: number };
};

/** A port forward, the rule it serves, the same rule again (shadowed: it can never decide), and a block for the rest. */
async function startingRules(): Promise<void> {
  const nat = await admin('POST', '/nat', { nat_type: 'dnat', interface: 'eth0', protocol: 'tcp', dst_addr: '203.0.113.2', dst_port: '8443', redirect_addr: '192.168.1.10', redirect_port_start: 443, label: 'web' });
  assert.equal(nat.status, 201, JSON.stringify(nat.json));
  const rule = async (body: Record<string, unknown>) => {
    const created = await admin('POST', '/rules', { direction: 'in', interface: 'eth0', protocol: 'tcp', src_addr: 'any', ...body });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    return created.json.id as string;
  };
  rules.web = await rule({ action: 'pass', dst_addr: '192.168.1.10', dst_port_start: 443, dst_port_end: 443, description: 'web server' });
  rules.webAgain = await rule({ action: 'pass', dst_addr: '192.168.1.10', dst_port_start: 443, dst_port_end: 443, description: 'web server again' });
  rules.rest = await rule({ action: 'block', dst_addr: 'any', description: 'block the rest' });
  assert.equal((await admin('POST', '/reload')).status, 200);
}

const rulesTable = (page: Page) => page.getByRole('table', { name: 'Firewall rules' });
const rowOf = (page: Page, description: string) => rulesTable(page).getByRole('row').filter({ has: page.getByRole('cell', { name: description, exact: true }) });

async function openRules(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Rules' }).click();
  await page.getByRole('heading', { level: 1, name: 'Rules' }).waitFor();
  await rulesTable(page).locator('tbody tr').nth(2).waitFor();
}

test('test a packet: the verdict, the deciding rule highlighted in the list, the NAT it went through; the API 400 names the field; by keyboard', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openRules(page);
  const form = page.getByRole('form', { name: 'Test a packet' });
  await assertLabelled(page, 'rules page');

  // by keyboard only: from the Interface field to the Test button
  await form.getByLabel('Interface').focus();
  await page.keyboard.type('eth0');
  await form.getByLabel('Source address').fill('198.51.100.7');
  await form.getByLabel('Destination address').fill('203.0.113.2');
  await form.getByLabel('Destination port').fill('8443');
  await form.getByLabel('Interface').focus();
  await tabTo(page, 'Test');
  await page.keyboard.press('Enter');
  assert.match((await form.getByRole('alert').textContent()) ?? '', /src_port is required for protocol tcp/, 'the API names the field');
  // shown at the field it names: the input is invalid and described by the message
  const sourcePort = form.getByLabel('Source port');
  assert.equal(await sourcePort.getAttribute('aria-invalid'), 'true');
  assert.ok(((await sourcePort.getAttribute('aria-describedby')) ?? '').split(' ').includes((await form.getByRole('alert').getAttribute('id')) ?? '-'), 'the message describes the field');
  forgetExpectedProblems(watched.problems);

  await form.getByLabel('Source port').fill('40000');
  await form.getByRole('button', { name: 'Test' }).click();
  const verdict = page.getByRole('status', { name: 'Verdict' });
  await verdict.waitFor();
  const said = (await verdict.textContent()) ?? '';
  assert.match(said, /Passes, decided by rule #1 "web server"/);
  assert.match(said, /NAT \(dnat\): 198\.51\.100\.7:40000 → 203\.0\.113\.2:8443 becomes 198\.51\.100\.7:40000 → 192\.168\.1\.10:443/);
  assert.match(said, /destination/, 'what the deciding rule matched on');
  // the deciding rule is highlighted in the list, and said so in words
  const deciding = rowOf(page, 'web server');
  assert.match((await deciding.getAttribute('class')) ?? '', /\bdecides\b/);
  assert.match((await deciding.textContent()) ?? '', /decides the test packet/);
  assert.equal(await rulesTable(page).locator('tr.decides').count(), 1, 'only the deciding rule is highlighted');
  assert.match((await rowOf(page, 'block the rest').textContent()) ?? '', /not reached/);
  await screenshot(page, 'test-a-packet', true);

  // another packet: no rule passes it, the block rule decides; no NAT
  await form.getByLabel('Destination port').fill('22');
  await form.getByRole('button', { name: 'Test' }).click();
  await verdict.filter({ hasText: 'Blocked' }).waitFor();
  assert.match((await verdict.textContent()) ?? '', /decided by rule #3 "block the rest".*No NAT rule applied/s);
  assert.match((await rowOf(page, 'block the rest').getAttribute('class')) ?? '', /\bdecides\b/);
  assertNoProblems(watched, 'test a packet');
});

test('the analysis findings are badges on the rules they concern, with the explanation naming the other rule by its number', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openRules(page);
  const shadowed = rowOf(page, 'web server again');
  await shadowed.locator('.badge', { hasText: 'Shadowed' }).waitFor();
  assert.match((await shadowed.locator('.findings').textContent()) ?? '', /never matches: rule #1 is evaluated first and decides every packet it matches/);
  assert.doesNotMatch((await shadowed.locator('.findings').textContent()) ?? '', /[0-9a-f]{8}-[0-9a-f]{4}/, 'no raw ids in the explanation');
  // two identical rules: the first is redundant (the second would decide the same), the second never matches
  const first = rowOf(page, 'web server');
  assert.equal(await first.locator('.badge').textContent(), 'Redundant');
  assert.match((await first.locator('.findings').textContent()) ?? '', /without it, rule #2 decides the same \(pass\)/);
  assert.equal(await rowOf(page, 'block the rest').locator('.badge').count(), 0, 'a rule without findings has no badge');
  assert.equal(await rowOf(page, 'block the rest').getByRole('cell', { name: 'ok', exact: true }).count(), 1);
  const found = (await admin('GET', '/rules/analysis')).json as { never_matches: { rule_id: string }[]; redundant: { rule_id: string }[] };
  assert.deepEqual([found.never_matches.map((n) => n.rule_id), found.redundant.map((r) => r.rule_id)], [[rules.webAgain], [rules.web]], 'the badges are what the API found');
  assertNoProblems(watched, 'analysis badges');
});

// The fixture plugin that reports findings about rules (test/plugin-findings.test.ts): it runs as nobody.
const pluginSkip = skip || systemSkip('running a plugin as nobody', { root: true, users: ['nobody'] });
const FINDINGS_PLUGIN = 'findings-probe';

test('a plugin\'s findings are badges on the rules they name, with the plugin\'s words as text; the plugins page lists them', { skip: pluginSkip }, async () => {
  cpSync(join(import.meta.dirname, 'fixtures', 'plugins', FINDINGS_PLUGIN), join(suite.server.dataDir, 'plugins', FINDINGS_PLUGIN), { recursive: true });
  assert.equal((await admin('POST', '/plugins/toggle', { name: FINDINGS_PLUGIN, enabled: true })).status, 200);
  const detail = '<b>no hit</b> in 90 days';
  assert.equal((await admin('PUT', `/plugins/${FINDINGS_PLUGIN}/config`, { settings: { findings: [{ rule_id: rules.rest, severity: 'warning', detail }] } })).status, 200);
  for (const deadline = Date.now() + 60_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if (((await admin('GET', '/rules/analysis')).json.plugin_findings ?? []).length === 1) break;
    assert.ok(Date.now() < deadline, 'the plugin reported its finding within 60 s');
  }
  try {
    const watched = await signedIn(VIEWER);
    const { page } = watched;
    await openRules(page);
    const rest = rowOf(page, 'block the rest');
    await rest.locator('.badge', { hasText: `${FINDINGS_PLUGIN}: warning` }).waitFor();
    assert.match((await rest.locator('.findings').textContent()) ?? '', /Reported by the plugin findings-probe: <b>no hit<\/b> in 90 days/, 'the explanation, markup kept as text');
    assert.equal(await rest.locator('.findings b').count(), 0, 'never interpreted as markup');

    await openArea(page, 'Plugins');
    const listed = page.getByRole('table', { name: 'Findings from plugins' }).getByRole('row').filter({ hasText: FINDINGS_PLUGIN });
    await listed.getByRole('cell', { name: '#3 block the rest', exact: true }).waitFor();
    await listed.locator('.badge.warn', { hasText: 'warning' }).waitFor();
    assertNoProblems(watched, 'plugin findings');
  } finally {
    assert.equal((await admin('POST', '/plugins/toggle', { name: FINDINGS_PLUGIN, enabled: false })).status, 200);
  }
});

test('a viewer tests a packet and sees the badges, but no write control; on a phone the form is usable without sideways scrolling', { skip }, async () => {
  const watched = await signedIn(VIEWER, { width: 390, height: 844 });
  const { page } = watched;
  await openRules(page);
  await rowOf(page, 'web server again').locator('.badge', { hasText: 'Shadowed' }).waitFor();
  const buttons = (await page.locator('main').getByRole('button').allTextContents()).map((text) => text.trim());
  assert.deepEqual(buttons, ['Test'], 'the only button a viewer gets on the rules page is the packet test');
  const form = page.getByRole('form', { name: 'Test a packet' });
  await form.getByLabel('Interface').fill('eth0');
  await form.getByLabel('Protocol').selectOption('icmp');
  await form.getByLabel('Source address').fill('198.51.100.7');
  await form.getByLabel('Destination address').fill('192.168.1.10');
  await form.getByRole('button', { name: 'Test' }).click();
  // the block rule is tcp only: no rule decides, the default policy does
  await page.getByRole('status', { name: 'Verdict' }).filter({ hasText: 'Passes, decided by the default policy: pass (no rule matched)' }).waitFor();
  assert.equal(await rulesTable(page).locator('tr.decides').count(), 0, 'no rule highlighted');
  const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(width.scroll <= width.client, `no sideways scrolling of the page at 390 px (${width.scroll} > ${width.client})`);
  await screenshot(page, 'test-a-packet-phone');
  assertNoProblems(watched, 'viewer on the rules page');
});

test('hit sparklines: the hits the packet filter counted for a rule are drawn from /metrics/series next to its counter', { skip }, async () => {
  // traffic through the simulated filter: the kernel's counter of the "web server" rule reads 120 packets
  const counters = SimulatedPacketFilter.prototype.counters;
  SimulatedPacketFilter.prototype.counters = async function (this: SimulatedPacketFilter) {
    return (await counters.call(this)).map((counter) => (counter.name === `rule_${rules.web}` ? { ...counter, packets: 120, bytes: 96_000 } : counter));
  };
  try {
    const deadline = Date.now() + 15_000;
    const hitsOfWeb = async () => ((await admin('GET', '/rules')).json as { id: string; hits?: { packets: number } }[]).find((rule) => rule.id === rules.web)?.hits?.packets ?? 0;
    while ((await hitsOfWeb()) < 120) {
      assert.ok(Date.now() < deadline, 'the hit counters sampled the rule');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    SimulatedPacketFilter.prototype.counters = counters;
  }
  const watched = await signedIn(VIEWER);
  const { page } = watched;
  await openRules(page);
  // the minute's point is the mean of the counter samples taken in it (the earlier tests' reads sampled zeros)
  const line = rowOf(page, 'web server').getByRole('img', { name: /^Rule 1's hits over the last hour \(packets per counter sample, by minute\): \d+ points?, peak [1-9]\d*$/ });
  await line.waitFor();
  assert.match((await rowOf(page, 'web server').textContent()) ?? '', /120 packets/, 'the total next to the line is the rule\'s own (GET /rules hits)');
  // a rule the filter counted nothing for has a flat line
  await rowOf(page, 'block the rest').getByRole('img', { name: /^Rule 3's hits .*peak 0$/ }).waitFor();
  await screenshot(page, 'rule-hits');
  assertNoProblems(watched, 'sparklines');
});

test('change set: an operator stages several edits, previews them (nothing written), applies them all at once; a change made meanwhile refuses the set', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openRules(page);
  await page.getByRole('link', { name: /change set/ }).click();
  await page.getByRole('heading', { level: 1, name: 'Change set' }).waitFor();
  const candidates = page.getByRole('table', { name: 'Rules to stage edits of' });
  await candidates.getByRole('cell', { name: 'block the rest', exact: true }).waitFor();
  const staged = page.locator('ol.staged li');

  await page.getByRole('button', { name: 'Stage disabling "web server again"' }).click();
  await staged.filter({ hasText: 'Disable "web server again"' }).waitFor();
  await page.getByRole('button', { name: 'Stage an edit of "block the rest"' }).click();
  const editForm = page.getByRole('form', { name: 'Edit rule' });
  await editForm.getByLabel('Description').fill('block everything else');
  await editForm.getByRole('button', { name: 'Add to change set' }).click();
  await page.getByRole('button', { name: 'Stage a new rule' }).click();
  const newForm = page.getByRole('form', { name: 'New rule' });
  await assertLabelled(page, 'change set with the rule form');
  await newForm.getByLabel('Interface').fill('eth1');
  await newForm.getByLabel('Destination address', { exact: true }).fill('192.168.1.1');
  await newForm.getByLabel('Destination port', { exact: true }).fill('22');
  await newForm.getByLabel('Description').fill('ssh to the firewall');
  await newForm.getByRole('button', { name: 'Add to change set' }).click();
  assert.equal(await staged.count(), 3);
  assert.ok(await page.getByRole('button', { name: 'Apply change set' }).isDisabled(), 'apply only after a preview');

  // the preview, by keyboard: from the last Unstage button to Preview
  await page.getByRole('button', { name: /^Unstage 3/ }).focus();
  await tabTo(page, 'Preview');
  await page.keyboard.press('Enter');
  const previewTable = page.getByRole('table', { name: 'Preview of the change set' });
  await previewTable.waitFor();
  const previewText = (await previewTable.textContent()) ?? '';
  assert.match(previewText, /web server again.*status: active → disabled/s);
  assert.match(previewText, /block everything else.*description: block the rest → block everything else/s);
  assert.match(previewText, /ssh to the firewall.*new rule/s);
  const untouched = (await admin('GET', '/rules')).json as { id: string; status: string }[];
  assert.equal(untouched.length, 3, 'a preview writes nothing');
  assert.equal(untouched.find((rule) => rule.id === rules.webAgain)?.status, 'active');
  await screenshot(page, 'change-set', true);

  await page.getByRole('button', { name: 'Apply change set' }).click();
  await page.getByRole('status').filter({ hasText: 'Change set stored: 3 changes' }).waitFor();
  const stored = (await admin('GET', '/rules')).json as { id: string; status: string; description: string }[];
  assert.deepEqual(stored.map((rule) => [rule.description, rule.status]), [
    ['web server', 'active'], ['web server again', 'disabled'], ['block everything else', 'active'], ['ssh to the firewall', 'active'],
  ]);
  await page.getByRole('region', { name: 'Pending changes' }).waitFor();
  assert.equal(await staged.count(), 0);

  // an edit staged, then the same rule changed by someone else: the whole set is refused, naming the operation
  await page.getByRole('button', { name: 'Stage disabling "web server"' }).click();
  await staged.first().waitFor();
  assert.equal((await admin('PUT', `/rules/${rules.web}`, { description: 'web server (changed elsewhere)' })).status, 200);
  await page.getByRole('button', { name: 'Preview' }).click();
  assert.match((await page.getByRole('alert').textContent()) ?? '', /operations\.0 \(update \/api\/v1\/rules\/.*\).*nothing was changed/);
  forgetExpectedProblems(watched.problems);
  // at a phone's width the screen stays usable: no sideways scrolling of the page, Preview within reach
  await page.setViewportSize({ width: 390, height: 844 });
  const width = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(width.scroll <= width.client, `no sideways scrolling at 390 px (${width.scroll} > ${width.client})`);
  const preview = await page.getByRole('button', { name: 'Preview' }).boundingBox();
  assert.ok(preview && preview.x >= 0 && preview.x + preview.width <= 390, 'Preview is on screen');
  assertNoProblems(watched, 'change set');
});

test('change set: a viewer gets the screen without any control to stage, preview or apply', { skip }, async () => {
  const watched = await signedIn(VIEWER);
  const { page } = watched;
  await openRules(page);
  assert.equal(await page.getByRole('link', { name: /change set/ }).count(), 0, 'no way in from the rules page');
  await page.goto('/rules/changes');
  await page.getByRole('heading', { level: 1, name: 'Change set' }).waitFor();
  await page.getByText('needs the rules:write permission').waitFor();
  assert.deepEqual(await page.locator('main').getByRole('button').allTextContents(), [], 'no button');
  assert.equal(await page.locator('main form').count(), 0, 'no form');
  assertNoProblems(watched, 'viewer on the change set');
});
