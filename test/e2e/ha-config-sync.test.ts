/**
 * Configuration sync on `--platform linux` (issue 39 item 3), in namespaces this test creates: two Bulwark
 * firewalls A and B joined by a sync link (a private /30), each with its HTTPS listener on its end of the link.
 * They pair over it (the outbound guard allows the peer's private address because the pairing recorded it), a rule
 * applied on A is sent to B, and B's kernel ruleset (nftables) holds it — applied by B's own packet-filter applier;
 * with A primary and B secondary, a rule applied on A reaches B's ruleset with no push by hand.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, inNamespace } from '../helpers/netns-lab.js';

const skip = systemSkip('the configuration-sync namespace lab', { root: true, programs: ['ip', 'nft'] });
const A_SYNC = '10.39.5.1';
const B_SYNC = '10.39.5.2';
const PORT = '2339';
const AUTO_PORT = '2341';

let labA: NetnsLab;
let labB: NetnsLab;
let nsA = '';
let nsB = '';

async function until(what: string, probe: () => boolean, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (probe()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\nA: ${labA.log}\nB: ${labB.log}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const ruleset = (namespace: string) => inNamespace(namespace, 'nft', ['list', 'ruleset']);

before(async () => {
  if (skip) return;
  labA = new NetnsLab('hsa');
  labB = new NetnsLab('hsb');
  nsA = labA.namespace('fw');
  nsB = labB.namespace('fw');
  const t = labA.tag.slice(-6);
  labA.link({ ns: nsA, name: `ya${t}`, address: `${A_SYNC}/30` }, { ns: nsB, name: `yb${t}`, address: `${B_SYNC}/30` });
  labA.startBulwark(nsA, await freePort(), ['--tls-listen', `${A_SYNC}:8443`]);
  labB.startBulwark(nsB, await freePort(), ['--tls-listen', `${B_SYNC}:8443`]);
});

after(async () => {
  if (labA) await labA.cleanup();
  if (labB) await labB.cleanup();
});

test('linux: paired over a private sync link, a rule applied on A is in B\'s nftables ruleset, applied by B', { skip, timeout: 400_000 }, async (t) => {
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

  // The push after an apply, with no call by hand: A primary, B secondary (no virtual address in this lab, so no
  // VRRP runs and the configured role says which node sends).
  labA.call('PUT', '/api/v1/cluster/role', { role: 'primary' });
  labB.call('PUT', '/api/v1/cluster/role', { role: 'secondary' });
  labA.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', dst_port_start: Number(AUTO_PORT), quick: true, description: 'pushed after the apply' });
  labA.call('POST', '/api/v1/reload');
  const answeredAt = Date.now();
  await until("the rule applied on A in B's nftables ruleset, pushed after the apply", () => new RegExp(`dport ${AUTO_PORT}\\b`).test(ruleset(nsB)));
  const latencyMs = Date.now() - answeredAt;
  await until('A to record the push of its head', () => {
    const sync = labA.call('GET', '/api/v1/cluster/status').config_sync;
    return sync.last_push?.ok === true && sync.last_push.seq === sync.local.seq && sync.state === 'in_sync';
  });
  t.diagnostic(`figure: a rule applied on A (linux) in B's ruleset ${latencyMs} ms after A's reload answered, with no push by hand`);
});
