import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFits, assertLabelled, assertNoProblems, assertOnlyRefused, assertRefusedAtField, buttonsOf, openArea } from './helpers/console-session.js';
import { consoleSuite } from './helpers/console-suite.js';

// The operations of a day on the firewall that had no page before (issue 34 item 4, the list NOT_YET_IN_CONSOLE of
// test/console-api-only.ts emptied): multi-WAN preview, apply and flows; reboot and shutdown behind a confirmation;
// interface detail; DNS statistics and custom blocks; IDS suppressions and AI analysis; DHCP failover and DDNS;
// reverse-proxy TCP/UDP/TLS; ACME DNS providers and export targets; settings sections; third-party import. In a real
// browser (Debian's chromium) against the real server: each control calls the API as the signed-in account, shows
// the API's refusal naming the field, and is offered only to a role holding its permission.

const ADMIN = { username: 'admin', password: 'Ops-admin-pass1' };
const OPERATOR = { username: 'otto', password: 'Otto-operator-pass1' };
const VIEWER = { username: 'vera', password: 'Vera-viewer-pass1' };
const { skip, admin, signedIn, screenshot } = consoleSuite({ admin: ADMIN, others: [{ ...OPERATOR, role: 'operator' }, { ...VIEWER, role: 'viewer' }] });

test('multi-WAN: an operator adds a policy (the 400 names target_id), previews another, applies, moves its flows and adds a route leak; routing tables are the administrator\'s', { skip }, async () => {
  const instance = ((await admin('GET', '/multiwan/instances')).json as { id: string }[])[0]!.id;
  const gateway = await admin('POST', '/multiwan/gateways', { name: 'wan1', instance_id: instance, interface: 'eth0', next_hop: '203.0.113.1' });
  assert.equal(gateway.status, 201, JSON.stringify(gateway.json));
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'Multi-WAN');

  await page.getByRole('button', { name: 'Add policy' }).click();
  const create = page.getByRole('form', { name: 'New policy' });
  await create.getByLabel('Name', { exact: true }).fill('web via wan1');
  await create.getByLabel('Priority', { exact: true }).fill('10');
  await create.getByLabel('Target id', { exact: true }).fill('not-an-id');
  await create.getByLabel('Protocol', { exact: true }).selectOption('tcp');
  await create.getByLabel('Destination port', { exact: true }).fill('443');
  await create.getByLabel('Arriving on', { exact: true }).fill('eth1');
  await assertLabelled(page, 'multi-WAN with the policy form open');
  await create.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(create, 'Target id', /target_id/, 'the refused policy');
  assertOnlyRefused(watched, ['400 /api/v1/multiwan/policies'], 'the refused policy');
  await create.getByLabel('Target id', { exact: true }).fill(gateway.json.id);
  await create.getByRole('button', { name: 'Create' }).click();
  const policies = page.getByRole('table', { name: 'Policies' });
  await policies.getByRole('cell', { name: 'web via wan1' }).waitFor();

  const panel = page.getByRole('region', { name: 'Preview and apply' });
  const proposed = panel.getByRole('form', { name: 'Proposed policy' });
  await proposed.getByLabel('Name', { exact: true }).fill('dns via wan1');
  await proposed.getByLabel('Priority', { exact: true }).fill('20');
  await proposed.getByLabel('Target id', { exact: true }).fill(gateway.json.id);
  await proposed.getByLabel('Protocol', { exact: true }).selectOption('udp');
  await proposed.getByLabel('Destination port', { exact: true }).fill('53');
  await proposed.getByLabel('Arriving on', { exact: true }).fill('eth1');
  await proposed.getByRole('button', { name: 'Preview' }).click();
  const result = panel.getByRole('region', { name: 'Preview result' });
  await result.waitFor();
  const load = (await result.locator('details').allTextContents()).join('\n');
  assert.match(load, /port 443 route-to \(eth0 203\.0\.113\.1\)/, `the stored policy is in what Apply would load: ${load}`);
  assert.match(load, /proto udp .*port 53 route-to/, 'and so is the proposed one');
  assert.deepEqual(((await admin('GET', '/multiwan/policies')).json as { name: string }[]).map((p) => p.name), ['web via wan1'], 'the preview stored nothing');
  await result.scrollIntoViewIfNeeded();
  await screenshot(page, 'multiwan-preview');
  await assertFits(page, 'multi-WAN with a preview shown');

  await panel.getByRole('button', { name: 'Apply policies' }).click();
  await panel.getByRole('status').filter({ hasText: /\(\d+ rules\)/ }).waitFor();
  await policies.getByRole('row').filter({ hasText: 'web via wan1' }).getByRole('button', { name: 'Move its flows' }).click();
  await page.getByRole('region', { name: 'Policies' }).getByRole('status').filter({ hasText: /web via wan1: \d+ flow\(s\) moved to the current route/ }).waitFor();
  await page.getByRole('table', { name: 'Live flows' }).waitFor();

  await page.getByRole('button', { name: 'Add route leak' }).click();
  const leak = page.getByRole('form', { name: 'New route leak' });
  await leak.getByLabel('Name', { exact: true }).fill('lan-from-all');
  await leak.getByLabel('From instance id', { exact: true }).fill(instance);
  await leak.getByLabel('To instance id', { exact: true }).fill(instance);
  await leak.getByLabel('Prefix', { exact: true }).fill('192.168.1.0/24');
  await leak.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'Route leaks' }).getByRole('cell', { name: 'lan-from-all' }).waitFor();
  assert.equal(await page.getByRole('region', { name: 'More routing tables' }).count(), 0, 'system:reboot is not an operator\'s');
  assertNoProblems(watched, 'multi-WAN as operator');

  const administrator = await signedIn(ADMIN);
  await openArea(administrator.page, 'Multi-WAN');
  const tables = administrator.page.getByRole('region', { name: 'More routing tables' });
  await tables.getByLabel('Routing tables', { exact: true }).fill('32');
  await tables.getByRole('button', { name: 'Make available' }).click();
  await tables.getByRole('status').filter({ hasText: '32 routing tables enabled' }).waitFor();
  assert.equal((await admin('GET', '/multiwan/fibs')).json.net_fibs, 32);
  assertNoProblems(administrator, 'multi-WAN as administrator');

  const viewer = await signedIn(VIEWER);
  await openArea(viewer.page, 'Multi-WAN');
  await viewer.page.getByRole('table', { name: 'Policies' }).getByRole('cell', { name: 'web via wan1' }).waitFor();
  assert.deepEqual(await buttonsOf(viewer.page), [], 'no write control for a viewer');
  assertNoProblems(viewer, 'multi-WAN as viewer');
});

test('power: an administrator reboots and shuts down only after confirming (Cancel does nothing); an operator is offered neither', { skip }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'System');
  const power = page.getByRole('region', { name: 'Power' });
  await power.getByRole('button', { name: 'Reboot…' }).click();
  const confirmReboot = power.getByRole('group', { name: 'Confirm: Reboot' });
  await confirmReboot.getByText(/restarts in 10 seconds/).waitFor();
  await screenshot(page, 'power-confirm');
  // by keyboard: asking puts the focus on Cancel, so Enter there does nothing drastic
  assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document.activeElement?.textContent), 'Cancel');
  await page.keyboard.press('Enter');
  await confirmReboot.waitFor({ state: 'detached' });
  const actions = async () => ((await admin('GET', '/updates/history')).json as { action: string }[]).map((entry) => entry.action);
  assert.deepEqual(await actions(), [], 'asking is not doing');

  await power.getByRole('button', { name: 'Reboot…' }).click();
  await confirmReboot.getByRole('button', { name: 'Reboot now' }).click();
  await power.getByRole('status').filter({ hasText: /rebooting in 10 seconds/ }).waitFor();
  await power.getByRole('button', { name: 'Shut down…' }).click();
  await power.getByRole('group', { name: 'Confirm: Shut down' }).getByRole('button', { name: 'Shut down now' }).click();
  await power.getByRole('status').filter({ hasText: /shut/i }).waitFor();
  assert.deepEqual((await actions()).sort(), ['reboot', 'shutdown'], 'each was requested once, through the API');
  assertNoProblems(watched, 'power as administrator');

  const operator = await signedIn(OPERATOR);
  await openArea(operator.page, 'System');
  await operator.page.getByRole('region', { name: 'System information' }).waitFor();
  assert.equal(await operator.page.getByRole('region', { name: 'Power' }).count(), 0, 'system:reboot is not an operator\'s');
  assertNoProblems(operator, 'System as operator');
});

test('networking: an operator edits an interface from its detail row (the 400 names mtu), gives it a role, and reads the kernel routing table', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'Networking');
  const interfaces = page.getByRole('table', { name: 'Interfaces' });
  const eth1 = interfaces.getByRole('row').filter({ hasText: '02:42:ac:11:00:03' });
  await eth1.getByRole('cell', { name: '192.168.1.1/24 (static)' }).waitFor();
  await eth1.getByRole('button', { name: 'Edit' }).click();
  const form = page.getByRole('form', { name: 'Edit interface' });
  assert.equal(await form.getByLabel('IPv4 address', { exact: true }).inputValue(), '192.168.1.1/24', 'the form shows the interface as read');
  await form.getByLabel('MTU', { exact: true }).fill('50');
  await form.getByRole('button', { name: 'Save' }).click();
  await assertRefusedAtField(form, 'MTU', /mtu/, 'the refused interface edit');
  assertOnlyRefused(watched, ['400 /api/v1/interfaces/config/eth1'], 'the refused MTU');
  await form.getByLabel('MTU', { exact: true }).fill('1400');
  await form.getByLabel('Description', { exact: true }).fill('office LAN');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.waitFor({ state: 'detached' });
  await eth1.getByRole('cell', { name: 'office LAN' }).waitFor();
  const stored = (await admin('GET', '/interfaces/config/eth1')).json;
  assert.deepEqual([stored.mtu, stored.description], [1400, 'office LAN']);

  const role = page.getByRole('region', { name: 'Interface role' });
  await role.getByLabel('Interface', { exact: true }).fill('eth1');
  await role.getByLabel('Role', { exact: true }).fill('lan');
  await role.getByRole('button', { name: 'Set role' }).click();
  await page.getByRole('table', { name: 'Interface roles' }).getByRole('row').filter({ hasText: 'eth1' }).getByRole('cell', { name: 'lan' }).waitFor();
  await page.getByRole('table', { name: 'Routing table' }).getByRole('cell', { name: 'default' }).waitFor();
  assertNoProblems(watched, 'networking as operator');
});

test('DNS: an operator blocks a name and allows another (a bad name is refused by field), reads the statistics and sets the appliance\'s nameservers', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'DNS');
  await page.getByRole('table', { name: 'Resolver statistics' }).getByRole('row').filter({ hasText: 'Cache hit rate' }).waitFor();
  await page.getByRole('button', { name: 'Add custom block' }).click();
  const block = page.getByRole('form', { name: 'New custom block' });
  await block.getByLabel('Domain', { exact: true }).fill('bad name!');
  await block.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(block, 'Domain', /body\.pattern/, 'the refused custom block');
  assertOnlyRefused(watched, ['400 /api/v1/dns/customblocks'], 'the refused name');
  await block.getByLabel('Domain', { exact: true }).fill('*.ads.example.org');
  await block.getByLabel('Note', { exact: true }).fill('ad network');
  await block.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'Custom blocks' }).getByRole('cell', { name: '*.ads.example.org' }).waitFor();
  await page.getByRole('button', { name: 'Add allowed name' }).click();
  const allow = page.getByRole('form', { name: 'New allowed name' });
  await allow.getByLabel('Domain', { exact: true }).fill('cdn.example.org');
  await allow.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'Allowed names' }).getByRole('cell', { name: 'cdn.example.org' }).waitFor();
  assert.deepEqual(((await admin('GET', '/dns/customblocks')).json as { pattern: string }[]).map((entry) => entry.pattern), ['*.ads.example.org']);
  assert.deepEqual(((await admin('GET', '/dns/whitelist')).json as { pattern: string }[]).map((entry) => entry.pattern), ['cdn.example.org']);
  page.on('dialog', (dialog) => void dialog.accept());
  await page.getByRole('table', { name: 'Allowed names' }).getByRole('row').filter({ hasText: 'cdn.example.org' }).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('table', { name: 'Allowed names' }).getByRole('cell', { name: 'cdn.example.org' }).waitFor({ state: 'detached' });

  const nameservers = page.getByRole('region', { name: "The appliance's own nameservers" });
  await nameservers.getByLabel('Nameservers', { exact: true }).fill('192.0.2.53\n192.0.2.54');
  await nameservers.getByRole('button', { name: 'Save' }).click();
  await nameservers.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  assert.deepEqual((await admin('GET', '/dns')).json.servers, ['192.0.2.53', '192.0.2.54']);
  assertNoProblems(watched, 'DNS as operator');
});

test('IDS: an operator suppresses a signature (the 400 names sid) and runs the AI analysis into the audit log; the alert store is the administrator\'s', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'IDS');
  await page.getByRole('button', { name: 'Add suppression' }).click();
  const form = page.getByRole('form', { name: 'New suppression' });
  await form.getByLabel('Signature id', { exact: true }).fill('0');
  await form.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(form, 'Signature id', /body\.sid/, 'the refused suppression');
  assertOnlyRefused(watched, ['400 /api/v1/ids/suppressions'], 'the refused suppression');
  await form.getByLabel('Signature id', { exact: true }).fill('2010935');
  await form.getByLabel('Matching', { exact: true }).selectOption('src');
  await form.getByLabel('Address', { exact: true }).fill('192.0.2.0/24');
  await form.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'Suppressions' }).getByRole('cell', { name: '192.0.2.0/24' }).waitFor();
  assert.deepEqual(((await admin('GET', '/ids/suppressions')).json as { sid: number; ip_cidr: string }[]).map((s) => [s.sid, s.ip_cidr]), [[2010935, '192.0.2.0/24']]);

  const ai = page.getByRole('region', { name: 'AI analysis' });
  await ai.getByRole('button', { name: 'Analyse now' }).click();
  await ai.getByRole('status').waitFor();
  await ai.getByRole('table', { name: 'Detections' }).waitFor();
  await page.getByRole('region', { name: 'Alert store' }).getByText('Changing these settings needs the settings:write permission.').waitFor();
  assertNoProblems(watched, 'IDS as operator');

  const administrator = await signedIn(ADMIN);
  await openArea(administrator.page, 'IDS');
  const store = administrator.page.getByRole('region', { name: 'Alert store' });
  await store.getByLabel('Largest size (MB)', { exact: true }).fill('128');
  await store.getByRole('button', { name: 'Save' }).click();
  await store.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  assert.equal((await admin('GET', '/settings/ids-alerts')).json.max_mb, 128);
  assertNoProblems(administrator, 'IDS as administrator');
});

/** base64, as tsig-keygen prints a secret (the API refuses anything else). */
const TSIG_SECRET = Buffer.from('Tsig-secret-never-shown-4').toString('base64');

test('DHCP: an operator sets up failover and DDNS registration; the TSIG secret is sent once and never shown; the server metrics are readable', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  const puts: string[] = [];
  page.on('request', (request) => request.method() === 'PUT' && new URL(request.url()).pathname === '/api/v1/dhcp/ddns' && puts.push(request.postData() ?? ''));
  await openArea(page, 'DHCP');
  const failover = page.getByRole('region', { name: 'Failover', exact: true });
  await failover.getByLabel('Mode', { exact: true }).selectOption('hot-standby');
  await failover.getByLabel('Listen on', { exact: true }).fill('192.0.2.1:8000');
  await failover.getByLabel('Partner', { exact: true }).fill('192.0.2.2:8000');
  await failover.getByRole('button', { name: 'Save' }).click();
  await failover.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  const ha = (await admin('GET', '/dhcp/ha/config')).json;
  assert.deepEqual([ha.mode, ha.peer, ha.listen], ['hot-standby', '192.0.2.2:8000', '192.0.2.1:8000']);

  const ddns = page.getByRole('region', { name: 'Dynamic DNS registration' });
  await ddns.getByLabel('Register leases in DNS', { exact: true }).check();
  await ddns.getByLabel('Forward zone', { exact: true }).fill('lan.example.org');
  await ddns.getByLabel('DNS server', { exact: true }).fill('192.0.2.53');
  await ddns.getByLabel('TSIG key name', { exact: true }).fill('dhcp-update');
  await ddns.getByLabel('TSIG secret', { exact: true }).fill(TSIG_SECRET);
  await ddns.getByRole('button', { name: 'Save' }).click();
  await ddns.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  const stored = (await admin('GET', '/dhcp/ddns')).json;
  assert.deepEqual([stored.enabled, stored.forward_zone, stored.tsig_secret_set], [true, 'lan.example.org', true]);
  assert.equal(JSON.parse(puts[0] ?? '{}').tsig_secret, TSIG_SECRET, 'the typed secret was sent');
  assert.equal(await ddns.getByLabel('TSIG secret', { exact: true }).inputValue(), '', 'and is not kept in the form');
  assert.equal((await page.content()).includes(TSIG_SECRET), false, 'no secret in the page');
  assert.match((await page.getByRole('region', { name: 'Server metrics (Prometheus)' }).locator('pre').textContent()) ?? '', /bulwark_dhcp4_up/);
  await page.getByRole('region', { name: 'Failover status' }).getByRole('table').locator('tbody tr').first().waitFor();
  assertNoProblems(watched, 'DHCP as operator');
});

test('reverse proxy: an operator adds a TCP service and its router, a TLS option set and a middleware (bad JSON is refused by field), then checks the configuration', { skip }, async () => {
  // the backend is a documentation address: the administrator allows it for outbound use first (the outbound guard)
  assert.equal((await admin('PUT', '/settings/outbound', { allowed_addresses: ['192.0.2.5'] })).status, 200);
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'Reverse proxy');
  await page.getByRole('button', { name: 'Add TCP service' }).click();
  const service = page.getByRole('form', { name: 'New TCP service' });
  await service.getByLabel('Name', { exact: true }).fill('postgres');
  await service.getByLabel('Configuration (JSON)', { exact: true }).fill('{not json');
  await service.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(service, 'Configuration (JSON)', /body\.config_json/, 'the refused TCP service');
  assertOnlyRefused(watched, ['400 /api/v1/reverse-proxy/tcp/services'], 'the refused TCP service');
  await service.getByLabel('Configuration (JSON)', { exact: true }).fill('{"servers":[{"address":"192.0.2.5:5432"}]}');
  await service.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'TCP services' }).getByRole('cell', { name: 'postgres', exact: true }).waitFor();

  await page.getByRole('button', { name: 'Add TCP router' }).click();
  const router = page.getByRole('form', { name: 'New TCP router' });
  await assertLabelled(page, 'reverse proxy with the TCP router form open');
  await router.getByLabel('Name', { exact: true }).fill('postgres-in');
  await router.getByLabel('Rule', { exact: true }).fill('HostSNI(`*`)');
  await router.getByLabel('Service', { exact: true }).fill('postgres');
  await router.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'TCP routers' }).getByRole('cell', { name: 'postgres-in', exact: true }).waitFor();

  await page.getByRole('button', { name: 'Add TLS option set' }).click();
  const options = page.getByRole('form', { name: 'New TLS option set' });
  await options.getByLabel('Name', { exact: true }).fill('modern');
  await options.getByLabel('Options (JSON)', { exact: true }).fill('{"minVersion":"VersionTLS13"}');
  await options.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'TLS options' }).getByRole('cell', { name: 'modern', exact: true }).waitFor();

  await page.getByRole('button', { name: 'Add HTTP middleware' }).click();
  const middleware = page.getByRole('form', { name: 'New HTTP middleware' });
  await middleware.getByLabel('Name', { exact: true }).fill('limit');
  await middleware.getByLabel('Type', { exact: true }).selectOption('rateLimit');
  await middleware.getByLabel('Configuration (JSON)', { exact: true }).fill('{"average":100,"burst":50}');
  await middleware.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('table', { name: 'HTTP middlewares' }).getByRole('cell', { name: 'limit', exact: true }).waitFor();
  const routers = (await admin('GET', '/reverse-proxy/tcp/routers')).json as { name: string; service: string }[];
  assert.deepEqual(routers.map((r) => [r.name, r.service]), [['postgres-in', 'postgres']]);

  const control = page.getByRole('region', { name: 'Proxy control' });
  await control.getByRole('button', { name: 'Check proxy configuration' }).click();
  await control.getByRole('status').filter({ hasText: 'Configuration valid.' }).waitFor();
  await page.getByRole('region', { name: 'TCP routers' }).scrollIntoViewIfNeeded();
  await screenshot(page, 'reverse-proxy');
  await assertFits(page, 'reverse proxy');
  assertNoProblems(watched, 'reverse proxy as operator');
});

test('certificates: an administrator adds a DNS provider and tests it, and an export target to an ACME certificate (the 400 names the field)', { skip }, async () => {
  const certificate = await admin('POST', '/acme/certs', { common_name: 'www.example.org', challenge_type: 'http-01' });
  assert.equal(certificate.status, 201, JSON.stringify(certificate.json));
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'Certificates');
  await page.getByRole('button', { name: 'Add DNS provider' }).click();
  const provider = page.getByRole('form', { name: 'New DNS provider' });
  await provider.getByLabel('Name', { exact: true }).fill('by hand');
  await provider.getByLabel('Provider', { exact: true }).selectOption('manual');
  await provider.getByLabel('Zone', { exact: true }).fill('example.org');
  await provider.getByRole('button', { name: 'Create' }).click();
  const providers = page.getByRole('table', { name: 'DNS providers' });
  await providers.getByRole('row').filter({ hasText: 'by hand' }).getByRole('button', { name: 'Test' }).click();
  await page.getByRole('region', { name: 'DNS providers' }).getByRole('status').filter({ hasText: 'by hand: manual provider' }).waitFor();

  await page.getByRole('table', { name: 'ACME certificates' }).getByRole('row').filter({ hasText: 'www.example.org' }).getByRole('button', { name: 'Export targets' }).click();
  const targets = page.getByRole('region', { name: 'Export targets of www.example.org' });
  await targets.getByRole('button', { name: 'Add export target' }).click();
  const target = targets.getByRole('form', { name: 'New export target' });
  await target.getByLabel('Export to', { exact: true }).selectOption('webhook');
  await target.getByLabel('Settings (JSON)', { exact: true }).fill('"just text"');
  await target.getByRole('button', { name: 'Create' }).click();
  await assertRefusedAtField(target, 'Settings (JSON)', /body\.config/, 'the refused export target');
  assertOnlyRefused(watched, [`400 /api/v1/acme/certs/${certificate.json.id}/targets`], 'the refused export target');
  await target.getByLabel('Settings (JSON)', { exact: true }).fill('{"url":"https://hooks.example.org/cert"}');
  await target.getByRole('button', { name: 'Create' }).click();
  await targets.getByRole('cell', { name: '{"url":"https://hooks.example.org/cert"}' }).waitFor();
  const stored = (await admin('GET', `/acme/certs/${certificate.json.id}/targets`)).json as { kind: string; config: unknown }[];
  assert.deepEqual(stored.map((t) => [t.kind, t.config]), [['webhook', { url: 'https://hooks.example.org/cert' }]], 'the settings travel as an object, not a string');
  assertNoProblems(watched, 'certificates as administrator');
});

test('System and Logs: an administrator picks the time zone from the list, tunes the state table, and rotates a log now', { skip }, async () => {
  const watched = await signedIn(ADMIN);
  const { page } = watched;
  await openArea(page, 'System');
  const sections = page.getByRole('navigation', { name: 'System sections' });
  await sections.getByRole('link', { name: 'Host and access' }).click();
  assert.equal(new URL(page.url()).pathname, '/system/access', 'each section has its own address');
  const general = page.getByRole('region', { name: 'General', exact: true });
  await general.getByLabel('Time zone', { exact: true }).selectOption('Europe/Berlin');
  await general.getByRole('button', { name: 'Save' }).click();
  await general.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  assert.equal((await admin('GET', '/system/general')).json.timezone, 'Europe/Berlin');
  await sections.getByRole('link', { name: 'Banner, console and tuning' }).click();
  const tuning = page.getByRole('region', { name: 'Packet filter tuning' });
  // The section's form fills in once its GET answers: read the field only after it holds a value.
  const stateTableSize = tuning.getByLabel('State table size', { exact: true });
  for (const deadline = Date.now() + 15_000; (await stateTableSize.inputValue()) === '' && Date.now() < deadline;) await page.waitForTimeout(100);
  assert.equal(await stateTableSize.inputValue(), '100000');
  await tuning.getByLabel('State table size', { exact: true }).fill('200000');
  await tuning.getByRole('button', { name: 'Save' }).click();
  await tuning.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  assert.equal((await admin('GET', '/settings/pf-tuning')).json.configured_max_states, 200000);
  // a section's address opens it directly; an unknown one is not found
  await page.goto('/system/ai');
  await page.getByRole('region', { name: 'AI threat analysis' }).waitFor();
  await page.goto('/system/no-such-section');
  await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();

  await openArea(page, 'Logs');
  await page.getByRole('region', { name: 'DNS queries, live' }).getByRole('status').filter({ hasText: /queries answered/ }).waitFor();
  const managed = page.getByRole('table', { name: 'Managed logs' });
  await managed.getByRole('row').filter({ hasText: 'audit' }).getByRole('button', { name: 'Rotate now' }).click();
  await page.getByRole('region', { name: 'Managed logs' }).getByRole('status').filter({ hasText: /^audit: / }).waitFor();
  const rotation = page.getByRole('region', { name: 'Log rotation' });
  await rotation.getByLabel('Rotated files kept', { exact: true }).fill('3');
  await rotation.getByRole('button', { name: 'Save' }).click();
  await rotation.getByRole('status').filter({ hasText: 'saved' }).waitFor();
  assert.equal((await admin('GET', '/settings/log-rotation')).json.config.keep, 3);
  assertNoProblems(watched, 'System and Logs as administrator');
});

const OPNSENSE_XML = `<?xml version="1.0"?>
<opnsense>
  <version>24.1</version>
  <system><hostname>branch-fw</hostname><domain>example.org</domain></system>
  <interfaces>
    <lan><if>em1</if><ipaddr>192.168.7.1</ipaddr><subnet>24</subnet></lan>
  </interfaces>
  <filter>
    <rule><type>pass</type><interface>lan</interface><protocol>tcp</protocol><source><any/></source><destination><any/><port>443</port></destination><descr>web out</descr></rule>
  </filter>
</opnsense>`;

test('third-party import: an operator previews an OPNsense config.xml with its interface map, then imports it as a pending change', { skip }, async () => {
  const watched = await signedIn(OPERATOR);
  const { page } = watched;
  await openArea(page, 'Configuration');
  const panel = page.getByRole('region', { name: 'Import from OPNsense or pfSense' });
  await panel.getByLabel('Their config.xml', { exact: true }).setInputFiles({ name: 'config.xml', mimeType: 'application/xml', buffer: Buffer.from(OPNSENSE_XML) });
  await panel.getByRole('button', { name: 'Preview import' }).click();
  const preview = panel.getByRole('table', { name: 'Import preview' });
  await preview.getByRole('row').filter({ hasText: 'Interfaces still to map' }).getByRole('cell', { name: 'lan' }).waitFor();
  assert.deepEqual((await admin('GET', '/rules')).json, [], 'a preview writes nothing');
  await panel.getByLabel('Interface map', { exact: true }).fill('lan=eth1');
  await panel.getByRole('button', { name: 'Preview import' }).click();
  await preview.getByRole('row').filter({ hasText: 'Interfaces still to map' }).getByRole('cell', { name: 'none' }).waitFor();
  await panel.getByRole('table', { name: 'Not imported, with the reason' }).getByRole('cell', { name: /derived by the source firewall/ }).waitFor();
  await panel.scrollIntoViewIfNeeded();
  await screenshot(page, 'thirdparty-import');
  await assertFits(page, 'configuration with an import preview');
  await panel.getByRole('button', { name: 'Import (pending until applied)' }).click();
  const answer = panel.getByRole('status').or(panel.getByRole('alert'));
  await answer.waitFor();
  assert.match((await answer.textContent()) ?? '', /^Imported: 1 rule/);
  const rules = (await admin('GET', '/rules')).json as { description: string | null; interface: string | null }[];
  assert.ok(rules.some((rule) => rule.description?.includes('web out') && rule.interface === 'eth1'), `the rule arrived on the mapped interface: ${JSON.stringify(rules)}`);
  assert.equal((await admin('GET', '/pending')).json.firewall, true, 'pending until applied');
  assertNoProblems(watched, 'third-party import as operator');
});

test('a viewer reads the new sections but is offered no control on them', { skip }, async () => {
  const watched = await signedIn(VIEWER);
  const { page } = watched;
  for (const [area, section] of [['Multi-WAN', 'Live flows'], ['Networking', 'Routing table'], ['DNS', 'Custom blocks'], ['IDS', 'Suppressions'], ['DHCP', 'Failover status'], ['Reverse proxy', 'TCP routers'], ['Logs', 'DNS queries, live']] as const) {
    await openArea(page, area);
    await page.getByRole('region', { name: section, exact: true }).waitFor();
    const offered = (await buttonsOf(page)).filter((name) => !['Pause', 'Resume', 'Why was this blocked?', 'Search'].includes(name));
    assert.deepEqual(offered, [], `${area}: write controls offered to a viewer`);
    assert.equal(await page.locator('form.record-form').count(), 0, `${area}: no form for a viewer`);
  }
  await page.getByText('Log rotation needs the permission settings:read.').waitFor();
  assert.deepEqual(watched.problems.failedResponses, [], 'nothing the viewer may not read is asked for');
  assertNoProblems(watched, 'the new sections as viewer');
});
