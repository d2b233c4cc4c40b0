/**
 * Assertions through the HTTP interface (simulated platform; issue 33): the collection and its refusals, the
 * pre-apply gate of reload, restore, import, change sets and the commit-confirm apply (409 naming the assertion
 * and the deciding rule; force=true applies and is audited), GET /pending's broken assertions, the post-apply
 * checks of a commit-confirm window with auto_confirm (rolled back at once when a probe fails, confirmed once all
 * hold and the client is back), and the continuous check (an event, the dashboard frame, GET /assertions).
 * The namespace proof of the same behaviour is test/e2e/assertions-netns.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from './helpers/admin-api.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import { areaOf } from './helpers/areas.js';
import type { ProbeResult, ProbeTarget } from '../src/platform/routing.js';
import type { createAssertionsArea } from '../src/areas/assertions/routes.js';
import type { createConfigArea } from '../src/areas/config/routes.js';
import type { HubEvent } from '../src/core/event-hub.js';

const platform = createSimulatedPlatform();
/** Whether the box's DNS probe answers (a test cuts it); every probe is recorded. */
const probes: ProbeTarget[] = [];
let dnsAnswers = true;
const routing = {
  ...platform.routing,
  async probe(target: ProbeTarget): Promise<ProbeResult> {
    probes.push(target);
    return target.kind === 'dns' && !dnsAnswers ? { success: false, rtt_ms: null, error: 'no DNS answer within 1 s' } : { success: true, rtt_ms: 1, error: null };
  },
};
const api = adminApi({ platform: { ...platform, routing } });
const { call, created } = api;
const assertionsArea = () => areaOf<ReturnType<typeof createAssertionsArea>>(api.t.app, 'assertions');
const configArea = () => areaOf<ReturnType<typeof createConfigArea>>(api.t.app, 'config');
const lastForced = () => api.t.app.context.db.prepare("SELECT action, actor, details FROM audit_log WHERE category = 'packet_filter' AND action = 'assertions.forced' ORDER BY id DESC LIMIT 1").get() as { action: string; actor: string; details: string } | undefined;

const WEB = { name: 'client reaches server tcp/80', kind: 'transit', interface: 'eth1', protocol: 'tcp', source: '192.168.1.50', destination: '203.0.113.80', port: 80, expect: 'pass' };
const DNS = { name: 'the box resolves through its upstream DNS', kind: 'probe', probe: 'dns', target: '203.0.113.53', query: 'example.com', source_interface: 'eth0', timeout_ms: 1000 };

test('the collection: records with their last result; every refusal names the field', async () => {
  const web = await created('/api/v1/assertions', WEB);
  assert.equal(web.enabled, true);
  assert.equal(web.probe, null);
  const listed = (await call('GET', '/api/v1/assertions')).body;
  assert.deepEqual(listed.map((a: { name: string; last_result: unknown }) => [a.name, a.last_result]), [[WEB.name, null]]);
  const refusals: [Record<string, unknown>, RegExp][] = [
    [{ ...WEB, name: 'x1', interface: undefined }, /body\.interface is required/],
    [{ ...WEB, name: 'x2', source: 'not-an-address' }, /body\.source/],
    [{ ...WEB, name: 'x3', port: undefined }, /body\.port is required/],
    [{ ...DNS, name: 'x4', target: '-oProxyCommand=x' }, /body\.target/],
    [{ ...DNS, name: 'x5', query: '--help' }, /body\.query/],
    [{ ...DNS, name: 'x6', source_interface: undefined }, /body\.source_interface is required/],
    [{ ...DNS, name: 'bad\nname' }, /body\.name/],
    [{ ...DNS, name: 'x7', timeout_ms: 60_000 }, /timeout_ms/],
  ];
  for (const [body, message] of refusals) await api.refused('POST', '/api/v1/assertions', body, message);
  assert.equal((await call('POST', '/api/v1/assertions', { ...WEB })).status, 409, 'names are unique');
  assert.equal((await call('DELETE', `/api/v1/assertions/${web.id}`)).status, 204);
});

test('before an apply: a change that breaks a transit assertion is listed by /pending and refused (409 naming the assertion and the rule) unless forced, which is audited', async () => {
  const web = await created('/api/v1/assertions', WEB);
  assert.equal((await call('POST', '/api/v1/reload')).status, 200, 'nothing breaks it yet');
  const version = (await call('GET', '/api/v1/config/version')).body.version;
  const blocking = await created('/api/v1/rules', { action: 'block', direction: 'in', interface: 'eth1', protocol: 'tcp', dst_port_start: 80, quick: true, description: 'no web' });

  const pending = (await call('GET', '/api/v1/pending')).body;
  assert.equal(pending.broken_assertions.length, 1, JSON.stringify(pending));
  assert.equal(pending.broken_assertions[0].id, web.id);
  assert.equal(pending.broken_assertions[0].rule_id, blocking.id);
  assert.equal(pending.broken_assertions[0].outcome, 'block');

  const refused = await call('POST', '/api/v1/reload');
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error, /client reaches server tcp\/80/);
  assert.match(refused.body.error, new RegExp(`rule ${blocking.id} \\(block, quick: no web\\)`));
  assert.equal((await call('GET', '/api/v1/config/version')).body.version, version, 'nothing applied');

  // A change set that adds another such rule is refused as a whole; one that breaks nothing new passes.
  const set = await call('POST', '/api/v1/changes', { operations: [{ op: 'create', path: '/api/v1/rules', body: { action: 'block', direction: 'out', interface: 'eth0', protocol: 'tcp', dst_addr: '203.0.113.80', quick: true } }] });
  assert.equal(set.status, 200, 'the stored configuration broke the assertion already: a change set is judged on what it breaks');
  const forced = await call('POST', '/api/v1/reload?force=true');
  assert.equal(forced.status, 200, JSON.stringify(forced.body));
  const audit = lastForced();
  assert.ok(audit, 'the forced reload is in the audit trail');
  assert.equal(audit.actor, 'admin');
  assert.match(audit.details, /reload forced past 1 broken assertion\(s\): "client reaches server tcp\/80"/);

  // Restoring the version that broke nothing is fine; restoring back to the breaking one is refused, then forced.
  const breaking = (await call('GET', '/api/v1/config/version')).body.version;
  assert.equal((await call('POST', '/api/v1/config/restore', { version })).status, 200);
  const restore = await call('POST', '/api/v1/config/restore', { version: breaking });
  assert.equal(restore.status, 409, JSON.stringify(restore.body));
  assert.match(restore.body.error, /restore of version \d+ refused: it would break 1 assertion/);
  assert.equal((await call('POST', `/api/v1/config/restore?force=true`, { version: breaking })).status, 200);

  // With the stored configuration clean again, a change set that breaks it is refused and nothing is stored.
  assert.equal((await call('POST', '/api/v1/config/restore', { version })).status, 200);
  const rulesBefore = (await call('GET', '/api/v1/rules')).body.length;
  const refusedSet = await call('POST', '/api/v1/changes', { operations: [{ op: 'create', path: '/api/v1/rules', body: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 80, quick: true } }] });
  assert.equal(refusedSet.status, 409, JSON.stringify(refusedSet.body));
  assert.match(refusedSet.body.error, /this change set refused: it would break 1 assertion/);
  assert.equal((await call('GET', '/api/v1/rules')).body.length, rulesBefore, 'nothing stored');
  assert.equal((await call('POST', '/api/v1/changes?force=true', { operations: [{ op: 'create', path: '/api/v1/rules', body: { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 80, quick: true } }] })).status, 200);
  // An import of the exported (breaking) configuration is refused too.
  const exported = (await call('GET', '/api/v1/config/export')).body;
  assert.equal((await call('POST', '/api/v1/config/restore', { version })).status, 200);
  const imported = await call('POST', '/api/v1/config/import', exported);
  assert.equal(imported.status, 409, JSON.stringify(imported.body));
  assert.match(imported.body.error, /import refused: it would break 1 assertion/);
  // The commit-confirm apply too.
  const blockAgain = await created('/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: 80, quick: true });
  const window = await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 60, apply: true });
  assert.equal(window.status, 409, JSON.stringify(window.body));
  assert.equal((await call('GET', '/api/v1/config/commit-confirm/status')).body.active, false, 'no window was opened');
  assert.equal((await call('DELETE', `/api/v1/rules/${blockAgain.id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/assertions/${web.id}`)).status, 204);
  assert.deepEqual((await call('GET', '/api/v1/pending')).body.broken_assertions, []);
});

test('a CIDR is judged over the whole block: one address a rule singles out in the middle of 10.0.0.0/8 breaks "never reaches"', async () => {
  const never = await created('/api/v1/assertions', { name: 'guests never reach 10/8', kind: 'transit', interface: 'eth1', protocol: 'tcp', source: '192.168.1.0/24', destination: '10.0.0.0/8', port: 443, expect: 'block' });
  const blockAll = await created('/api/v1/rules', { action: 'block', direction: 'in', interface: 'eth1', protocol: 'any', dst_addr: '10.0.0.0/8', priority: 10 });
  assert.deepEqual((await call('GET', '/api/v1/pending')).body.broken_assertions, [], 'the whole block is blocked');
  const hole = await created('/api/v1/rules', { action: 'pass', direction: 'in', interface: 'eth1', protocol: 'tcp', src_addr: '192.168.1.77', dst_addr: '10.20.30.40', dst_port_start: 443, quick: true, priority: 5 });
  const [broken] = (await call('GET', '/api/v1/pending')).body.broken_assertions;
  assert.equal(broken?.id, never.id, 'the hole in the middle of both blocks is found');
  assert.equal(broken.rule_id, hole.id);
  assert.match(broken.detail, /192\.168\.1\.77:40000 → 10\.20\.30\.40:443/);
  for (const id of [hole.id, blockAll.id]) assert.equal((await call('DELETE', `/api/v1/rules/${id}`)).status, 204);
  assert.equal((await call('DELETE', `/api/v1/assertions/${never.id}`)).status, 204);
});

test('auto_confirm: a failing probe after the apply rolls back at once; a harmless change is confirmed once the client is back, not before', async () => {
  const dns = await created('/api/v1/assertions', DNS);
  const events: HubEvent[] = [];
  const stop = api.t.app.context.events.on('*', (event) => events.push(event));
  const commitConfirm = configArea().commitConfirm;

  assert.equal((await call('POST', '/api/v1/reload')).status, 200);
  dnsAnswers = false;
  const before = (await call('GET', '/api/v1/config/version')).body.version;
  await created('/api/v1/rules', { action: 'block', direction: 'out', interface: 'eth0', protocol: 'udp', dst_port_start: 53, description: 'cuts DNS' });
  const opened = await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 600, apply: true, auto_confirm: true });
  assert.equal(opened.status, 200, JSON.stringify(opened.body));
  await commitConfirm.settled();
  const rolled = (await call('GET', '/api/v1/config/commit-confirm/status')).body;
  assert.equal(rolled.active, false, JSON.stringify(rolled));
  assert.equal(rolled.last.outcome, 'rolled_back');
  assert.match(rolled.last.reason, /assertion "the box resolves through its upstream DNS" does not hold after the apply/);
  assert.equal(rolled.last.rollback_version, before);
  assert.ok(events.some((e) => e.topic === 'assertions.result' && e.payload.event === 'failed' && e.payload.id === dns.id), 'the failure is an event');
  assert.equal(probes.at(-1)!.interface, 'eth0');
  assert.equal(probes.at(-1)!.expect, 'example.com');

  // Harmless: every assertion holds, but the window stays open until its client reaches the API again.
  dnsAnswers = true;
  await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 8443, description: 'harmless' });
  await commitConfirm.stopTimer(); // nothing but the client's return may end this window
  assert.equal((await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 600, apply: true, auto_confirm: true })).status, 200);
  await commitConfirm.settled();
  const waiting = commitConfirm.current();
  assert.ok(waiting, 'still open: the client has not come back since the apply');
  assert.equal(waiting.checks?.state, 'held');
  const status = (await call('GET', '/api/v1/config/commit-confirm/status')).body;
  assert.equal(status.active, false, `the client's next request confirms: ${JSON.stringify(status)}`);
  assert.equal(status.last.outcome, 'confirmed');
  assert.equal(status.last.confirmed_by, 'auto-confirm');
  assert.deepEqual(status.last.checks.results.map((r: { name: string; result: { holds: boolean } }) => [r.name, r.result.holds]), [[DNS.name, true]]);

  // Without auto_confirm the results are shown and nothing is decided for the client.
  dnsAnswers = false;
  await created('/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 8444 });
  assert.equal((await call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 600, apply: true })).status, 200);
  await commitConfirm.settled();
  const shown = (await call('GET', '/api/v1/config/commit-confirm/status')).body;
  assert.equal(shown.active, true);
  assert.equal(shown.assertions.state, 'failed');
  assert.equal((await call('POST', '/api/v1/config/commit-confirm/confirm')).status, 200);
  commitConfirm.startTimer();
  dnsAnswers = true;
  stop();
  assert.equal((await call('DELETE', `/api/v1/assertions/${dns.id}`)).status, 204);
});

test('continuous checking: a due probe runs, a failure is an event, shows on the dashboard frame and in GET /assertions with what decided it', async () => {
  const dns = await created('/api/v1/assertions', { ...DNS, name: 'scheduled dns', interval_seconds: 5 });
  const events: HubEvent[] = [];
  const stop = api.t.app.context.events.on('assertions.result', (event) => events.push(event));
  dnsAnswers = false;
  await assertionsArea().service.runDue();
  const listed = (await call('GET', `/api/v1/assertions`)).body.find((a: { id: string }) => a.id === dns.id);
  assert.equal(listed.last_result.holds, false, JSON.stringify(listed));
  assert.equal(listed.last_result.against, 'probe');
  assert.match(listed.last_result.decided_by, /a dns probe from eth0/);
  assert.match(listed.last_result.detail, /no DNS answer/);
  assert.equal(events.length, 1);
  assert.equal(events[0].payload.event, 'failed');
  const frame = await areaOf<{ service: { collect(): Promise<{ fields: Record<string, unknown> }> } } & import('../src/areas/area.js').Area>(api.t.app, 'dashboard').service.collect();
  assert.deepEqual((frame.fields.failing_assertions as { name: string }[]).map((f) => f.name), ['scheduled dns']);
  // Not due again before its interval: nothing runs.
  const count = probes.length;
  await assertionsArea().service.runDue();
  assert.equal(probes.length, count);
  dnsAnswers = true;
  stop();
});
