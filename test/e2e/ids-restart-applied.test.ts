/**
 * A start of Bulwark brings back the IDS engine's *applied* state, never pending edits (issue 36 item 4), on
 * `--platform linux` in a namespace the test creates, with the fake Suricata of ids-suricata.test.ts
 * (test/e2e/fixtures/fake-suricata.mjs; Suricata is not in Debian 12). A ruleset is applied; then two rulesets
 * are stored without `POST /ids/reload` — one the checker accepts, one it refuses; Bulwark is stopped (SIGTERM)
 * and started: the engine keeps its pid (adopted), runs the applied rules only, is reported running and is
 * supervised (killed, it is started again with the same rules); a reload then applies the stored edits (409 for
 * the refused ruleset, as any reload). Then, at the next start, a checker that refuses even the applied rules: the
 * running engine is still adopted (same pid) and supervised, and /status names the refusal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { sharedFile } from '../helpers/shared.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT } from '../helpers/netns-lab.js';
import { enginePid } from '../helpers/fake-suricata.js';

const RULES = sharedFile('fixtures/suricata/tunnel-testing-custom.rules');

const skipReason = () => systemSkip('the IDS restart namespace lab', {
  root: true,
  also: [['a host without a real suricata on PATH', !findProgram('suricata')]],
}) || RULES.skip;


async function until<T>(what: string, deadlineMs: number, probe: () => T | null | undefined | false, detail: () => string): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) assert.fail(`${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test('IDS at start: the applied rules run (adopted, supervised), never rules stored without a reload', { skip: skipReason(), timeout: 800_000 }, async () => {
  const lab = new NetnsLab('aids');
  const savedPath = process.env.PATH;
  try {
    const fw = lab.namespace('fw');
    const peer = lab.namespace('pe');
    const capture = `aidi${lab.tag}`;
    lab.link({ ns: fw, name: capture, address: '10.217.30.1/24' }, { ns: peer, name: `aidp${lab.tag}`, address: '10.217.30.2/24' });
    const bin = join(lab.dataDir, 'bin');
    mkdirSync(bin);
    const engineProgram = (refuseChecks: boolean) => {
      // refuseChecks: a checker that now refuses every configuration (as an upgraded Suricata might the applied rules).
      const refuse = refuseChecks ? `case " $* " in *" -T "*) echo '<Error> - [ERRCODE: SC_ERR_INVALID_SIGNATURE(39)] - error parsing signature (upgraded engine)' >&2; exit 1;; esac\n` : '';
      writeFileSync(join(bin, 'suricata'), `#!/bin/sh\n${refuse}exec ${process.execPath} ${join(ROOT, 'test/e2e/fixtures/fake-suricata.mjs')} "$@"\n`);
      chmodSync(join(bin, 'suricata'), 0o755);
    };
    engineProgram(false);
    process.env.PATH = `${bin}:${savedPath}`;
    const port = await freePort();
    lab.startBulwark(fw, port);

    lab.call('POST', '/api/v1/ids/rulesets', { name: 'applied', rule_format: 'suricata', rules_text: readFileSync(RULES.path, 'utf8') });
    lab.call('PUT', '/api/v1/ids/config', { mode: 'ids', interfaces: [capture], home_net: ['10.217.30.0/24'] });
    const loaded = lab.call('POST', '/api/v1/ids/reload');
    assert.ok(loaded.loaded_rules > 0);
    const runtime = join(lab.runtimeRoot, 'suricata');
    const mergedRules = () => readFileSync(join(runtime, 'suricata.rules'), 'utf8');
    const appliedMerged = mergedRules();
    const pid = enginePid(fw);
    assert.ok(pid, 'the engine runs');

    // Pending edits: stored, never reloaded — one the checker would take, one it refuses.
    lab.call('POST', '/api/v1/ids/rulesets', { name: 'pending', rule_format: 'suricata', rules_text: 'alert tcp any any -> any 4444 (msg:"PENDING-EDIT"; sid:9100002; rev:1;)\n' });
    lab.call('POST', '/api/v1/ids/rulesets', { name: 'pending-refused', rule_format: 'suricata', rules_text: 'alert tcp any any -> any any (msg:"FAKE-REFUSE"; sid:9100001; rev:1;)\n' });

    assert.equal(await lab.stopBulwark('SIGTERM'), 0, lab.log);
    assert.equal(enginePid(fw), pid, 'the engine outlives the API process');
    lab.startBulwark(fw, port);
    type Service = { name: string; daemon: string; enabled: boolean; running: boolean; applied_version: number | null; waiting_for: string | null; error: string | null };
    const idsService = () => (lab.call('GET', '/api/v1/status').services as Service[]).find((s) => s.name === 'ids');
    // The start merges and checks the applied rules (suricata-update, suricata -T) before it adopts: slow on a loaded machine.
    await until('the IDS service runs again after the start', 180_000, () => idsService()?.running && lab.call('GET', '/api/v1/ids/stats').running,
      () => `${JSON.stringify(idsService())} ${JSON.stringify(lab.call('GET', '/api/v1/ids/stats'))}\n${lab.log}`);
    const reported = idsService()!;
    assert.deepEqual([reported.daemon, reported.enabled, reported.running, reported.waiting_for, reported.error], ['suricata', true, true, null, null]);
    assert.equal(enginePid(fw), pid, 'adopted, not started again');
    assert.equal(mergedRules(), appliedMerged, 'the engine runs the applied rules');
    assert.ok(!mergedRules().includes('sid:9100002;') && !mergedRules().includes('FAKE-REFUSE'), 'no pending edit reached the engine');
    assert.equal(lab.call('GET', '/api/v1/ids/stats').loaded_rules, loaded.loaded_rules);

    // Supervised: killed, the adopted engine is started again, with the applied rules.
    process.kill(pid, 'SIGKILL');
    const restarted = await until('a new engine after the kill', 60_000, () => {
      const next = enginePid(fw);
      return next !== null && next !== pid && lab.call('GET', '/api/v1/ids/stats').running ? next : null;
    }, () => lab.log);
    assert.equal(lab.call('GET', '/api/v1/ids/stats').engine_restarts, 1);
    assert.equal(mergedRules(), appliedMerged);

    // A reload applies the stored edits — and, like any reload, refuses the ruleset the checker refuses (409).
    const [refused] = lab.api(['POST', '/api/v1/ids/reload']);
    assert.equal(refused.status, 409);
    assert.equal(enginePid(fw), restarted, 'a refused reload leaves the engine as it was');
    const rulesets = lab.call('GET', '/api/v1/ids/rulesets') as { id: string; name: string }[];
    lab.call('DELETE', `/api/v1/ids/rulesets/${rulesets.find((r) => r.name === 'pending-refused')!.id}`, undefined, 204);
    lab.call('POST', '/api/v1/ids/reload');
    assert.ok(mergedRules().includes('sid:9100002;'), 'the reloaded edit reached the engine');

    // The checker refuses even the applied rules at the next start: the engine left running is still adopted and
    // supervised on its last good rules, and /status says why the restore failed.
    assert.equal(await lab.stopBulwark('SIGTERM'), 0, lab.log);
    engineProgram(true);
    lab.startBulwark(fw, port);
    const failed = await until('the IDS restore reports the refusal', 180_000, () => idsService()?.error ?? null, () => `${JSON.stringify(idsService())}\n${lab.log}`);
    assert.match(failed, /^suricata -T refused the configuration: .*upgraded engine/);
    assert.equal(enginePid(fw), restarted, 'the running engine was kept');
    assert.deepEqual([idsService()!.running, lab.call('GET', '/api/v1/ids/stats').running], [true, true], 'and is reported running');
    process.kill(restarted, 'SIGKILL');
    await until('the kept engine is supervised: started again after a kill', 60_000, () => {
      const next = enginePid(fw);
      return next !== null && next !== restarted && lab.call('GET', '/api/v1/ids/stats').running;
    }, () => lab.log);
  } finally {
    process.env.PATH = savedPath;
    await lab.cleanup();
  }
});
