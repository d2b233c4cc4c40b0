/**
 * Cold boot (issue 36): Bulwark `--platform linux` in a firewall namespace between a WAN client and a LAN server,
 * a rule blocking one port and another port passing. Then a cold boot as a reboot does it: every process in the
 * firewall namespace killed, everything Bulwark put in its kernel flushed (ruleset, connection table) and the
 * network down (addresses gone, links down). A probe from the client tries the blocked port without pause from
 * before the boot step; the boot step (install/bulwark-boot.sh, reading an environment file that points at this
 * test's data directory) runs, the network comes up, Bulwark starts again. The probe never gets through. The
 * second case corrupts the kept ruleset: the boot step loads the fallback, the port stays blocked and /status says
 * so. Figures (printed as test diagnostics): how long the boot step took, how long until Bulwark answered /status.
 * Needs root; mandatory under REQUIRE_SYSTEM_TESTS=1.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';
import { freePort } from '../helpers/free-port.js';
import { rootSkipReason } from '../helpers/shared.js';
import { canonicalNftState } from '../../src/platform/linux/nft-listing.js';

const skip = rootSkipReason('the cold-boot suite (network namespaces, nftables)');
const CLIENT = '10.236.1.2';
const SERVER = '10.236.2.2';
const PASSED_PORT = '8080';
const BLOCKED_PORT = '8081';
const LATER_BLOCKED_PORT = '8082';

let lab: NetnsLab;
let fw = '';
let client = '';
let server = '';
let apiPort = 0;
const links = { wan: '', wanPeer: '', lan: '', lanPeer: '' };
/** The firewall's own addresses: what the network brings up at boot. */
let fwAddresses: [string, string][] = [];
const work = mkdtempSync(join(tmpdir(), 'bulwark-cold-boot-'));
const envFile = join(work, 'bulwark.env');

const listTable = () => inNamespace(fw, 'nft', ['-s', 'list', 'table', 'inet', 'bulwark']);
const keptFile = () => join(lab.dataDir, 'boot/ruleset.nft');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it is true; the milliseconds it took, or throws after `limitMs`. */
async function until(what: string, check: () => boolean, limitMs = 60_000): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms\n${lab.log}\nthe firewall's table:\n${listTable()}`);
    await sleep(50);
  }
  return Date.now() - started;
}

/** One connection attempt from the client (1 s at most). */
const reaches = (port: string) =>
  spawnSync('ip', ['netns', 'exec', client, process.execPath, join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), SERVER, port, '1000'], { encoding: 'utf8', timeout: 5000 }).stdout.includes('LAN');

/** A reboot as the kernel sees it: every process gone, Bulwark's ruleset and the connection table empty, the network down. */
async function powerOff(): Promise<void> {
  const pids = spawnSync('ip', ['netns', 'pids', fw], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  for (const pid of pids) spawnSync('kill', ['-9', pid]);
  await until('every process of the firewall namespace gone', () => spawnSync('ip', ['netns', 'pids', fw], { encoding: 'utf8' }).stdout.trim() === '', 10_000);
  inNamespace(fw, 'nft', ['flush', 'ruleset']);
  spawnSync('ip', ['netns', 'exec', fw, 'conntrack', '-F'], { stdio: 'ignore' });
  networkDown();
}
function networkDown(): void {
  for (const [name] of fwAddresses) {
    run('ip', ['-n', fw, 'addr', 'flush', 'dev', name]);
    run('ip', ['-n', fw, 'link', 'set', name, 'down']);
  }
}
/** What ifupdown does after network-pre.target: addresses and links up. */
function networkUp(): void {
  for (const [name, address] of fwAddresses) {
    run('ip', ['-n', fw, 'addr', 'add', address, 'dev', name]);
    run('ip', ['-n', fw, 'link', 'set', name, 'up']);
  }
  // Failed neighbour entries left by the probes while the firewall was away would answer "unreachable" for a while.
  for (const ns of [client, server]) spawnSync('ip', ['-n', ns, 'neigh', 'flush', 'all']);
}

/** The boot step as bulwark-boot.service runs it; its duration in ms. */
function bootStep(): { ms: number; stderr: string } {
  const started = performance.now();
  const result = spawnSync('ip', ['netns', 'exec', fw, 'sh', join(ROOT, 'install/bulwark-boot.sh'), envFile], { encoding: 'utf8', timeout: 30_000 });
  const ms = performance.now() - started;
  assert.equal(result.status, 0, `the boot step failed: ${result.stderr}`);
  return { ms, stderr: result.stderr };
}

interface Probe {
  child: ChildProcess;
  passes: { port: number; at: number }[];
  stop(): Promise<{ attempts: Record<string, number>; passes: Record<string, number> }>;
}
/** The continuous probe from the client (fixtures/tcp-probe-loop.mjs), started before the boot step. */
async function startProbe(): Promise<Probe> {
  const child = lab.spawnIn(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-probe-loop.mjs'), SERVER, BLOCKED_PORT, LATER_BLOCKED_PORT, PASSED_PORT]);
  const passes: { port: number; at: number }[] = [];
  let summary: { attempts: Record<string, number>; passes: Record<string, number> } | undefined;
  let buffer = '';
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line === 'ready') ready();
      else if (line.startsWith('{"port"')) passes.push(JSON.parse(line));
      else if (line.startsWith('{"attempts"')) summary = JSON.parse(line);
    }
  });
  await isReady;
  return {
    child,
    passes,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      if (!summary) throw new Error('the probe printed no summary');
      return summary;
    },
  };
}

/** Bulwark started again on the same data directory; ms until it answered GET /status (signed in, from its namespace). */
async function startBulwarkAgain(): Promise<{ startedAt: number; ms: number; status: any }> {
  const startedAt = Date.now();
  lab.startBulwark(fw, apiPort);
  const [answer] = lab.api(['GET', '/api/v1/status']);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return { startedAt, ms: Date.now() - startedAt, status: answer.body };
}
/** When the passing port first answered at or after `since` (epoch ms). */
const firstPass = (probe: Probe, since: number) => probe.passes.find((p) => p.port === Number(PASSED_PORT) && p.at >= since)?.at;

before(async () => {
  if (skip) return;
  lab = new NetnsLab('cb');
  fw = lab.namespace('fw');
  client = lab.namespace('cl');
  server = lab.namespace('sv');
  const t = lab.tag.slice(-8);
  Object.assign(links, { wan: `cbw${t}`, wanPeer: `cbW${t}`, lan: `cbl${t}`, lanPeer: `cbL${t}` });
  fwAddresses = [[links.wan, '10.236.1.1/24'], [links.lan, '10.236.2.1/24']];
  lab.link({ ns: fw, name: links.wan, address: '10.236.1.1/24' }, { ns: client, name: links.wanPeer, address: `${CLIENT}/24` });
  lab.link({ ns: fw, name: links.lan, address: '10.236.2.1/24' }, { ns: server, name: links.lanPeer, address: `${SERVER}/24` });
  run('ip', ['-n', client, 'route', 'add', 'default', 'via', '10.236.1.1']);
  run('ip', ['-n', server, 'route', 'add', 'default', 'via', '10.236.2.1']);
  inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  for (const port of [PASSED_PORT, BLOCKED_PORT, LATER_BLOCKED_PORT]) {
    const listener = lab.spawnIn(server, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), port, 'LAN']);
    await new Promise((resolve) => listener.stdout!.once('data', resolve));
  }
  apiPort = await freePort();
  // The environment file as /etc/bulwark/bulwark.env has it, with this test's (non-default) data directory.
  writeFileSync(envFile, `BULWARK_DATA_DIR=${lab.dataDir}\nBULWARK_RUNTIME_DIR=${lab.dataDir}-daemons\nBULWARK_PLATFORM=linux\nBULWARK_LISTEN=127.0.0.1:${apiPort}\n`);
  lab.startBulwark(fw, apiPort);
});

after(async () => {
  if (lab) await lab.cleanup();
  rmSync(work, { recursive: true, force: true });
});

test('rules applied: one port blocked from the WAN client, another passing; a delta after it is kept as the full table the kernel holds', { skip, timeout: 180_000 }, async () => {
  assert.equal(reaches(BLOCKED_PORT), true, 'open before any rule');
  const [rule, first] = lab.api(
    ['POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: links.wan, dst_port_start: Number(BLOCKED_PORT), label: 'cold-boot' }],
    ['POST', '/api/v1/reload'],
  );
  assert.equal(rule.status, 201, JSON.stringify(rule.body));
  assert.equal(first.status, 200, JSON.stringify(first.body));
  // A second rule loaded as a delta: the kept file must still be the whole table the kernel now holds.
  const [later, second] = lab.api(
    ['POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', interface: links.wan, dst_port_start: Number(LATER_BLOCKED_PORT), label: 'cold-boot-later' }],
    ['POST', '/api/v1/reload'],
  );
  assert.equal(second.status, 200, JSON.stringify(second.body));
  assert.equal(second.body.apply_mode, 'delta');
  assert.deepEqual([reaches(PASSED_PORT), reaches(BLOCKED_PORT), reaches(LATER_BLOCKED_PORT)], [true, false, false]);

  const loaded = canonicalNftState(listTable()).fingerprint;
  await until('the kept ruleset written', () => existsSync(keptFile()) && readFileSync(keptFile(), 'utf8').includes(later.body.id), 10_000);
  // Loaded alone into the kernel, the kept file gives exactly the table the delta left.
  inNamespace(fw, 'nft', ['flush', 'ruleset']);
  inNamespace(fw, 'nft', ['-f', keptFile()]);
  assert.equal(canonicalNftState(listTable()).fingerprint, loaded, 'the kept file is the table the kernel held after the delta');
});

test('cold boot: the blocked port never passes, from before the boot step until Bulwark serves again; figures', { skip, timeout: 180_000 }, async (t) => {
  const before = canonicalNftState(listTable()).fingerprint;
  await powerOff();
  // Control: with nothing loaded and the network up, the probe does see the blocked port pass.
  networkUp();
  await until('the blocked port open without a ruleset (control)', () => reaches(BLOCKED_PORT), 10_000);
  networkDown();

  const probe = await startProbe();
  const boot = bootStep();
  const afterBoot = spawnSync('ip', ['netns', 'exec', fw, 'nft', '-s', 'list', 'table', 'inet', 'bulwark'], { encoding: 'utf8' }).stdout;
  const networkAt = Date.now();
  networkUp();
  const restart = await startBulwarkAgain();
  // The probe keeps going after Bulwark has loaded the applied ruleset itself, until the passing port answered.
  await until('the passing port answers through the firewall', () => firstPass(probe, networkAt) !== undefined, 30_000);
  const passedMs = firstPass(probe, networkAt)! - networkAt;
  assert.equal(canonicalNftState(listTable()).fingerprint, before, 'Bulwark\'s own load at start left the same table');
  const summary = await probe.stop();

  const blocked = probe.passes.filter((p) => p.port !== Number(PASSED_PORT));
  assert.deepEqual(blocked, [], 'no connection to a blocked port was ever accepted');
  assert.ok(summary.attempts[BLOCKED_PORT] >= 10, `the blocked port was tried throughout (${summary.attempts[BLOCKED_PORT]} attempts)`);
  assert.equal(canonicalNftState(afterBoot).fingerprint, before, 'the boot step loaded the table last applied');
  assert.equal(restart.status.boot.loaded, 'applied');
  assert.match(restart.status.boot.reason, /last applied ruleset was loaded before the network came up/);
  t.diagnostic(`boot step (nft -f of the kept ruleset): ${boot.ms.toFixed(0)} ms; Bulwark start -> GET /status answered (client sign-in included): ${restart.ms} ms; network up -> passing port answers (the boot step's ruleset passes it): ${passedMs} ms; probe attempts on the blocked ports: ${summary.attempts[BLOCKED_PORT]} + ${summary.attempts[LATER_BLOCKED_PORT]}, passes: 0`);
});

test('cold boot with the kept ruleset corrupted: the boot step loads the fallback, the blocked port stays blocked, /status says fallback', { skip, timeout: 180_000 }, async (t) => {
  const before = canonicalNftState(listTable()).fingerprint;
  await powerOff();
  const lines = readFileSync(keptFile(), 'utf8').split('\n');
  lines[8] = 'this is not nftables';
  writeFileSync(keptFile(), lines.join('\n'));

  const probe = await startProbe();
  const boot = bootStep();
  assert.match(boot.stderr, /fallback \(refused\)/);
  const table = listTable();
  assert.match(table, /policy drop;/, 'the fallback drops what it does not let in');
  assert.doesNotMatch(table, /rule [0-9a-f-]{36}/, 'nothing of the refused file was loaded');
  const networkAt = Date.now();
  networkUp();
  const restart = await startBulwarkAgain();
  assert.equal(restart.status.boot.loaded, 'fallback');
  assert.equal(restart.status.boot.refused_line, 9);
  assert.match(restart.status.boot.reason, /refused the last applied ruleset at line 9; the safe fallback was loaded/);
  // Bulwark loads the applied ruleset at start: the passing port passes again, and the kept file is whole again.
  await until('the passing port answers once Bulwark loaded the applied ruleset', () => firstPass(probe, networkAt) !== undefined, 30_000);
  const passedAt = firstPass(probe, networkAt)!;
  assert.ok(passedAt >= restart.startedAt, 'the fallback let nothing through to the LAN before Bulwark loaded the applied ruleset');
  await until('the kept file rewritten by the load at start', () => !readFileSync(keptFile(), 'utf8').includes('this is not nftables'), 10_000);
  assert.equal(canonicalNftState(listTable()).fingerprint, before);
  const summary = await probe.stop();
  assert.deepEqual(probe.passes.filter((p) => p.port !== Number(PASSED_PORT)), [], 'no connection to a blocked port was ever accepted');
  assert.ok(summary.attempts[BLOCKED_PORT] >= 10);
  t.diagnostic(`boot step with the fallback: ${boot.ms.toFixed(0)} ms; Bulwark start -> GET /status answered: ${restart.ms} ms; Bulwark start -> passing port answers again (its own load of the applied ruleset): ${passedAt - restart.startedAt} ms`);
});
