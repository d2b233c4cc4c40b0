/**
 * The fleet at the scale: a controller on PostgreSQL, 10 real Bulwark appliances (simulated platform), each
 * in its own process, and 1,000 light agents (the same agent code over an in-memory stand-in) in a few processes,
 * all enrolled with tokens of their own. A template that breaks an appliance's assertion halts the rollout at its
 * canary (a real appliance), which rolls itself back through commit-confirm, and no other target is touched; a
 * good template reaches all 1,010 in waves as one change set each, with the controller SIGKILLed mid-rollout and
 * started again, and every target, by its own records, applies it once. Then drift on the appliances, overwritten
 * and adopted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { freePort } from './helpers/free-port.js';
import { ControllerProcess, dieWithParent, exitWithTestRunner, postgresSkip, temporaryDatabase, until } from './helpers/fleet.js';
import { LightAgentProcess, type LightAgentRecord } from './helpers/fleet-light-agents.js';

// A runner or test process SIGKILLed takes the controllers (and appliances) it started with it.
await exitWithTestRunner();
const skip = await postgresSkip('the fleet appliance tests');
const APPLIANCES = 10;
const LIGHT_AGENTS = 1000;
const LIGHT_PROCESSES = 4;
/** Enrolments in flight per light agent process (each a token, a CA fetch, key pairs and a signed request). */
const ENROLMENTS_PER_PROCESS = 4;
/** Light agents report status at the product's interval; they redial quickly after the controller is killed. */
const LIGHT_TIMING = { statusIntervalMs: 30_000, backoff: { initialMs: 500, maxMs: 4000 } };
const lightWeb = (index: number) => `10.${64 + (index >> 8)}.${index & 255}.1`;

/** Every process this file starts, SIGKILLed when it exits however it exits (a timeout, a signal, a failure). */
const children = new Set<() => ChildProcess | null>();
process.on('exit', () => {
  for (const child of children) child()?.kill('SIGKILL');
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(1));

class ApplianceProcess {
  child: ChildProcess | null = null;
  output = '';
  token = '';
  readonly dataDir = mkdtempSync(join(tmpdir(), 'bulwark-fleet-appliance-'));
  constructor(readonly port: number, readonly extraArgs: string[] = []) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, dieWithParent(['--import', 'tsx', 'src/main.ts', '--listen', `127.0.0.1:${this.port}`, '--data-dir', this.dataDir, '--platform', 'simulated', ...this.extraArgs]), {
      // stdin: the pipe whose end tells the appliance this test is gone, even SIGKILLed (die-with-parent.mjs).
      stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, BULWARK_FLEET_STATUS_INTERVAL_MS: '1000', BULWARK_LOG_LEVEL: 'warn' },
    });
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.child = child;
    children.add(() => this.child);
    await until(`appliance on ${this.port} to answer`, async () => {
      if (child.exitCode !== null) throw new Error(`appliance exited: ${this.output}`);
      return (await fetch(`http://127.0.0.1:${this.port}/api/v1/auth/register`)).ok;
    }, 360_000, 500);
    const credentials = { username: 'admin', password: 'Appliance-admin-1' };
    await this.call('POST', '/api/v1/auth/register', credentials);
    this.token = (await this.call('POST', '/api/v1/auth/login', credentials)).body.access_token;
    assert.ok(this.token, 'signed in to the appliance');
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  async close(): Promise<void> {
    this.child?.kill('SIGKILL');
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Light agents whose own records differ from what is expected of them (at most five shown). */
function unlike(records: LightAgentRecord[], expected: (record: LightAgentRecord, index: number) => unknown, actual: (record: LightAgentRecord) => unknown): string[] {
  return records.flatMap((record, index) => {
    const [want, got] = [JSON.stringify(expected(record, index)), JSON.stringify(actual(record))];
    return want === got ? [] : [`${record.id}: ${got}, not ${want}`];
  }).slice(0, 5);
}

test(`fleet: ${APPLIANCES} real appliances and ${LIGHT_AGENTS} light agents; a breaking template halts at a real appliance's canary, which rolls back; a good one reaches all in waves across a controller killed mid-rollout, applied once each`, { skip, timeout: 720_000 }, async (t) => {
  const began = Date.now();
  const figure = (what: string, since: number) => t.diagnostic(`${what}: ${((Date.now() - since) / 1000).toFixed(1)} s (load average ${loadavg()[0].toFixed(1)})`);
  const database = await temporaryDatabase();
  const tokenDir = mkdtempSync(join(tmpdir(), 'bulwark-fleet-token-'));
  const tokenFile = join(tokenDir, 'enrol.token');
  const appliances: ApplianceProcess[] = [];
  const workers: LightAgentProcess[] = [];
  let controller: ControllerProcess | null = null;
  try {
    // Everything starts at once: the controller, the appliances (each compiles its schemas) and the agent processes.
    const workersStarted = Promise.all(Array.from({ length: LIGHT_PROCESSES }, async () => {
      const worker = await LightAgentProcess.start();
      workers.push(worker);
      children.add(() => worker.child);
    }));
    controller = await ControllerProcess.start(database.url);
    const running = controller;
    children.add(() => running.child);
    await running.signInFirstAdmin();
    // The last appliance enrols at start (--enrol, --enrol-token-file), as provisioning would set it up.
    const startupToken = await running.enrolmentToken(`site-${APPLIANCES - 1}`, { web: `10.20.${APPLIANCES - 1}.80` });
    writeFileSync(tokenFile, `${startupToken}\n`, { mode: 0o600 });
    for (let index = 0; index < APPLIANCES; index += 1) {
      appliances.push(new ApplianceProcess(await freePort(), index === APPLIANCES - 1 ? ['--enrol', running.url, '--enrol-token-file', tokenFile] : []));
    }
    await Promise.all([...appliances.map((appliance) => appliance.start()), workersStarted]);
    figure('controller, appliances and agent processes started', began);
    // Enrolment through the appliance's own API: the controller on loopback must be on the outbound allow-list.
    const first = appliances[0];
    const unguarded = await first.call('POST', '/api/v1/fleet/enrol', { controller_url: running.url, token: await running.enrolmentToken('unguarded') });
    assert.equal(unguarded.status, 400);
    assert.match(unguarded.body.error, /outbound request refused/);
    const ids: string[] = new Array(APPLIANCES);
    const enrolOverApi = async (index: number) => {
      const appliance = appliances[index];
      assert.equal((await appliance.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] })).status, 200);
      const enrolled = await appliance.call('POST', '/api/v1/fleet/enrol', { controller_url: running.url, token: await running.enrolmentToken(`site-${index}`, { web: `10.20.${index}.80` }) });
      assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
      ids[index] = enrolled.body.appliance_id;
    };
    // site-0 enrols first: the earliest enrolled is a rollout's canary. Then the light agents, the appliances meanwhile.
    await enrolOverApi(0);
    const enrolling = Date.now();
    const lightEnrolled = Promise.all(workers.map((worker, k) => {
      const share = Array.from({ length: LIGHT_AGENTS / LIGHT_PROCESSES }, (_, i) => k * (LIGHT_AGENTS / LIGHT_PROCESSES) + i);
      return worker.enrol(running.url, running.token, share.map((index) => ({ name: `light-${index}`, variables: { web: lightWeb(index) } })), LIGHT_TIMING, ENROLMENTS_PER_PROCESS);
    }));
    lightEnrolled.catch(() => undefined); // awaited below; a failure meanwhile must not be an unhandled rejection
    await Promise.all(appliances.slice(1, -1).map((_, k) => enrolOverApi(k + 1)));
    // Enrolment at start: refused by the outbound guard until the controller is allowed, then retried.
    const startup = appliances[APPLIANCES - 1];
    const waiting = await until('the refused attempt shown', async () => {
      const status = (await startup.call('GET', '/api/v1/fleet/agent')).body;
      return status.last_error ? status : undefined;
    });
    assert.equal(waiting.enrolled, false);
    assert.match(waiting.last_error, /outbound request refused/);
    assert.equal((await startup.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32'] })).status, 200);
    const agent = await until('the appliance enrolled at start', async () => {
      const status = (await startup.call('GET', '/api/v1/fleet/agent')).body;
      return status.enrolled ? status : undefined;
    }, 180_000, 500);
    ids[APPLIANCES - 1] = agent.appliance_id;
    assert.equal(existsSync(tokenFile), false, 'the spent token file is removed');
    // The token's secret appears nowhere in the appliance's output.
    assert.equal(startup.output.includes(startupToken.split('.')[2]), false);
    assert.equal((await first.call('POST', '/api/v1/fleet/enrol', { controller_url: running.url, token: await running.enrolmentToken('again') })).status, 409);
    const lightIds = (await lightEnrolled).flat();
    assert.equal(new Set(lightIds).size, LIGHT_AGENTS);
    const fleet = [...ids, ...lightIds];
    await until('every appliance and agent connected', async () => (await running.call('GET', '/api/v1/health')).body.agents_connected_here === fleet.length, 240_000, 1000);
    figure(`${LIGHT_AGENTS} light agents enrolled ${ENROLMENTS_PER_PROCESS * LIGHT_PROCESSES} at a time, and all ${fleet.length} connected`, enrolling);
    await until('every appliance reporting its health', async () => {
      const listed = (await running.call('GET', '/api/v1/appliances?limit=10000')).body as { id: string; connected: boolean; health: unknown }[];
      return ids.every((id) => listed.find((a) => a.id === id)?.connected && listed.find((a) => a.id === id)?.health);
    }, 120_000, 1000);
    const progressOf = async (id: string) => (await running.call('GET', `/api/v1/rollouts/${id}`)).body;
    const lightRecords = async () => (await Promise.all(workers.map((worker) => worker.records()))).flat();

    // A template whose assertion does not hold once applied (the simulated box answers every probe; it expects none).
    const breaking = await running.call('POST', '/api/v1/templates', { name: 'breaking', sections: {
      aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${web}'] }],
      assertions: [{ name: 'resolver unreachable', kind: 'probe', probe: 'tcp', target: '192.0.2.53', port: 53, source_interface: 'eth0', expect: 'block', interval_seconds: 3600 }],
    } });
    assert.equal(breaking.status, 201, JSON.stringify(breaking.body));
    const halted = await running.call('POST', '/api/v1/rollouts', { template_id: breaking.body.id, appliance_ids: fleet, canary: 1, percentages: [100] });
    assert.equal(halted.status, 201, JSON.stringify(halted.body));
    const stopped = await until('the breaking rollout to halt', async () => {
      const progress = await progressOf(halted.body.id);
      return progress.state === 'halted' ? progress : undefined;
    }, 180_000, 1000);
    assert.match(stopped.halted_reason, /appliance "site-0" failed: rolled back on the appliance \(rolled_back\).*resolver unreachable/);
    assert.deepEqual(stopped.waves.map((w: { size: number; applied: number; failed: number; due: number }) => [w.size, w.applied, w.failed, w.due]), [[1, 0, 1, 0], [fleet.length - 1, 0, 0, 0]]);
    // The canary rolled itself back: neither the alias nor the assertion stays; the others were never touched.
    for (const appliance of appliances) {
      assert.deepEqual((await appliance.call('GET', '/api/v1/aliases')).body.filter((a: { name: string }) => a.name === 'fleet_web'), []);
      assert.deepEqual((await appliance.call('GET', '/api/v1/assertions')).body, []);
    }
    assert.equal((await first.call('GET', '/api/v1/config/commit-confirm/status')).body.last.outcome, 'rolled_back');
    assert.deepEqual(unlike(await lightRecords(), () => [0, []], (r) => [r.applies, r.attempts]), [], 'no light agent attempted the breaking template');

    // A good template in waves across all of them (1, then 10 %, 50 %, 100 %) with a soak time; the controller is
    // SIGKILLed in the third wave and started again.
    // It owns aliases, rules, NAT and DNS host records (in the shape the appliance reads them back).
    const sections = {
      aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${web}'] }],
      rules: [{ label: 'fleet-web', action: 'pass', direction: 'in', interface: 'lan', protocol: 'tcp', rule_match: { src_addr: 'any', src_port: null, dst_addr: '${web}', dst_port: { start: 443, end: 443 } } }],
      nat: [{ label: 'fleet-dnat', nat_type: 'dnat', interface: 'wan', protocol: 'tcp', dst_port: { start: 8443, end: 8443 }, redirect: { address: '${web}', port: { start: 443, end: 443 } } }],
      dns_hosts: [{ hostname: 'www', domain: 'fleet.example', record_type: 'A', value: '${web}' }],
    };
    const good = await running.call('POST', '/api/v1/templates', { name: 'good', sections });
    const rollingOut = Date.now();
    const rollout = (await running.call('POST', '/api/v1/rollouts', { template_id: good.body.id, appliance_ids: fleet, canary: 1, percentages: [10, 50, 100], wave_interval_seconds: 2 })).body.id as string;
    // The kill comes while the third wave's agents pull, apply and report: as soon as one agent process has more
    // agents applied than its share of the first two waves (101 targets), by the agents' own records.
    let giveUp: NodeJS.Timeout | undefined;
    const appliedInOne = await Promise.race([
      ...workers.map((worker) => worker.whenApplied(50)),
      new Promise<never>((_, reject) => (giveUp = setTimeout(() => reject(new Error('timed out waiting for the third wave under way')), 240_000))),
    ]).finally(() => clearTimeout(giveUp));
    await running.kill();
    const appliedAtKill = (await lightRecords()).filter((record) => record.applied_revision === 2).length;
    t.diagnostic(`controller SIGKILLed with ${appliedInOne} light agents of one process applied; ${appliedAtKill} of ${LIGHT_AGENTS} just after`);
    const restarting = Date.now();
    await running.spawn();
    figure('controller restarted', restarting);
    const done = await until('the rollout to complete after the restart', async () => {
      const progress = await progressOf(rollout);
      return progress.state === 'completed' ? progress : undefined;
    }, 300_000, 1000);
    figure(`rollout to ${fleet.length} in waves across the restart`, rollingOut);
    assert.deepEqual(done.waves.map((w: { size: number }) => w.size), [1, 100, 404, 505]);
    assert.equal(done.applied, fleet.length);
    assert.equal(done.failed, 0);
    for (const [index, appliance] of appliances.entries()) {
      const alias = (await appliance.call('GET', '/api/v1/aliases')).body.find((a: { name: string }) => a.name === 'fleet_web');
      assert.deepEqual(alias?.entries, [`10.20.${index}.80`]);
      assert.equal((await appliance.call('GET', '/api/v1/rules')).body.find((r: { label: string }) => r.label === 'fleet-web')?.rule_match.dst_addr, `10.20.${index}.80`);
      assert.equal((await appliance.call('GET', '/api/v1/nat')).body.find((r: { label: string }) => r.label === 'fleet-dnat')?.redirect.address, `10.20.${index}.80`);
      assert.equal((await appliance.call('GET', '/api/v1/dns/resolver/hosts')).body.find((h: { hostname: string }) => h.hostname === 'www')?.value, `10.20.${index}.80`);
      const agent = (await appliance.call('GET', '/api/v1/fleet/agent')).body;
      const attempts = agent.attempts as { revision: number; outcome: string }[];
      // Each revision number attempted once: the canary failed 1 and applied 2; the others applied 2 only.
      assert.deepEqual(attempts.map((a) => [a.revision, a.outcome]), index === 0 ? [[1, 'failed'], [2, 'applied']] : [[2, 'applied']]);
      const confirmed = (await appliance.call('GET', '/api/v1/config/commit-confirm/status')).body.last;
      assert.equal(confirmed.outcome, 'confirmed');
    }
    // Every light agent, by its own records: revision 2 attempted once and applied, its stand-in applied once, and
    // it holds the alias with its own variable.
    const records = await lightRecords();
    assert.equal(records.length, LIGHT_AGENTS);
    assert.deepEqual(unlike(records, () => [1, [[2, 'applied']]], (r) => [r.applies, r.attempts]), [], 'every light agent applied revision 2 exactly once');
    const webOf = new Map(lightIds.map((id, index) => [id, lightWeb(index)]));
    assert.deepEqual(unlike(records, (r) => [webOf.get(r.id)], (r) => r.aliases.find((a) => a.name === 'fleet_web')?.entries), [], 'every light agent holds its own alias');
    // Drift: a local edit on an appliance shows on the controller.
    const second = appliances[1];
    const alias = (await second.call('GET', '/api/v1/aliases')).body.find((a: { name: string }) => a.name === 'fleet_web');
    assert.equal((await second.call('PUT', `/api/v1/aliases/${alias.id}`, { ...alias, entries: ['10.99.0.1'] })).status, 200);
    const drifted = await until('drift reported', async () => {
      const view = (await running.call('GET', `/api/v1/appliances/${ids[1]}`)).body;
      return view.drifted ? view : undefined;
    });
    assert.deepEqual(drifted.drift, [{ section: 'aliases', name: 'fleet_web', kind: 'changed', fields: ['entries'] }]);

    // Policy overwrite (the default): the next rollout puts the template's value back, and the drift is gone.
    const overwrite = (await running.call('POST', '/api/v1/rollouts', { template_id: good.body.id, appliance_ids: [ids[1]], canary: 1, percentages: [100] })).body.id as string;
    await until('the overwriting rollout', async () => (await running.call('GET', `/api/v1/rollouts/${overwrite}`)).body.state === 'completed', 180_000);
    assert.deepEqual((await second.call('GET', '/api/v1/aliases')).body.find((a: { name: string }) => a.name === 'fleet_web').entries, ['10.20.1.80']);
    await until('the overwritten drift to clear', async () => !(await running.call('GET', `/api/v1/appliances/${ids[1]}`)).body.drifted);

    // Policy adopt: two local edits in one change set on the appliance that enrolled at start. The NAT port (no
    // variable) becomes the template's; the DNS value (exactly ${web}) becomes this appliance's variable.
    assert.equal((await running.call('PUT', `/api/v1/templates/${good.body.id}`, { sections, drift_policy: 'adopt' })).status, 200);
    const third = appliances[2];
    const nat = (await third.call('GET', '/api/v1/nat')).body.find((r: { label: string }) => r.label === 'fleet-dnat');
    const host = (await third.call('GET', '/api/v1/dns/resolver/hosts')).body.find((h: { hostname: string }) => h.hostname === 'www');
    const edited = await third.call('POST', '/api/v1/changes', { operations: [
      { op: 'update', path: `/api/v1/nat/${nat.id}`, body: { dst_port: { start: 9443, end: 9443 } } },
      { op: 'update', path: `/api/v1/dns/resolver/hosts/${host.id}`, body: { ...host, value: '10.77.0.2' } },
    ] });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const adopted = await until('the edits adopted into the template', async () => {
      const template = (await running.call('GET', `/api/v1/templates/${good.body.id}`)).body;
      return template.sections.nat[0].dst_port.start === 9443 ? template : undefined;
    });
    assert.deepEqual(adopted.sections.dns_hosts, sections.dns_hosts, 'a variable field stays a variable');
    const adoptedAppliance = await until('the adopting appliance in sync without drift', async () => {
      const view = (await running.call('GET', `/api/v1/appliances/${ids[2]}`)).body;
      return !view.drifted && view.in_sync && view.variables.web === '10.77.0.2' ? view : undefined;
    });
    assert.equal(adoptedAppliance.last_outcome.outcome, 'applied');
    // Nothing was written back on it: the local edits stand.
    assert.equal((await third.call('GET', '/api/v1/nat')).body.find((r: { label: string }) => r.label === 'fleet-dnat').dst_port.start, 9443);
    const adoptions = (await running.call('GET', `/api/v1/audit?action=drift.adopted&appliance_id=${ids[2]}`)).body as { detail: { section: string } }[];
    assert.deepEqual(adoptions.map((e) => e.detail.section).sort(), ['dns_hosts', 'nat']);
    // The next rollout takes the adopted template everywhere: the NAT port on every appliance, the variable on its own.
    const spread = (await running.call('POST', '/api/v1/rollouts', { template_id: good.body.id, appliance_ids: ids, canary: 1, percentages: [100] })).body.id as string;
    await until('the adopted template rolled out', async () => (await running.call('GET', `/api/v1/rollouts/${spread}`)).body.state === 'completed', 180_000);
    for (const [index, appliance] of appliances.entries()) {
      assert.equal((await appliance.call('GET', '/api/v1/nat')).body.find((r: { label: string }) => r.label === 'fleet-dnat').dst_port.start, 9443);
      const web = index === 2 ? '10.77.0.2' : `10.20.${index}.80`;
      assert.deepEqual((await appliance.call('GET', '/api/v1/aliases')).body.find((a: { name: string }) => a.name === 'fleet_web').entries, [web]);
    }
    t.diagnostic(`appliance versions: ${JSON.stringify((await running.call('GET', '/api/v1/fleet/summary')).body.versions)}`);
    figure('the whole test', began);
  } finally {
    // Each step on its own: one failing leaves no process running and no database behind.
    await Promise.allSettled([...appliances.map((appliance) => appliance.close()), ...workers.map((worker) => worker.kill()), controller?.close()]);
    rmSync(tokenDir, { recursive: true, force: true });
    await database.drop();
  }
});
