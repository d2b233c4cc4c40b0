/**
 * The fleet controller on PostgreSQL (issue 35) with light agents: the agent code with an in-memory stand-in for
 * an appliance. Migrations under concurrency, accounts and roles, single-use enrolment, revocation, and a rollout
 * in waves that survives the controller being killed mid-rollout without any agent applying a revision twice.
 * A whole appliance behind NAT: test/e2e/fleet-nat-appliance.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import pg from 'pg';
import { openPool } from '../src/controller/database.js';
import { migrate, MIGRATIONS } from '../src/controller/migrations.js';
import { waveSizes } from '../src/controller/rollouts.js';
import { ControllerProcess, exitWithTestRunner, lightAgent, postgresSkip, temporaryDatabase, until } from './helpers/fleet.js';
import { tcpBalancer } from './helpers/fleet-balancer.js';
import { MemoryApplier } from '../src/agent/memory-applier.js';
import type { SectionObjects } from '../src/agent/state.js';
import { chromiumSkipReason, launchChromium } from './helpers/console-browser.js';

// A runner or test process SIGKILLed takes the controllers (and appliances) it started with it.
await exitWithTestRunner();
const skip = await postgresSkip('the fleet controller tests');

test('wave sizes: the canary, then each percentage rounded up, never an empty wave, always ending at every target', () => {
  assert.deepEqual(waveSizes(10, 1, [10, 50, 100]), [1, 5, 10]);
  assert.deepEqual(waveSizes(3, 1, [50, 100]), [1, 2, 3]);
  assert.deepEqual(waveSizes(1, 5, [50]), [1]);
  assert.deepEqual(waveSizes(1000, 10, [25]), [10, 250, 1000]);
});

test('migrations: four processes starting at once on an empty database apply each version once; a restart applies none', { skip, timeout: 60_000 }, async () => {
  const database = await temporaryDatabase();
  const pools = Array.from({ length: 4 }, () => openPool(database.url, 2));
  try {
    const applied = await Promise.all(pools.map((pool) => migrate(pool)));
    assert.deepEqual(applied.flat().sort(), MIGRATIONS.map((m) => m.version).sort(), 'each version applied by exactly one process');
    const rows = await pools[0].query('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(rows.rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
    assert.deepEqual(await migrate(pools[1]), []);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await database.drop();
  }
});

test('controller: accounts and roles, single-use enrolment, revocation closes the connection and refuses reconnects, a rollout in waves across two controller processes survives one killed mid-rollout', { skip, timeout: 300_000 }, async (t) => {
  const database = await temporaryDatabase();
  const controller = await ControllerProcess.start(database.url);
  // A second process of the same controller (same database, same seal key), as behind a load balancer.
  const other = await ControllerProcess.start(database.url, { keyDir: controller.keyDir });
  const agents: Awaited<ReturnType<typeof lightAgent>>[] = [];
  try {
    // Accounts: the first registration makes the admin and closes registration; roles are the appliance's.
    assert.equal((await controller.call('GET', '/api/v1/appliances', undefined, '')).status, 401);
    await controller.signInFirstAdmin();
    assert.equal((await controller.call('POST', '/api/v1/auth/register', { username: 'second', password: 'Second-password-1' }, '')).status, 403);
    assert.equal((await controller.call('POST', '/api/v1/accounts', { username: 'watcher', password: 'Watcher-password-1', role: 'viewer' })).status, 200);
    const viewer = (await controller.call('POST', '/api/v1/auth/login', { username: 'watcher', password: 'Watcher-password-1' }, '')).body.token as string;
    assert.equal((await controller.call('GET', '/api/v1/appliances', undefined, viewer)).status, 200);
    const refused = await controller.call('POST', '/api/v1/templates', { name: 'x', sections: {} }, viewer);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /rules:write/);
    assert.equal((await controller.call('POST', '/api/v1/enrolment-tokens', { name: 'x' }, viewer)).status, 403);
    const badSection = await controller.call('POST', '/api/v1/templates', { name: 'bad', sections: { users: [] } });
    assert.equal(badSection.status, 400);
    assert.match(badSection.body.error, /body\.sections\.users/);
    const priorityInBlock = await controller.call('POST', '/api/v1/templates', { name: 'bad', rule_placement: 'first', sections: { rules: [{ label: 'a', priority: 5 }] } });
    assert.equal(priorityInBlock.status, 400);
    assert.match(priorityInBlock.body.error, /^body\.sections\.rules\.0\.priority: the template places its rules before/);

    // The agent path needs a client certificate of the fleet CA: without one the upgrade is refused.
    const refusedUpgrade = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`wss://127.0.0.1:${controller.port}/fleet/v1/agent`, { rejectUnauthorized: false });
      socket.on('unexpected-response', (_request, response) => (resolve(response.statusCode ?? 0), socket.terminate()));
      socket.on('open', () => (resolve(101), socket.terminate()));
      socket.on('error', () => undefined);
    });
    assert.equal(refusedUpgrade, 401);

    // Enrolment: a token works once; a replay is refused.
    const token = await controller.enrolmentToken('replayed');
    const { enrolWithController } = await import('../src/agent/enrol.js');
    await enrolWithController({ controllerUrl: controller.url, token, allowList: ['127.0.0.1'] });
    await assert.rejects(enrolWithController({ controllerUrl: controller.url, token, allowList: ['127.0.0.1'] }), /refused the enrolment: enrolment token unknown, used or expired/);
    // The outbound guard: loopback is refused unless the allow-list names it.
    await assert.rejects(enrolWithController({ controllerUrl: controller.url, token: await controller.enrolmentToken('guarded'), allowList: [] }), /blocked address/);

    const COUNT = 20;
    // Half the agents hold their connection to the other process: the rollout below is created on the first, so
    // their nudges cross between the processes over LISTEN/NOTIFY.
    // The stand-in refuses a document naming 192.0.2.66, as an appliance's assertion would refuse it.
    const refuse = (document: { sections: Record<string, Record<string, unknown>[]> }) =>
      JSON.stringify(document).includes('192.0.2.66') ? 'assertion "no test net" does not hold' : null;
    for (let index = 0; index < COUNT; index += 1) agents.push(await lightAgent(controller, `light-${index}`, { site: `10.9.${index}.1` }, index % 2 === 0 ? controller : other, undefined, refuse));
    await until('every light agent connected', async () => (await controller.call('GET', '/api/v1/fleet/summary')).body.connected === COUNT);
    const [here, there] = await Promise.all([controller, other].map(async (process) => (await process.call('GET', '/api/v1/health')).body.agents_connected_here as number));
    assert.deepEqual([here, there], [COUNT / 2, COUNT / 2]);

    // Revocation: the live connection ends at once and the agent's reconnects are refused.
    // The last agent is connected to the other process; the revocation is made on this one.
    const revoked = agents.pop()!;
    assert.equal((await controller.call('POST', `/api/v1/appliances/${revoked.id}/revoke`)).status, 200);
    await until('the revoked agent to be cut off', async () => revoked.agent.status().revoked && !revoked.agent.status().connected);
    assert.equal((await controller.call('GET', `/api/v1/appliances/${revoked.id}`)).body.connected, false);
    await revoked.agent.stop();

    // A rollout in waves with a soak time between them; the controller is killed after the canary applied.
    // Each appliance has a rule of its own; the template's rules go before it (rule_placement first).
    for (const light of agents) light.applier.objects.get('rules')!.push({ id: 'local-rule', label: 'local-ssh', action: 'pass' });
    const template = await controller.call('POST', '/api/v1/templates', { name: 'site web', rule_placement: 'first', sections: { aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${site}'] }], rules: [{ label: 'fleet-web', action: 'pass' }] } });
    assert.equal(template.status, 201);
    assert.equal(template.body.rule_placement, 'first');
    const created = await controller.call('POST', '/api/v1/rollouts', { template_id: template.body.id, appliance_ids: agents.map((a) => a.id), canary: 1, percentages: [50, 100], wave_interval_seconds: 3 });
    const missing = await controller.call('POST', '/api/v1/rollouts', { template_id: template.body.id, canary: 1 });
    assert.equal(missing.status, 409, 'one rollout runs at a time');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const rollout = created.body.id as string;
    await until('the canary applied', async () => (await controller.call('GET', `/api/v1/rollouts/${rollout}`)).body.waves[0].applied === 1);
    const before = (await controller.call('GET', `/api/v1/rollouts/${rollout}`)).body;
    assert.equal(before.state, 'running');
    assert.ok(before.applied < agents.length, 'killed mid-rollout');
    await controller.kill();
    await controller.spawn();
    const finished = await until('the rollout to complete after the restart', async () => {
      const progress = (await controller.call('GET', `/api/v1/rollouts/${rollout}`)).body;
      return progress.state === 'completed' ? progress : undefined;
    });
    assert.equal(finished.applied, agents.length);
    assert.equal(finished.failed, 0);
    assert.deepEqual(finished.waves.map((w: { size: number }) => w.size), [1, 9, 9]);
    for (const [index, light] of agents.entries()) {
      assert.equal(light.applier.applies, 1, `${light.id} applied exactly once`);
      assert.deepEqual(light.applier.objects.get('aliases')!.map((a) => a.entries), [[`10.9.${index}.1`]]);
      assert.deepEqual(light.applier.objects.get('rules')!.map((r) => r.label), ['fleet-web', 'local-ssh']);
    }
    // Fleet views: every appliance in sync on the revision, with its version and last contact.
    await until('every appliance reconnected', async () => (await controller.call('GET', '/api/v1/fleet/summary')).body.connected === agents.length);
    const listed = (await controller.call('GET', '/api/v1/appliances')).body as { revoked_at: string | null; in_sync: boolean; version: string; last_seen: string; applied_revision: number }[];
    const live = listed.filter((a) => agents.some((light) => light.id === (a as unknown as { id: string }).id));
    assert.ok(live.every((a) => a.in_sync && a.version === 'light-1' && a.last_seen && a.applied_revision === 1));

    // Drift: a local edit to an owned object is reported per appliance and fleet-wide.
    agents[0].applier.objects.get('aliases')![0].entries = ['192.0.2.99'];
    const drifted = await until('drift reported', async () => {
      const view = (await controller.call('GET', `/api/v1/appliances/${agents[0].id}`)).body;
      return view.drifted ? view : undefined;
    });
    assert.deepEqual(drifted.drift, [{ section: 'aliases', name: 'fleet_web', kind: 'changed', fields: ['entries'] }]);
    assert.equal((await controller.call('GET', '/api/v1/fleet/summary')).body.drifted, 1);
    assert.equal((await controller.call('GET', '/api/v1/appliances?drifted=true')).body.length, 1);

    // The rollback policy: one appliance of the second wave refuses; the rollout halts and every appliance it had
    // changed (the canaries, and those of the second wave that had pulled before the halt, as they land) gets its
    // previous configuration back; those of the second wave that had not pulled are cancelled and never change.
    assert.equal((await controller.call('PUT', `/api/v1/appliances/${agents[5].id}/variables`, { variables: { site: '192.0.2.66' } })).status, 200);
    const extra = await controller.call('POST', '/api/v1/templates', { name: 'site web and dns', sections: { aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${site}'] }, { name: 'fleet_dns', alias_type: 'host', entries: ['10.53.0.1'] }] } });
    const risky = (await controller.call('POST', '/api/v1/rollouts', { template_id: extra.body.id, appliance_ids: agents.map((a) => a.id), canary: 2, percentages: [100], rollback_on_halt: true })).body.id as string;
    // The first agent's local drift was overwritten by the rollout, then its revision before the rollout restored.
    const previous = (light: (typeof agents)[number], index: number) =>
      isDeepStrictEqual(light.applier.objects.get('aliases')!.map((a) => [a.name, a.entries]), [['fleet_web', [`10.9.${index}.1`]]]);
    const settled = await until('the halted rollout to roll back every appliance it changed', async () => {
      const progress = (await controller.call('GET', `/api/v1/rollouts/${risky}`)).body;
      const targets = progress.target_list as { state: string; rolled_back: boolean | null }[];
      const done = targets.every((x) => x.state === 'failed' || x.state === 'cancelled' || (x.state === 'applied' && x.rolled_back));
      const applying = agents.some((light) => light.agent.status().attempts.some((a) => a.outcome === 'applying'));
      return progress.state === 'halted' && done && !applying && agents.every(previous) ? progress : undefined;
    });
    assert.match(settled.halted_reason, /light-5" failed: assertion "no test net" does not hold/);
    assert.equal(settled.failed, 1);
    t.diagnostic(`the halted rollout: ${settled.applied} applied and rolled back, ${settled.cancelled} cancelled before they pulled`);

    // Secrets sealed per appliance: the controller keeps only a copy sealed for each appliance, which only that
    // appliance's agent opens, as it writes the value.
    const SECRET = 'Fleet-psk-7f3a9c-never-in-the-database';
    const one = await controller.call('PUT', `/api/v1/appliances/${agents[6].id}/secrets/psk`, { value: SECRET });
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.equal(JSON.stringify(one.body).includes(SECRET), false);
    assert.deepEqual((await controller.call('PUT', '/api/v1/secrets/psk', { value: SECRET, appliance_ids: [agents[7].id] })).body.sealed_for, [agents[7].id]);
    assert.deepEqual((await controller.call('GET', `/api/v1/appliances/${agents[6].id}/secrets`)).body.map((s: { name: string }) => s.name), ['psk']);
    const withSecret = await controller.call('POST', '/api/v1/templates', { name: 'with secret', sections: { aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${site}'], description: '${secret:psk}' }] } });
    const lacking = await controller.call('POST', '/api/v1/rollouts', { template_id: withSecret.body.id, appliance_ids: [agents[6].id, agents[8].id] });
    assert.equal(lacking.status, 400);
    assert.match(lacking.body.error, /"light-8" has no secret "psk"/);
    const sealedRollout = (await controller.call('POST', '/api/v1/rollouts', { template_id: withSecret.body.id, appliance_ids: [agents[6].id, agents[7].id], canary: 1, percentages: [100] })).body.id as string;
    await until('the rollout with a sealed secret', async () => (await controller.call('GET', `/api/v1/rollouts/${sealedRollout}`)).body.state === 'completed');
    for (const light of [agents[6], agents[7]]) assert.equal(light.applier.objects.get('aliases')![0].description, SECRET, 'the agent opened its sealed copy');
    const dump = execFileSync('pg_dump', ['--data-only', database.url]).toString();
    assert.equal(dump.includes(SECRET), false, 'the database holds no plain text of the secret');
    assert.equal(dump.includes(Buffer.from(SECRET).toString('base64').slice(0, 24)), false);
    assert.match(dump, /bwsealed1:psk:/);
    assert.equal(controller.output.includes(SECRET) || other.output.includes(SECRET), false, 'nor any log');

    // Fleet search over the stored desired and applied state: the "alias containing 203.0.113.7".
    assert.equal((await controller.call('PUT', `/api/v1/appliances/${agents[2].id}/variables`, { variables: { site: '203.0.113.7' } })).status, 200);
    const searched = (await controller.call('POST', '/api/v1/rollouts', { template_id: template.body.id, appliance_ids: [agents[2].id, agents[3].id], canary: 1, percentages: [100] })).body.id as string;
    await until('the search rollout to complete', async () => (await controller.call('GET', `/api/v1/rollouts/${searched}`)).body.state === 'completed');
    const found = await controller.call('GET', '/api/v1/fleet/search?section=aliases&contains=203.0.113.7');
    assert.equal(found.status, 200);
    assert.deepEqual(found.body.map((a: { id: string }) => a.id), [agents[2].id]);
    assert.deepEqual(found.body[0].matches, [{ state: 'applied', section: 'aliases', name: 'fleet_web' }, { state: 'desired', section: 'aliases', name: 'fleet_web' }]);
    assert.equal((await controller.call('GET', '/api/v1/fleet/search?section=assertions&contains=203.0.113.7')).body.length, 0);
    const byRelease = await controller.call('GET', '/api/v1/fleet/search?version=light-1&limit=5');
    assert.equal(byRelease.body.length, 5);
    assert.equal(byRelease.headers['x-total-count'], String(agents.length));
    const hostile = await controller.call('GET', `/api/v1/fleet/search?contains=${encodeURIComponent("'); DROP TABLE appliances; --")}`);
    assert.deepEqual([hostile.status, hostile.body], [200, []]);
    const unknownSection = await controller.call('GET', '/api/v1/fleet/search?section=users&contains=x');
    assert.equal(unknownSection.status, 400);
    assert.match(unknownSection.body.error, /querystring\.section/);

    // Paging: limit and offset in a stable order, the total in X-Total-Count; pages cover the list once.
    const whole = await controller.call('GET', '/api/v1/appliances');
    const total = Number(whole.headers['x-total-count']);
    assert.equal(total, whole.body.length);
    const paged: string[] = [];
    for (let offset = 0; offset < total; offset += 6) {
      const page = await controller.call('GET', `/api/v1/appliances?limit=6&offset=${offset}`);
      assert.equal(page.headers['x-total-count'], String(total));
      paged.push(...page.body.map((a: { id: string }) => a.id));
    }
    assert.deepEqual(paged, whole.body.map((a: { id: string }) => a.id));
    const past = await controller.call('GET', `/api/v1/appliances?offset=${total + 5}`);
    assert.deepEqual([past.body, past.headers['x-total-count']], [[], String(total)]);
    const badLimit = await controller.call('GET', '/api/v1/appliances?limit=0');
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.body.error, /limit/);
    assert.equal((await controller.call('GET', '/api/v1/rollouts?limit=1')).body.length, 1);
    assert.equal((await controller.call('GET', '/api/v1/rollouts?limit=1')).headers['x-total-count'], '4');

    // The fleet-wide audit: controller actions with their account, the engine's steps, and what appliances reported.
    const audit = (await controller.call('GET', '/api/v1/audit?limit=10000', undefined, viewer));
    assert.equal(audit.status, 200);
    const events = audit.body as { id: number; actor: string; action: string; appliance_id: string | null; detail: Record<string, unknown> }[];
    assert.deepEqual(events.map((e) => e.id), [...events.map((e) => e.id)].sort((x, y) => y - x), 'newest first');
    const of = (action: string, appliance?: string) => events.filter((e) => e.action === action && (appliance === undefined || e.appliance_id === appliance));
    assert.equal(of('appliance.revoked', revoked.id)[0]?.actor, 'fleet-admin');
    assert.equal(of('account.created')[0]?.detail.username, 'watcher');
    assert.equal(of('appliance.enrolled').length, COUNT + 1);
    assert.equal(of('rollout.created').length, 4);
    assert.equal(of('rollout.completed').length, 3);
    assert.equal(of('rollout.halted')[0]?.actor, 'controller');
    assert.ok(of('rollout.rolled_back').length >= 1);
    assert.match(String(of('appliance.revision_failed', agents[5].id)[0]?.detail.reason), /no test net/);
    const driftEvents = of('appliance.drift_changed', agents[0].id).map((e) => e.detail.to);
    assert.ok(driftEvents.some((to) => isDeepStrictEqual(to, [{ section: 'aliases', name: 'fleet_web', kind: 'changed', fields: ['entries'] }])), JSON.stringify(driftEvents));
    assert.equal(of('appliance.variables_set', agents[2].id)[0]?.actor, 'fleet-admin');
    // Each revision an appliance applied is audited once, however often its report was repeated after reconnects.
    for (const light of agents) {
      const revisions = of('appliance.revision_applied', light.id).map((e) => e.detail.revision);
      assert.equal(new Set(revisions).size, revisions.length, `${light.id}: ${revisions.join(',')}`);
    }
    const firstPage = (await controller.call('GET', '/api/v1/audit?limit=7')).body as { id: number }[];
    const nextPage = (await controller.call('GET', `/api/v1/audit?limit=7&before=${firstPage.at(-1)!.id}`)).body as { id: number }[];
    assert.deepEqual([...firstPage, ...nextPage].map((e) => e.id), events.slice(0, 14).map((e) => e.id));
    assert.equal((await controller.call('GET', `/api/v1/audit?appliance_id=${agents[5].id}&action=appliance.revision_failed`)).body.length, 1);
    // Drift adoption of a deletion: under the adopt policy, an owned object deleted on an appliance leaves the
    // template, and the appliance's drift clears with a revision of what it runs.
    assert.equal((await controller.call('PUT', `/api/v1/templates/${template.body.id}`, { sections: template.body.sections, drift_policy: 'adopt' })).status, 200);
    agents[3].applier.objects.set('aliases', []);
    await until('the deletion adopted', async () => (await controller.call('GET', `/api/v1/templates/${template.body.id}`)).body.sections.aliases.length === 0);
    await until('its drift cleared', async () => {
      const view = (await controller.call('GET', `/api/v1/appliances/${agents[3].id}`)).body;
      return !view.drifted && view.in_sync;
    });
    assert.match((await controller.call('GET', `/api/v1/audit?action=drift.adopted&appliance_id=${agents[3].id}`)).body[0].detail.how, /deleted locally/);
    // A local reorder that breaks the template's rule block is drift that is never adopted: it stays reported.
    agents[4].applier.objects.get('rules')!.reverse();
    const refusedAdoption = await until('the reorder refused for adoption', async () => (await controller.call('GET', `/api/v1/audit?action=drift.not_adopted&appliance_id=${agents[4].id}`)).body[0]);
    assert.match(refusedAdoption.detail.how, /rule order is not adopted/);
    assert.deepEqual((await controller.call('GET', `/api/v1/appliances/${agents[4].id}`)).body.drift, [{ section: 'rules', name: 'fleet-web', kind: 'moved', fields: [] }]);

    // The console page, in a browser, signed in as the viewer: appliances with version, health, revisions; rollouts.
    const noBrowser = chromiumSkipReason();
    if (noBrowser) t.diagnostic(`the console page was not opened in a browser: ${noBrowser}`);
    else {
      const browser = await launchChromium();
      try {
        const page = await (await browser.newContext({ ignoreHTTPSErrors: true })).newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        const served = await page.goto(`${controller.url}/fleet`);
        assert.match(served!.headers()['content-security-policy'], /script-src 'self'/);
        await page.fill('input[name=username]', 'watcher');
        await page.fill('input[name=password]', 'Watcher-password-1');
        await page.click('button[type=submit]');
        const row = page.locator(`#appliances tr[data-id="${agents[2].id}"]`);
        await row.waitFor({ timeout: 60_000 });
        const cells = await row.locator('td').allTextContents();
        assert.deepEqual([cells[0], cells[1], cells[2], cells[3]], ['light-2', 'light-1', 'ok', 'yes']);
        assert.match(cells[5], /^(\d+) \/ \1$/, 'applied / desired, in sync');
        assert.match(await page.locator('#summary').textContent() ?? '', new RegExp(`^${total - 1} appliances, \\d+ connected`));
        const halted = page.locator('#rollouts tr', { hasText: 'halted' });
        assert.match((await halted.locator('td').allTextContents())[5], /light-5" failed/);
        assert.deepEqual(errors, []);
      } finally {
        await browser.close();
      }
    }
    t.diagnostic(`${agents.length} light agents; reconnects after the restart: ${agents.map((a) => a.agent.connections).join(',')}`);
  } finally {
    await Promise.all(agents.map((a) => a.agent.stop()));
    await other.close(false);
    await controller.close();
    await database.drop();
  }
});

/** A stand-in that, once held, stops inside its next apply (the agent has pulled and is applying) until released. */
class HeldApplier extends MemoryApplier {
  private gate: { entered: () => void; released: Promise<void> } | null = null;
  private release_: () => void = () => undefined;
  entered: Promise<void> = Promise.resolve();

  hold(): void {
    let entered!: () => void;
    this.entered = new Promise((resolve) => (entered = resolve));
    this.gate = { entered, released: new Promise((resolve) => (this.release_ = resolve)) };
  }

  release(): void {
    this.release_();
  }

  override async apply(document: SectionObjects, previous: SectionObjects | null) {
    const gate = this.gate;
    this.gate = null;
    if (gate) {
      gate.entered();
      await gate.released;
    }
    return super.apply(document, previous);
  }
}

test('controller: a halt cancels what has not started (an agent away at the halt never applies the halted revision; one already applying is counted), and `connected` follows the life of the process holding the socket', { skip, timeout: 240_000 }, async (t) => {
  const database = await temporaryDatabase();
  const first = await ControllerProcess.start(database.url);
  const second = await ControllerProcess.start(database.url, { keyDir: first.keyDir });
  // The agent of the connection part dials a balancer in front of the second process.
  const balancer = await tcpBalancer(second.port);
  const agents: Awaited<ReturnType<typeof lightAgent>>[] = [];
  try {
    await first.signInFirstAdmin();
    second.token = first.token;
    // Statuses at the real agents' pace: `connected_to` is rewritten only by them, so a live connection cleared by
    // mistake would show for a while.
    const timing = { statusIntervalMs: 30_000, backoff: { initialMs: 200, maxMs: 2000 } };
    const refuse = (document: { sections: Record<string, Record<string, unknown>[]> }) =>
      JSON.stringify(document).includes('192.0.2.66') ? 'assertion "no test net" does not hold' : null;
    const steady = await lightAgent(first, 'steady', { site: '10.7.0.1' }, first, timing);
    const refuser = await lightAgent(first, 'refuser', { site: '192.0.2.66' }, first, timing, undefined, new HeldApplier(refuse));
    const applying = await lightAgent(first, 'applying', { site: '10.7.0.3' }, first, timing, undefined, new HeldApplier());
    const away = await lightAgent(first, 'away', { site: '10.7.0.4' }, first, timing);
    const roamer = await lightAgent(first, 'roamer', {}, balancer, timing);
    agents.push(steady, refuser, applying, away, roamer);
    const ids = [steady, refuser, applying, away].map((a) => a.id);
    await until('every agent connected', async () => (await first.call('GET', '/api/v1/fleet/summary')).body.connected === agents.length);
    const view = async (light: { id: string }) => (await first.call('GET', `/api/v1/appliances/${light.id}`)).body;
    const progressOf = async (rollout: string) => (await first.call('GET', `/api/v1/rollouts/${rollout}`)).body;
    const rollOut = async (name: string, entries: string[], appliance_ids: string[], percentages = [100]) => {
      const template = await first.call('POST', '/api/v1/templates', { name, sections: { aliases: [{ name, alias_type: 'host', entries }] } });
      assert.equal(template.status, 201, JSON.stringify(template.body));
      const created = await first.call('POST', '/api/v1/rollouts', { template_id: template.body.id, appliance_ids, canary: 1, percentages });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return created.body.id as string;
    };

    // Revision 1 everywhere: what each appliance runs before the rollout that halts.
    const base = await rollOut('fleet_base', ['10.0.0.1'], ids);
    await until('the first rollout', async () => (await progressOf(base)).state === 'completed');

    // The halting rollout: the canary applies; in the second wave the refuser and `applying` pull and are held
    // inside their apply, and `away` is disconnected. The refuser's failure halts the rollout.
    (refuser.applier as HeldApplier).hold();
    (applying.applier as HeldApplier).hold();
    await away.agent.stop();
    await until('away shown disconnected', async () => (await view(away)).connected === false);
    const halting = await rollOut('fleet_site', ['${site}'], ids);
    await Promise.all([(refuser.applier as HeldApplier).entered, (applying.applier as HeldApplier).entered]);
    (refuser.applier as HeldApplier).release();
    const halted = await until('the rollout halted by the failure', async () => {
      const progress = await progressOf(halting);
      return progress.state === 'halted' ? progress : undefined;
    });
    assert.match(halted.halted_reason, /"refuser" failed: assertion "no test net" does not hold/);
    const stateOf = (progress: { target_list: { appliance_id: string; state: string; reason: string | null }[] }, light: { id: string }) =>
      progress.target_list.find((target) => target.appliance_id === light.id)!;
    assert.equal(stateOf(halted, steady).state, 'applied');
    assert.equal(stateOf(halted, refuser).state, 'failed');
    for (const light of [applying, away]) {
      assert.equal(stateOf(halted, light).state, 'cancelled', `${light.id}: not reported when the rollout halted`);
      assert.match(String(stateOf(halted, light).reason), /the rollout halted before this appliance reported/);
    }
    assert.deepEqual(halted.waves.map((w: { cancelled: number }) => w.cancelled), [0, 2]);
    // What an agent pulls from now on is what it runs.
    for (const light of [applying, away]) {
      const shown = await view(light);
      assert.deepEqual([shown.desired_revision, shown.applied_revision, shown.in_sync], [1, 1, true], `${light.id} desired back to what it runs`);
    }

    // The agent that had pulled before the halt finishes its apply: its report lands and counts.
    (applying.applier as HeldApplier).release();
    await until('the applying agent counted', async () => stateOf(await progressOf(halting), applying).state === 'applied');
    assert.deepEqual([(await view(applying)).desired_revision, (await view(applying)).applied_revision], [2, 2], 'what it now runs is its desired revision');
    assert.equal(applying.applier.applies, 2);

    // The agent away at the halt comes back and pulls its desired revision: 1, which it runs, so it applies
    // nothing and reports its outcome of 1 again (a new report time). The next rollout reaches it as usual; revision
    // 2 of the halted rollout was never attempted.
    const reportedBefore = (await view(away)).last_outcome;
    away.agent.start();
    const reported = await until('away reconnected and answered its pull', async () => {
      const outcome = (await view(away)).last_outcome;
      return outcome.at !== reportedBefore.at ? outcome : undefined;
    });
    assert.deepEqual([reported.revision, reported.outcome], [1, 'applied']);
    assert.equal(away.applier.applies, 1);
    const after = await rollOut('fleet_after', ['10.0.0.9'], [away.id]);
    await until('the rollout after the halt', async () => (await progressOf(after)).state === 'completed');
    assert.deepEqual(away.agent.status().attempts.map((a) => [a.revision, a.outcome]), [[1, 'applied'], [3, 'applied']]);
    assert.equal(away.applier.applies, 2);
    // A template owns its whole section: the aliases are the last rollout's.
    assert.deepEqual(away.applier.objects.get('aliases')!.map((a) => a.name), ['fleet_after']);

    // A halt by hand (POST /rollouts/{id}/halt) cancels the same way: `applying` is held inside its apply of the
    // second wave when the operator halts; its report still counts. `away`, in a third wave that never opened, is
    // cancelled too: a halted rollout leaves no target waiting.
    const siteTemplate = ((await first.call('GET', '/api/v1/templates')).body as { id: string; name: string; sections: unknown }[]).find((x) => x.name === 'fleet_site')!;
    assert.equal((await first.call('PUT', `/api/v1/templates/${siteTemplate.id}`, { sections: siteTemplate.sections, drift_policy: 'adopt' })).status, 200);
    (applying.applier as HeldApplier).hold();
    const byHand = await rollOut('fleet_hand', ['10.0.0.7'], [steady.id, applying.id, away.id], [50, 100]);
    await (applying.applier as HeldApplier).entered;
    assert.equal((await first.call('POST', `/api/v1/rollouts/${byHand}/halt`, { reason: 'operator' })).status, 200);
    const handHalted = await progressOf(byHand);
    assert.deepEqual([handHalted.state, ...[steady, applying, away].map((light) => stateOf(handHalted, light).state)], ['halted', 'applied', 'cancelled', 'cancelled']);
    assert.match(String(stateOf(handHalted, away).reason), /the rollout halted before its wave opened/);
    assert.deepEqual(handHalted.waves.map((w: { waiting: number; cancelled: number }) => [w.waiting, w.cancelled]), [[0, 0], [0, 1], [0, 1]]);
    assert.equal(handHalted.cancelled, 2);
    assert.equal((await view(applying)).desired_revision, 2, 'back to what it runs');
    // Drift adoption waits for the revision in flight: `applying` looks in sync (desired 2 = applied 2) while it
    // applies 3, and a local edit it reports meanwhile, on an object of an `adopt` template, is not adopted then
    // (an adoption revision would follow the report of 3 and put back what 3 replaced).
    applying.applier.objects.get('aliases')![0].entries = ['192.0.2.77'];
    await until('the local edit reported in the window', async () => (await view(applying)).drifted, 60_000);
    (applying.applier as HeldApplier).release();
    await until('the held agent counted after the halt by hand', async () => stateOf(await progressOf(byHand), applying).state === 'applied');
    assert.deepEqual([(await view(applying)).desired_revision, (await view(applying)).applied_revision], [3, 3], 'no adoption revision in the window');
    assert.deepEqual((await first.call('GET', `/api/v1/audit?action=drift.adopted&appliance_id=${applying.id}`)).body, []);
    assert.deepEqual(applying.applier.objects.get('aliases')!.map((a) => a.name), ['fleet_hand']);

    // `connected` follows the process holding the socket: the roamer is on the second process, seen from the first.
    assert.equal((await view(roamer)).connected, true);
    assert.equal((await second.call('GET', '/api/v1/health')).body.agents_connected_here, 1);
    await second.kill();
    const killedAt = Date.now();
    await until('the roamer shown disconnected once its process died', async () => (await view(roamer)).connected === false, 60_000);
    t.diagnostic(`connected turned false ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the SIGKILL`);
    assert.equal((await first.call('GET', '/api/v1/fleet/summary')).body.connected, agents.length - 1);
    // The balancer sends it to the survivor.
    balancer.pointAt(first.port);
    await until('the roamer shown connected through the survivor', async () => (await view(roamer)).connected === true, 60_000);
    assert.equal((await first.call('GET', '/api/v1/health')).body.agents_connected_here, agents.length);
    // A process starting clears what dead processes left, never a live one's connections.
    await second.spawn();
    assert.equal((await first.call('GET', '/api/v1/fleet/summary')).body.connected, agents.length);
    const processes = new pg.Client({ connectionString: database.url });
    await processes.connect();
    try {
      assert.equal((await processes.query('SELECT id FROM controller_processes')).rowCount, 2, 'the dead process\'s row is gone');
      assert.equal((await processes.query('SELECT id FROM appliances WHERE connected_to IS NOT NULL')).rowCount, agents.length);
    } finally {
      await processes.end();
    }
  } finally {
    await Promise.all(agents.map((a) => a.agent.stop()));
    await balancer.close();
    await second.close(false);
    await first.close();
    await database.drop();
  }
});
