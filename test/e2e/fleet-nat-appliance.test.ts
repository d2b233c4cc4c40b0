/**
 * A whole Bulwark appliance (simulated platform, its own data directory) behind NAT is managed normally (issue
 * 35): it reaches the controller, nothing reaches it. Enrolled at start, it connects; a rollout is applied as one
 * change set confirmed by auto_confirm; a local edit is reported as drift; the next rollout overwrites it. Every
 * connection reaches the controller's side from the router's address. Bulwark is started once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetnsLab } from '../helpers/netns-lab.js';
import { NAT, natToController, type NatToController } from '../helpers/fleet-nat.js';
import { ControllerProcess, postgresSkip, temporaryDatabase, until } from '../helpers/fleet.js';
import { systemSkip } from '../helpers/system-skip.js';

const WHAT = 'the fleet NAT appliance test';
const skip = (await postgresSkip(WHAT)) || systemSkip(WHAT, { root: true, programs: ['ip', 'nft', 'ping'] });
/** Inside the appliance's own namespace, where nothing else listens. */
const APPLIANCE_PORT = 8080;
/** A hang guard sized for a load of 20-40 on two cores, not a figure (Bulwark's start has its own: 240 s, sign-in.mjs). */
const ROLLOUT_DEADLINE_MS = 180_000;

test('an appliance behind NAT (it reaches the controller; nothing reaches it) enrolled at start is managed normally: a rollout applied as one change set confirmed by auto_confirm, a local edit reported as drift and overwritten by the next rollout', { skip, timeout: 600_000 }, async (t) => {
  const began = Date.now();
  const figures: string[] = [];
  const mark = (what: string) => figures.push(`${what} ${((Date.now() - began) / 1000).toFixed(1)} s`);
  const database = await temporaryDatabase();
  const lab = new NetnsLab('fna');
  const tokenDir = mkdtempSync(join(tmpdir(), 'bulwark-fleet-nat-token-'));
  let controller: ControllerProcess | undefined;
  let nat: NatToController | undefined;
  let passed = false;
  // The appliance's API, from inside its namespace (without blocking this process, which serves the relay).
  const onAppliance = async (...calls: [string, string, unknown?][]) => {
    const answers = await lab.apiAsync(...calls);
    answers.forEach((answer, index) => assert.ok(answer.status < 300, `${calls[index][0]} ${calls[index][1]} answered ${answer.status}: ${JSON.stringify(answer.body)}\n${lab.log}`));
    return answers.map((answer) => answer.body);
  };
  try {
    controller = await ControllerProcess.start(database.url, { names: `127.0.0.1,${NAT.controller}` });
    nat = await natToController(lab, controller.port);
    await controller.signInFirstAdmin();
    const token = await controller.enrolmentToken('behind-nat', { site: '10.66.0.80' });
    const tokenFile = join(tokenDir, 'enrol.token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    lab.startBulwark(nat.member, APPLIANCE_PORT, ['--enrol', nat.controllerUrl, '--enrol-token-file', tokenFile], ['env', 'BULWARK_FLEET_STATUS_INTERVAL_MS=1000'], 'simulated');

    // The controller's address is a special one: the outbound guard refuses it until the administrator allows it.
    // The first call waits for Bulwark to answer; the enrolment at start is retried with backoff meanwhile.
    await onAppliance(['PUT', '/api/v1/settings/outbound', { allowed_addresses: [`${NAT.controller}/32`] }]);
    mark('appliance answering');
    const listed = await until('the appliance behind NAT enrolled and connected', async () => {
      const appliances = (await controller!.call('GET', '/api/v1/appliances')).body as { id: string; name: string; connected: boolean; health: unknown; version: string }[];
      return appliances.find((a) => a.connected && a.health);
    }, ROLLOUT_DEADLINE_MS);
    mark('enrolled and connected');
    const id = listed.id;
    assert.equal(listed.name, 'behind-nat');
    assert.ok(listed.version, 'the appliance reported its version');
    const [agent] = await onAppliance(['GET', '/api/v1/fleet/agent']);
    assert.deepEqual([agent.enrolled, agent.appliance_id, agent.controller_url, agent.last_error], [true, id, nat.controllerUrl, null]);
    assert.equal(existsSync(tokenFile), false, 'the spent token file is removed');

    // A rollout of a template owning two sections reaches it: one change set, in a window auto_confirm closed.
    const sections = {
      aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${site}'] }],
      rules: [{ label: 'fleet-web', action: 'pass', direction: 'in', interface: 'lan', protocol: 'tcp', rule_match: { src_addr: 'any', src_port: null, dst_addr: '${site}', dst_port: { start: 443, end: 443 } } }],
    };
    const template = await controller.call('POST', '/api/v1/templates', { name: 'behind nat', sections });
    assert.equal(template.status, 201, JSON.stringify(template.body));
    const rollout = async () => {
      const created = await controller!.call('POST', '/api/v1/rollouts', { template_id: template.body.id, appliance_ids: [id] });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      return until('the rollout to complete', async () => {
        const progress = (await controller!.call('GET', `/api/v1/rollouts/${created.body.id}`)).body;
        if (progress.state === 'halted') throw new Error(`halted: ${progress.halted_reason}`);
        return progress.state === 'completed' ? progress : undefined;
      }, ROLLOUT_DEADLINE_MS);
    };
    assert.equal((await rollout()).applied, 1);
    mark('first rollout applied');
    const [aliases, rules, window, history, applied] = await onAppliance(['GET', '/api/v1/aliases'], ['GET', '/api/v1/rules'], ['GET', '/api/v1/config/commit-confirm/status'], ['GET', '/api/v1/config/history'], ['GET', '/api/v1/fleet/agent']);
    const alias = aliases.find((a: { name: string }) => a.name === 'fleet_web');
    assert.deepEqual(alias?.entries, ['10.66.0.80']);
    assert.equal(rules.find((r: { label: string }) => r.label === 'fleet-web')?.rule_match.dst_addr, '10.66.0.80');
    assert.deepEqual([window.revert_pending, window.last?.outcome, window.last?.confirmed_by], [false, 'confirmed', 'auto-confirm']);
    // Both objects came in one applied version, the first after the window's rollback target.
    const since = (history as { version: number; source: string }[]).filter((v) => v.version > window.last.rollback_version);
    assert.deepEqual(since.map((v) => v.source), ['apply'], JSON.stringify(history));
    assert.deepEqual(applied.attempts.map((a: { revision: number; outcome: string }) => [a.revision, a.outcome]), [[1, 'applied']]);
    const view = (await controller.call('GET', `/api/v1/appliances/${id}`)).body;
    assert.deepEqual([view.in_sync, view.applied_revision, view.drifted], [true, 1, false]);

    // A local edit is reported as drift; the next rollout (policy overwrite) puts the template's value back.
    await onAppliance(['PUT', `/api/v1/aliases/${alias.id}`, { ...alias, entries: ['10.99.0.1'] }]);
    const drifted = await until('the local edit reported as drift', async () => {
      const appliance = (await controller!.call('GET', `/api/v1/appliances/${id}`)).body;
      return appliance.drifted ? appliance : undefined;
    }, ROLLOUT_DEADLINE_MS);
    assert.deepEqual(drifted.drift, [{ section: 'aliases', name: 'fleet_web', kind: 'changed', fields: ['entries'] }]);
    mark('drift reported');
    await rollout();
    mark('overwriting rollout applied');
    const [after, again, attempts] = await onAppliance(['GET', '/api/v1/aliases'], ['GET', '/api/v1/config/commit-confirm/status'], ['GET', '/api/v1/fleet/agent']);
    assert.deepEqual(after.find((a: { name: string }) => a.name === 'fleet_web')?.entries, ['10.66.0.80']);
    assert.deepEqual([again.last?.outcome, again.last?.confirmed_by], ['confirmed', 'auto-confirm']);
    assert.deepEqual(attempts.attempts.map((a: { revision: number; outcome: string }) => [a.revision, a.outcome]), [[1, 'applied'], [2, 'applied']]);
    await until('the overwritten drift to clear', async () => {
      const appliance = (await controller!.call('GET', `/api/v1/appliances/${id}`)).body;
      return !appliance.drifted && appliance.in_sync;
    }, ROLLOUT_DEADLINE_MS);

    // Every connection (enrolment, agent socket, reconnects) arrived from the router's address: translated. The
    // other way there is no path, even while the appliance holds its connection.
    const sources = nat.sources();
    assert.ok(sources.length >= 2, `enrolment and the agent's connection relayed: ${sources.length}`);
    assert.deepEqual([...new Set(sources)], [NAT.routerOutside]);
    assert.equal(nat.controllerSideReachesMember(), false, 'the controller side cannot reach the appliance');
    t.diagnostic(`${figures.join('; ')}; ${sources.length} connections relayed; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    passed = true;
  } finally {
    // Each step runs whatever the one before did: the appliance and the relay (in the lab), the namespaces, the
    // unix socket, the controller, the database.
    const steps = [() => lab.cleanup(), () => nat?.close(), () => controller?.close(), () => database.drop(), () => rmSync(tokenDir, { recursive: true, force: true })];
    const failures: unknown[] = [];
    for (const step of steps) await Promise.resolve().then(step).catch((error: unknown) => failures.push(error));
    // A cleanup failure fails a test that passed; after a failure it is only reported (the first error stays).
    if (failures.length && passed) throw failures[0];
    for (const failure of failures) t.diagnostic(`cleanup: ${(failure as Error).message}`);
  }
});
