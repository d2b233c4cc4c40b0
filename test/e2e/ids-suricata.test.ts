/**
 * The IDS engine on `--platform linux`, in a namespace the test creates. Suricata is not packaged in Debian 12,
 * so first the machine has none: status says so, reload and buffer-stats answer 503 naming what to install,
 * and rulesets, rule search and suppressions still work. Then a fake `suricata`
 * (test/e2e/fixtures/fake-suricata.mjs) appears on PATH: reload renders suricata.yaml, has it checked with
 * `suricata -T`, runs the engine on the namespace's interface, and EVE alerts the engine writes (the real
 * tunnel-testing EVE log from ../shared) are listed by /ids/alerts within a second; rule changes reach the
 * running engine without a restart (SIGUSR2); a ruleset the checker refuses is 409 and the engine keeps running;
 * an engine killed with SIGKILL is restarted by Bulwark's supervision and its alerts are read again; a restart of
 * Bulwark (SIGTERM) leaves the engine running and the next start adopts it (same pid) and reads its alerts again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { sharedFile } from '../helpers/shared.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT } from '../helpers/netns-lab.js';
import { enginePid } from '../helpers/fake-suricata.js';

const EVE = sharedFile('fixtures/suricata/eve/tunnel-testing-detectable-raw-noise-eve.json');
const RULES = sharedFile('fixtures/suricata/tunnel-testing-custom.rules');

const skipReason = () => systemSkip('the IDS namespace lab', {
  root: true,
  // The suite proves the behaviour with a fake engine: a real suricata on PATH would be run instead.
  also: [['a host without a real suricata on PATH', !findProgram('suricata')]],
}) || EVE.skip || RULES.skip;


test('IDS engine: without Suricata 503 naming it; with a (fake) Suricata: rendered, checked, supervised, EVE alerts listed within a second', { skip: skipReason(), timeout: 540_000 }, async (t) => {
  const lab = new NetnsLab('b16s');
  const savedPath = process.env.PATH;
  try {
    const fw = lab.namespace('fw');
    const peer = lab.namespace('pe');
    const capture = `b16i${lab.tag}`;
    lab.link({ ns: fw, name: capture, address: '10.216.30.1/24' }, { ns: peer, name: `b16p${lab.tag}`, address: '10.216.30.2/24' });
    const bin = join(lab.dataDir, 'bin');
    mkdirSync(bin);
    process.env.PATH = `${bin}:${savedPath}`;
    process.env.FAKE_SURICATA_EVE = EVE.path;
    const port = await freePort();
    lab.startBulwark(fw, port);

    // No Suricata: the status says so, control answers 503 naming it; the rest of the area works.
    const stats = lab.call('GET', '/api/v1/ids/stats');
    assert.equal(stats.engine_installed, false);
    assert.match(stats.engine, /Suricata is not installed.*install.*suricata/);
    const [reload, buffer] = lab.api(['POST', '/api/v1/ids/reload'], ['GET', '/api/v1/ids/alerts/buffer-stats']);
    assert.equal(reload.status, 503);
    assert.deepEqual(Object.keys(reload.body), ['error']);
    assert.match(reload.body.error, /suricata is not installed on this system: install the Debian package suricata/);
    assert.equal(buffer.status, 503);
    const ruleset = lab.call('POST', '/api/v1/ids/rulesets', { name: 'tunnel-testing', rule_format: 'suricata', rules_text: readFileSync(RULES.path, 'utf8') });
    assert.ok(ruleset.rule_count > 0);
    const found = lab.call('GET', '/api/v1/ids/rules/search?q=tunnel');
    assert.ok(found.length > 0, 'full-text search works without an engine');
    const suppression = lab.call('POST', '/api/v1/ids/suppressions', { sid: 1, suppress_type: 'src', ip_cidr: '192.0.2.1' });
    assert.equal(suppression.sid, 1);

    // A (fake) Suricata appears on PATH.
    writeFileSync(join(bin, 'suricata'), `#!/bin/sh\nexec ${process.execPath} ${join(ROOT, 'test/e2e/fixtures/fake-suricata.mjs')} "$@"\n`);
    chmodSync(join(bin, 'suricata'), 0o755);
    lab.call('PUT', '/api/v1/ids/config', { mode: 'ids', interfaces: [capture], home_net: ['10.216.30.0/24'] });
    const loaded = lab.call('POST', '/api/v1/ids/reload');
    assert.ok(loaded.loaded_rules > 0, JSON.stringify(loaded));
    const running = lab.call('GET', '/api/v1/ids/stats');
    assert.equal(running.running, true);
    assert.match(running.engine, /7\.0\.0-fake/);
    const runtime = join(lab.runtimeRoot, 'suricata');
    const yaml = readFileSync(join(runtime, 'suricata.yaml'), 'utf8');
    assert.match(yaml, /^%YAML 1\.1\n---\n/);
    assert.match(yaml, new RegExp(`interface: ${capture}`));
    assert.match(yaml, /HOME_NET: 10\.216\.30\.0\/24/);
    assert.match(readFileSync(join(runtime, 'threshold.config'), 'utf8'), /^suppress gen_id 1, sig_id 1, track by_src, ip 192\.0\.2\.1$/m);
    // suricata-update merged the ruleset's file into suricata.rules: every checked rule is there.
    const merged = readFileSync(join(runtime, 'suricata.rules'), 'utf8').split('\n').filter((line) => line && !line.startsWith('#'));
    assert.equal(merged.length, loaded.loaded_rules);
    const pid = enginePid(fw);
    assert.ok(pid, 'the engine runs in the namespace');

    // The engine writes EVE alerts; /ids/alerts lists them (the watcher waits up to 20 s; the delay is reported).
    const expected = readFileSync(EVE.path, 'utf8').split('\n').filter((line) => line.includes('"event_type":"alert"')).length;
    const watch = spawn('ip', ['netns', 'exec', fw, process.execPath, join(ROOT, 'test/e2e/fixtures/ids-alert-watch.mjs'), lab.base, String(expected)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let watched = '';
    watch.stdout.on('data', (chunk: Buffer) => (watched += chunk.toString()));
    const watchDone = new Promise((resolve) => watch.on('exit', resolve));
    while (!watched.includes('ready')) await new Promise((resolve) => setTimeout(resolve, 50));
    process.kill(pid, 'SIGUSR1');
    await watchDone;
    const { seenAt } = JSON.parse(watched.trim().split('\n').at(-1)!) as { seenAt: number | null };
    const writtenAt = Number(readFileSync(join(runtime, 'state', 'written-at'), 'utf8'));
    assert.ok(seenAt !== null, `the ${expected} alerts were never listed\n${lab.log}`);
    t.diagnostic(`${expected} EVE alerts listed by /ids/alerts ${seenAt - writtenAt} ms after the engine wrote them`);
    const after = lab.call('GET', '/api/v1/ids/stats');
    assert.equal(after.packets_inspected, 1324, 'counters from the EVE stats record');
    assert.ok(after.alerts_total >= expected);
    assert.equal(lab.call('GET', '/api/v1/ids/alerts/buffer-stats').running, true);

    // A rule change reaches the running engine without a restart.
    const rule = lab.call('GET', '/api/v1/ids/rules?limit=1')[0];
    assert.ok(Number.isInteger(rule.sid) && readFileSync(join(runtime, 'suricata.rules'), 'utf8').includes(`sid:${rule.sid};`));
    lab.call('PUT', `/api/v1/ids/rules/${rule.id}`, { enabled: false });
    const reloaded = lab.call('POST', '/api/v1/ids/reload');
    assert.equal(reloaded.loaded_rules, loaded.loaded_rules - 1);
    assert.ok(!readFileSync(join(runtime, 'suricata.rules'), 'utf8').includes(`sid:${rule.sid};`), 'the disabled SID is gone from the merged file');
    assert.equal(enginePid(fw), pid, 'same engine process (SIGUSR2 rule reload)');

    // A ruleset Suricata's checker refuses: 409 with its one-line reason; the engine keeps running.
    lab.call('POST', '/api/v1/ids/rulesets', { name: 'refused', rule_format: 'suricata', rules_text: 'alert tcp any any -> any any (msg:"FAKE-REFUSE"; sid:9000001; rev:1;)\n' });
    const [refused] = lab.api(['POST', '/api/v1/ids/reload']);
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /^suricata -T refused the configuration: <Error> - \[ERRCODE: SC_ERR_INVALID_SIGNATURE\(39\)\]/);
    assert.equal(enginePid(fw), pid);

    // Supervision: an engine killed outright is started again with the same files, the stats report the restart,
    // and alerts the new engine writes are listed again.
    assert.equal(lab.call('GET', '/api/v1/ids/stats').engine_restarts, 0);
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    let restartedPid = enginePid(fw);
    while ((restartedPid === null || restartedPid === pid || !lab.call('GET', '/api/v1/ids/stats').running) && Date.now() - killedAt < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      restartedPid = enginePid(fw);
    }
    assert.ok(restartedPid && restartedPid !== pid, `no new engine process after the kill\n${lab.log}`);
    const recovery = Date.now() - killedAt;
    t.diagnostic(`Suricata SIGKILLed: a new engine ran after ${recovery} ms`);
    const supervised = lab.call('GET', '/api/v1/ids/stats');
    assert.deepEqual([supervised.running, supervised.engine_restarts, supervised.engine_last_error], [true, 1, null]);
    const restartedArgs = readFileSync(`/proc/${restartedPid}/cmdline`, 'utf8').split('\0');
    assert.equal(restartedArgs[restartedArgs.indexOf('-c') + 1], join(runtime, 'suricata.yaml'), 'the same configuration');
    const storedBefore = lab.call('GET', '/api/v1/ids/stats').alerts_total as number;
    process.kill(restartedPid, 'SIGUSR1');
    const wroteAgainAt = Date.now();
    while ((lab.call('GET', '/api/v1/ids/stats').alerts_total as number) < storedBefore + expected && Date.now() - wroteAgainAt < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok((lab.call('GET', '/api/v1/ids/stats').alerts_total as number) >= storedBefore + expected, 'the restarted engine\'s alerts are read');

    // A restart of Bulwark: the engine is detached, so it keeps running; the next start adopts it (same pid) and
    // follows its EVE output again.
    // The refused ruleset is a stored edit: the start runs the applied rules without it (ids-restart-applied.test.ts);
    // deleted here so the reloads below apply.
    const rulesets = lab.call('GET', '/api/v1/ids/rulesets') as { id: string; name: string }[];
    lab.call('DELETE', `/api/v1/ids/rulesets/${rulesets.find((r) => r.name === 'refused')!.id}`, undefined, 204);
    t.diagnostic('restarting Bulwark under the running engine');
    assert.equal(await lab.stopBulwark('SIGTERM'), 0, lab.log);
    assert.equal(enginePid(fw), restartedPid, 'the engine outlives the API process');
    lab.startBulwark(fw, port);
    const startedAt = Date.now();
    // The start merges and checks the applied rules again (suricata-update, suricata -T) before it adopts: slow on a loaded machine.
    while (!lab.call('GET', '/api/v1/ids/stats').running && Date.now() - startedAt < 150_000) await new Promise((resolve) => setTimeout(resolve, 500));
    const processes = () => spawnSync('ip', ['netns', 'pids', fw], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
      .map((pid) => { try { return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 160)}`; } catch { return `${pid}: gone`; } }).join('\n');
    assert.equal(lab.call('GET', '/api/v1/ids/stats').running, true, `the engine runs after the start: ${JSON.stringify(lab.call('GET', '/api/v1/ids/stats'))}\n${processes()}\n${lab.log}`);
    assert.equal(enginePid(fw), restartedPid, 'adopted, not started again');
    t.diagnostic(`Bulwark started again: the engine (pid ${restartedPid}) adopted after ${Date.now() - startedAt} ms`);
    const storedAtStart = lab.call('GET', '/api/v1/ids/stats').alerts_total as number;
    process.kill(restartedPid, 'SIGUSR1');
    const wroteAfterStartAt = Date.now();
    while ((lab.call('GET', '/api/v1/ids/stats').alerts_total as number) < storedAtStart + expected && Date.now() - wroteAfterStartAt < 10_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok((lab.call('GET', '/api/v1/ids/stats').alerts_total as number) >= storedAtStart + expected, 'the adopted engine\'s alerts are read');

    // IPS: the engine reads NFQUEUE 0 and forwarded traffic is queued to it (its own nft table, fail-open).
    lab.call('PUT', '/api/v1/ids/config', { mode: 'ips' });
    // Whether this kernel has the nftables queue expression, asked in a namespace of its own.
    const probe = `b16q-${lab.tag}`;
    spawnSync('ip', ['netns', 'add', probe]);
    const queueSupported = spawnSync('ip', ['netns', 'exec', probe, 'nft', 'add table inet q; add chain inet q f { type filter hook forward priority 0; }; add rule inet q f queue num 0 bypass']).status === 0;
    spawnSync('ip', ['netns', 'del', probe]);
    if (queueSupported) {
      lab.call('POST', '/api/v1/ids/reload');
      const ipsPid = enginePid(fw);
      assert.ok(ipsPid && readFileSync(`/proc/${ipsPid}/cmdline`, 'utf8').split('\0').join(' ').includes(' -q 0'), 'the engine reads queue 0');
      const table = spawnSync('ip', ['netns', 'exec', fw, 'nft', 'list', 'table', 'inet', 'bulwark_ips'], { encoding: 'utf8' }).stdout;
      assert.match(table, /hook forward priority filter; policy accept;[\s\S]*queue flags bypass to 0/);
    } else {
      // This kernel (PLATFORM-NOTES: no loadable modules) has no queue expression: IPS is refused, saying why.
      const [ips] = lab.api(['POST', '/api/v1/ids/reload']);
      assert.equal(ips.status, 409);
      assert.match(ips.body.error, /IPS needs the kernel's nftables queue support \(nft_queue\)/);
      assert.equal(enginePid(fw), null, 'no engine left running without its queue');
      t.diagnostic('IPS: this kernel has no nftables queue expression; the refusal was checked instead of the queue');
    }
    assert.match(readFileSync(join(runtime, 'suricata.yaml'), 'utf8'), /nfq:\n  mode: accept\n  fail-open: true/);

    // Disabled: the engine stops and the queue rule is gone.
    lab.call('PUT', '/api/v1/ids/config', { mode: 'disabled' });
    lab.call('POST', '/api/v1/ids/reload');
    assert.notEqual(spawnSync('ip', ['netns', 'exec', fw, 'nft', 'list', 'table', 'inet', 'bulwark_ips']).status, 0, 'the IPS table is removed');
    assert.equal(enginePid(fw), null);
    assert.equal(lab.call('GET', '/api/v1/ids/stats').running, false);
    assert.ok(existsSync(runtime) && readdirSync(runtime).includes('suricata.yaml'));
  } finally {
    process.env.PATH = savedPath;
    delete process.env.FAKE_SURICATA_EVE;
    await lab.cleanup();
  }
});
