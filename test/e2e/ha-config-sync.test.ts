/**
 * Configuration sync on `--platform linux` (issue 39 item 3), in namespaces this test creates: two Bulwark
 * firewalls A and B joined by a sync link (a private /30), each with its HTTPS listener on its end of the link,
 * and a client namespace behind B. They pair over the link (the outbound guard allows the peer's private address
 * because the pairing recorded it), a rule applied on A is sent to B, and B's kernel ruleset (nftables) holds it —
 * applied by B's own packet-filter applier. With A primary and B secondary, a rule applied on A reaches B with no
 * push by hand and B's kernel drops the client's connections it blocks (others still pass). The sync link cut: each
 * side reports the peer unreachable, a change applied on each side is split-brain on both when the link returns,
 * neither is overwritten, and resolving it makes both converge.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { NetnsLab, ROOT, inNamespace } from '../helpers/netns-lab.js';

const skip = systemSkip('the configuration-sync namespace lab', { root: true, programs: ['ip', 'nft'] });
const A_SYNC = '10.39.5.1';
const B_SYNC = '10.39.5.2';
const PORT = '2339';
const AUTO_PORT = '2341';
/** A port no rule names: connections to it from the client still reach B. */
const OPEN_PORT = '2342';
/** B's end of the client link; the client's end is .2. */
const B_CLIENT_SIDE = '10.39.6.1';
const SPLIT_PORT_A = '2351';
const SPLIT_PORT_B = '2352';

let labA: NetnsLab;
let labB: NetnsLab;
let nsA = '';
let nsB = '';
let nsClient = '';
let syncLinkA = '';
let syncLinkB = '';

async function until(what: string, probe: () => boolean, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (probe()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\nA: ${labA.log}\nB: ${labB.log}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const ruleset = (namespace: string) => inNamespace(namespace, 'nft', ['list', 'ruleset']);
const holdsPort = (namespace: string, port: string) => new RegExp(`dport ${port}\\b`).test(ruleset(namespace));
const syncStatus = (lab: NetnsLab) => lab.call('GET', '/api/v1/cluster/status');
const ruleIds = (lab: NetnsLab): string[] => lab.call('GET', '/api/v1/rules').map((rule: { id: string }) => rule.id);

/** Connections the client made to B that B accepted (fixtures/tcp-probe-loop.mjs: one line per accepted connection). */
function probeFromClient(ports: string[]): { passes: { port: number; at: number }[]; child: ChildProcess; ready: Promise<unknown> } {
  const child = labB.spawnIn(nsClient, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-probe-loop.mjs'), B_CLIENT_SIDE, ...ports]);
  const passes: { port: number; at: number }[] = [];
  let buffer = '';
  let ready!: (value: unknown) => void;
  const isReady = new Promise((resolve) => (ready = resolve));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let newline; (newline = buffer.indexOf('\n')) >= 0; buffer = buffer.slice(newline + 1)) {
      const line = buffer.slice(0, newline);
      if (line === 'ready') ready(true);
      else if (line.startsWith('{"port"')) passes.push(JSON.parse(line));
    }
  });
  return { passes, child, ready: isReady };
}

/** One connection from the client to B: the word B's server says, or `failed: timeout` (dropped), `failed: ECONNREFUSED`… */
const askFromClient = (port: string) => inNamespace(nsClient, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), B_CLIENT_SIDE, port, '1500']).trim();

before(async () => {
  if (skip) return;
  labA = new NetnsLab('hsa');
  labB = new NetnsLab('hsb');
  nsA = labA.namespace('fw');
  nsB = labB.namespace('fw');
  const t = labA.tag.slice(-6);
  nsClient = labB.namespace('cl');
  syncLinkA = `ya${t}`;
  syncLinkB = `yb${t}`;
  labA.link({ ns: nsA, name: syncLinkA, address: `${A_SYNC}/30` }, { ns: nsB, name: syncLinkB, address: `${B_SYNC}/30` });
  labB.link({ ns: nsB, name: `zb${t}`, address: `${B_CLIENT_SIDE}/30` }, { ns: nsClient, name: `zc${t}`, address: '10.39.6.2/30' });
  labA.startBulwark(nsA, await freePort(), ['--tls-listen', `${A_SYNC}:8443`]);
  labB.startBulwark(nsB, await freePort(), ['--tls-listen', `${B_SYNC}:8443`]);
});

after(async () => {
  if (labA) await labA.cleanup();
  if (labB) await labB.cleanup();
});

test('linux: paired over a private sync link, a rule applied on A is in B\'s nftables ruleset, applied by B', { skip, timeout: 300_000 }, async (t) => {
  labA.call('POST', '/api/v1/reload');
  labB.call('POST', '/api/v1/reload');
  const code = labB.call('POST', '/api/v1/cluster/pairing-code', undefined, 201);
  const node = labA.call('POST', '/api/v1/cluster/nodes', { name: 'b', address: B_SYNC, port: 8443, fingerprint: code.fingerprint, pairing_code: code.code }, 201);
  assert.equal(node.address, B_SYNC);
  const [onB] = labB.call('GET', '/api/v1/cluster/nodes');
  assert.equal(onB.address, A_SYNC, 'B recorded A at its sync-link address');
  assert.doesNotMatch(ruleset(nsB), new RegExp(`dport ${PORT}\\b`));
  labA.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: Number(PORT), quick: true, description: 'synced on linux' });
  labA.call('POST', '/api/v1/reload');
  assert.match(ruleset(nsA), new RegExp(`dport ${PORT}\\b`), 'in force on A');
  // Both nodes are standalone here (no VRRP runs): the administrator sends it.
  const pushed = labA.call('POST', '/api/v1/cluster/sync/push', undefined, 200);
  assert.equal(pushed.ok, true, JSON.stringify(pushed));
  await until("the rule in B's nftables ruleset", () => new RegExp(`dport ${PORT}\\b`).test(ruleset(nsB)));
  const [latest] = labB.call('GET', '/api/v1/config/history?limit=1');
  assert.equal(latest.source, 'cluster-sync');
  assert.equal(latest.version, pushed.peer_version);
  const status = labB.call('GET', '/api/v1/cluster/status');
  assert.equal(status.config_sync.state, 'in_sync', JSON.stringify(status.config_sync));
  t.diagnostic(`figure: the push (B applying through its appliers, nftables included) took ${pushed.ms} ms`);
});

test('linux: a rule applied on A (primary) is in force on B (secondary) with no push by hand: B drops the client\'s blocked connections, others pass', { skip, timeout: 240_000 }, async (t) => {
  // A primary, B secondary: no virtual address in this lab, so no VRRP runs and the configured role says which node
  // sends. B's nftables ruleset does not depend on its VRRP state: what B drops here it drops as master.
  labA.call('PUT', '/api/v1/cluster/role', { role: 'primary' });
  labB.call('PUT', '/api/v1/cluster/role', { role: 'secondary' });
  for (const port of [AUTO_PORT, OPEN_PORT]) {
    const server = labB.spawnIn(nsB, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), port, `B${port}`]);
    await new Promise((resolve) => server.stdout!.once('data', resolve));
  }
  const probe = probeFromClient([AUTO_PORT, OPEN_PORT]);
  await probe.ready;
  // Before the rule, B accepts the client's connections on both ports (so a later silence is the rule's doing).
  await until('the client to reach B on both ports', () => [AUTO_PORT, OPEN_PORT].every((port) => probe.passes.some((pass) => pass.port === Number(port))));
  labA.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: Number(AUTO_PORT), quick: true, description: 'pushed after the apply' });
  const [reload] = labA.api(['POST', '/api/v1/reload']);
  assert.equal(reload.status, 200, JSON.stringify(reload.body));
  const lastPass = (port: string) => probe.passes.filter((pass) => pass.port === Number(port)).at(-1)!.at;
  // Dropped: no connection on the blocked port for 2 s, while the open port keeps accepting (the client and B are fine).
  await until('B to drop the client\'s connections to the blocked port', () => {
    const blockedSince = lastPass(AUTO_PORT);
    return Date.now() - blockedSince > 2000 && probe.passes.filter((pass) => pass.port === Number(OPEN_PORT) && pass.at > blockedSince + 1000).length >= 3;
  });
  probe.child.kill('SIGTERM');
  assert.equal(askFromClient(AUTO_PORT), 'failed: timeout', 'the blocked port: B drops the SYN (no answer, not a refusal)');
  assert.equal(askFromClient(OPEN_PORT), `B${OPEN_PORT}`, 'a port no rule names still passes');
  assert.ok(holdsPort(nsB, AUTO_PORT), "the rule in B's nftables ruleset");
  await until('A to record the push of its head', () => {
    const sync = syncStatus(labA).config_sync;
    return sync.last_push?.ok === true && sync.last_push.seq === sync.local.seq && sync.state === 'in_sync';
  });
  // The rule took effect on B between its last accepted connection and the probe's next attempt (50 ms later).
  t.diagnostic(`figure: B dropped the blocked port from ${lastPass(AUTO_PORT) - reload.at} ms (+ at most one probe, ~250 ms) after A's reload answered, with no push by hand`);
});

test('linux: the sync link cut — each side reports the peer unreachable; a change on each is split-brain on both when it returns, nothing overwritten; resolving converges', { skip, timeout: 240_000 }, async (t) => {
  // State sync's peer (node-local): GET /cluster/status pings it (peer_reachable). No virtual address: no daemon runs.
  labA.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: syncLinkA, sync_peer: B_SYNC, enabled: true });
  labB.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: syncLinkB, sync_peer: A_SYNC, enabled: true });
  for (const lab of [labA, labB]) {
    const status = syncStatus(lab);
    assert.equal(status.peer_reachable, true, 'the peer answers ping before the cut');
    assert.equal(status.config_sync.peer_reachable, true);
  }
  inNamespace(nsB, 'ip', ['link', 'set', syncLinkB, 'down']);
  const cutAt = Date.now();
  const onA = labA.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: Number(SPLIT_PORT_A), quick: true, description: 'made on A while apart' });
  labA.call('POST', '/api/v1/reload');
  const onB = labB.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: Number(SPLIT_PORT_B), quick: true, description: 'made on B while apart' });
  labB.call('POST', '/api/v1/reload');
  // Each side on its own: A's push after its apply fails, B finds out at its next comparison (every 10 s).
  await until('both sides to report the peer unreachable', () => [labA, labB].every((lab) => {
    const status = syncStatus(lab);
    return status.peer_reachable === false && status.config_sync.state === 'unreachable' && status.config_sync.peer_reachable === false;
  }));
  const unreachableAfter = Date.now() - cutAt;
  assert.ok(holdsPort(nsA, SPLIT_PORT_A) && !holdsPort(nsA, SPLIT_PORT_B), "A runs its own change");
  assert.ok(holdsPort(nsB, SPLIT_PORT_B) && !holdsPort(nsB, SPLIT_PORT_A), "B runs its own change");
  inNamespace(nsB, 'ip', ['link', 'set', syncLinkB, 'up']);
  const backAt = Date.now();
  // No push by hand: each side's own comparison (every 10 s) finds that both changed.
  await until('both sides to report split-brain', () => [labA, labB].every((lab) => syncStatus(lab).config_sync.state === 'split_brain'));
  const splitBrainAfter = Date.now() - backAt;
  for (const lab of [labA, labB]) {
    const sync = syncStatus(lab).config_sync;
    assert.ok(sync.split_brain.local_head && sync.split_brain.peer_head, JSON.stringify(sync));
    assert.notEqual(sync.split_brain.local_head.link, sync.split_brain.peer_head.link);
    assert.equal(sync.peer_reachable, true);
  }
  // Nothing silently overwritten: each side still holds, and runs, its own change only.
  const [rulesA, rulesB] = [ruleIds(labA), ruleIds(labB)];
  assert.ok(rulesA.includes(onA.id) && !rulesA.includes(onB.id), "A's change stands, B's did not reach it");
  assert.ok(rulesB.includes(onB.id) && !rulesB.includes(onA.id), "B's change stands, A's did not reach it");
  assert.ok(holdsPort(nsA, SPLIT_PORT_A) && !holdsPort(nsA, SPLIT_PORT_B));
  assert.ok(holdsPort(nsB, SPLIT_PORT_B) && !holdsPort(nsB, SPLIT_PORT_A));
  // The administrator keeps A's side, from A: B takes A's configuration whatever its history says.
  const resolved = labA.call('POST', '/api/v1/cluster/sync/resolve', { keep: 'local' }, 200);
  assert.equal(resolved.kept, 'local');
  await until('both in sync on the same configuration', () => {
    const [a, b] = [syncStatus(labA).config_sync, syncStatus(labB).config_sync];
    return a.state === 'in_sync' && b.state === 'in_sync' && a.local.hash === b.local.hash && a.split_brain === null && b.split_brain === null;
  });
  const after = ruleIds(labB);
  assert.ok(after.includes(onA.id) && !after.includes(onB.id), "B holds A's configuration");
  assert.ok(holdsPort(nsB, SPLIT_PORT_A) && !holdsPort(nsB, SPLIT_PORT_B), 'and runs it');
  t.diagnostic(`figure: both reported the peer unreachable ${unreachableAfter} ms after the cut (two reloads included), split-brain ${splitBrainAfter} ms after the link returned`);
});
