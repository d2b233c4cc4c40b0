/**
 * Assertions proven in network namespaces (issue 33). Bulwark runs with the linux platform in a firewall namespace
 * between a client (an OPT network; anti-lockout covers only the LAN-role interface, towards an admin namespace) and a server
 * namespace that holds a web server (tcp/80) and the box's upstream DNS. Assertions: transit "client reaches server
 * tcp/80" and probe "the box resolves through its upstream DNS".
 * - a change blocking tcp/80 is refused before apply (409 naming the assertion and the deciding rule); with force it
 *   is applied and the client's connection really fails;
 * - a change cutting the upstream DNS, applied with auto_confirm, is rolled back by the failing probe long before the
 *   window ends (the time is reported), and the client's traffic is as before;
 * - a harmless change with auto_confirm is confirmed without anyone calling confirm;
 * - a change that cuts the management path of the client that opened the window is rolled back: the client never
 *   reaches the API again, so nothing confirms it, and the timer reverts it.
 * Needs root, nft, dig; mandatory under REQUIRE_SYSTEM_TESTS=1.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';

const skip = systemSkip('the assertions namespace lab', { root: true, programs: ['ip', 'nft', 'dig', 'conntrack'] });
const FW_OPT = '10.33.1.1';
const CLIENT = '10.33.1.2';
const SERVER = '10.33.2.10';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let lab: NetnsLab;
let client = '';
let port = 0;
const links = { opt: '', client: '', wan: '', server: '', admin: '' };

/** What the web server said to a connection from the client (`failed: …` when none got through). */
const askWeb = () => inNamespace(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), SERVER, '80', '1500'], { timeoutMs: 10_000 }).trim();
/** API calls made from the client namespace, through the firewall's OPT address. */
const clientApi = (...calls: [string, string, unknown?][]) => {
  const args = calls.flatMap(([method, path, body]) => [method, path, ...(body === undefined ? [] : [JSON.stringify(body)]), '--']);
  return JSON.parse(inNamespace(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/api-calls.mjs'), `http://${FW_OPT}:${port}`, ...args], { timeoutMs: 60_000 }));
};
/** Polls the window's status (from the firewall's own loopback: not the client) until it is closed. */
async function untilClosed(limitMs: number): Promise<any> {
  let status: any;
  for (let waited = 0; waited < limitMs; waited += 100) {
    status = lab.call('GET', '/api/v1/config/commit-confirm/status');
    if (!status.active) return status;
    await sleep(100);
  }
  assert.fail(`the commit-confirm window is still open after ${limitMs} ms: ${JSON.stringify(status)}`);
}

before(async () => {
  if (skip) return;
  lab = new NetnsLab('b33');
  const fw = lab.namespace('fw');
  client = lab.namespace('cl');
  const server = lab.namespace('sv');
  const t = lab.tag.slice(-8);
  Object.assign(links, { opt: `b33o${t}`, client: `b33c${t}`, wan: `b33w${t}`, server: `b33s${t}`, admin: `b33a${t}` });
  lab.link({ ns: fw, name: links.opt, address: `${FW_OPT}/24` }, { ns: client, name: links.client, address: `${CLIENT}/24` });
  lab.link({ ns: fw, name: links.wan, address: '10.33.2.1/24' }, { ns: server, name: links.server, address: `${SERVER}/24` });
  // The LAN-role interface anti-lockout protects: a link to an admin namespace, so the client's OPT network is not covered by it.
  lab.link({ ns: fw, name: links.admin, address: '10.33.9.1/24' }, { ns: lab.namespace('ad'), name: `b33A${t}`, address: '10.33.9.2/24' });
  run('ip', ['-n', client, 'route', 'add', 'default', 'via', FW_OPT]);
  run('ip', ['-n', server, 'route', 'add', 'default', 'via', '10.33.2.1']);
  inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
  for (const [script, args] of [['tcp-say.mjs', ['80', 'web']], ['dns-answer.mjs', ['53', '192.0.2.80']]] as const) {
    const child = lab.spawnIn(server, process.execPath, [join(ROOT, 'test/e2e/fixtures', script), ...args]);
    await new Promise((resolve) => child.stdout!.once('data', resolve));
  }
  port = await freePort();
  // On every address of the namespace, so the client reaches it through the OPT address.
  lab.startBulwark(fw, port, ['--listen', `0.0.0.0:${port}`]);
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('a change that blocks tcp/80 from the client is refused before apply, naming the assertion and the deciding rule; forced, the kernel really blocks it', { skip, timeout: 180_000 }, () => {
  lab.call('PUT', `/api/v1/interfaces/${links.opt}/role`, { role: 'opt1' }, 200);
  lab.call('PUT', `/api/v1/interfaces/${links.wan}/role`, { role: 'wan' }, 200);
  lab.call('PUT', `/api/v1/interfaces/${links.admin}/role`, { role: 'lan' }, 200);
  // The upstream DNS server sits on a private network: only the administrator's outbound allow-list lets a probe reach it.
  lab.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: [`${SERVER}/32`] });
  lab.call('POST', '/api/v1/assertions', { name: 'client reaches server tcp/80', kind: 'transit', interface: 'opt1', protocol: 'tcp', source: CLIENT, destination: SERVER, port: 80, expect: 'pass' });
  lab.call('POST', '/api/v1/assertions', { name: 'the box resolves through its upstream DNS', kind: 'probe', probe: 'dns', target: SERVER, query: 'example.com', source_interface: 'wan', timeout_ms: 1000 });
  lab.call('POST', '/api/v1/reload');
  assert.equal(askWeb(), 'web');
  const judged = lab.call('POST', '/api/v1/assertions/run', undefined, 200);
  assert.deepEqual(judged.map((j: any) => [j.name, j.result.holds]).sort(), [['client reaches server tcp/80', true], ['the box resolves through its upstream DNS', true]], JSON.stringify(judged));

  const rule = lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', interface: links.opt, protocol: 'tcp', dst_port_start: 80, quick: true, description: 'no web' });
  const [pending, refused] = lab.api(['GET', '/api/v1/pending'], ['POST', '/api/v1/reload']);
  assert.deepEqual(pending.body.broken_assertions.map((b: any) => [b.name, b.rule_id]), [['client reaches server tcp/80', rule.id]]);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error, /reload refused: it would break 1 assertion\(s\): "client reaches server tcp\/80"/);
  assert.match(refused.body.error, new RegExp(`block by rule ${rule.id} \\(block, quick: no web\\)`));
  assert.equal(askWeb(), 'web', 'the refused change never reached the kernel');

  lab.call('POST', '/api/v1/reload?force=true');
  assert.match(askWeb(), /^failed/, 'forced, the kernel blocks tcp/80 from the client');
  lab.call('DELETE', `/api/v1/rules/${rule.id}`, undefined, 204);
  lab.call('POST', '/api/v1/reload');
  assert.equal(askWeb(), 'web');
});

test('a change that cuts the box\'s upstream DNS, applied with auto_confirm, is rolled back by the failing probe long before the window ends; the client\'s traffic is as before', { skip, timeout: 180_000 }, async (t) => {
  lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'out', interface: links.wan, protocol: 'udp', dst_port_start: 53, quick: true, description: 'cuts DNS' });
  const opened = lab.call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 300, apply: true, auto_confirm: true, description: 'dns cut' }, 200);
  const closed = await untilClosed(30_000);
  assert.equal(closed.last.outcome, 'rolled_back', JSON.stringify(closed.last));
  assert.match(closed.last.reason, /assertion "the box resolves through its upstream DNS" does not hold after the apply/);
  const rolledBackAt = Date.parse(closed.last.at);
  assert.ok(rolledBackAt < Date.parse(opened.expires_at) - 200_000, `rolled back at ${closed.last.at}, long before ${opened.expires_at}`);
  assert.equal(closed.last.checks.state, 'failed');
  t.diagnostic(`rollback ${rolledBackAt - Date.parse(closed.last.checks.started_at)} ms after the apply (probe timeout 1000 ms)`);
  assert.equal(askWeb(), 'web', 'the client\'s traffic is as before');
  const again = lab.call('POST', '/api/v1/assertions/run', undefined, 200);
  assert.ok(again.every((j: any) => j.result.holds), `after the rollback every assertion holds again: ${JSON.stringify(again)}`);
  assert.ok(!lab.call('GET', '/api/v1/rules').some((r: any) => r.description === 'cuts DNS'), 'the configuration is the rollback target again');
});

test('a harmless change with auto_confirm is confirmed without anyone calling confirm', { skip, timeout: 180_000 }, async () => {
  lab.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', interface: links.opt, protocol: 'tcp', dst_port_start: 8080, description: 'harmless' });
  lab.call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: 300, apply: true, auto_confirm: true, description: 'harmless' }, 200);
  // Only the status is read (the opener reaching the API again); confirm is never called.
  const closed = await untilClosed(30_000);
  assert.equal(closed.last.outcome, 'confirmed', JSON.stringify(closed.last));
  assert.equal(closed.last.confirmed_by, 'auto-confirm');
  assert.ok(closed.last.checks.results.every((r: any) => r.result.holds));
  assert.ok(lab.call('GET', '/api/v1/rules').some((r: any) => r.description === 'harmless'), 'the change stays');
  assert.equal(askWeb(), 'web');
});

test('a change that cuts the management path of the client that opened the window is rolled back: the client never reaches the API again', { skip, timeout: 180_000 }, async () => {
  const [signedIn] = clientApi(['GET', '/api/v1/config/commit-confirm/status']);
  assert.equal(signedIn.status, 200, 'the client manages the box through its OPT address');
  lab.call('POST', '/api/v1/rules', { action: 'blockreturn', direction: 'in', interface: links.opt, protocol: 'tcp', dst_addr: FW_OPT, dst_port_start: port, quick: true, description: 'cuts management' });
  const [opened] = clientApi(['POST', '/api/v1/config/commit-confirm', { timeout_seconds: 10, apply: true, auto_confirm: true, description: 'management cut' }]);
  assert.equal(opened.status, 200, JSON.stringify(opened.body));
  const cut = inNamespace(client, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), FW_OPT, String(port), '1500'], { timeoutMs: 10_000 }).trim();
  assert.match(cut, /^failed/, 'the client cannot reach the API any more');
  const closed = await untilClosed(40_000);
  assert.equal(closed.last.outcome, 'rolled_back', JSON.stringify(closed.last));
  assert.match(closed.last.reason, /was not confirmed/);
  assert.equal(closed.last.checks.state, 'held', 'every assertion held: only the client\'s absence kept it from confirming');
  const [back] = clientApi(['GET', '/api/v1/config/commit-confirm/status']);
  assert.equal(back.status, 200, 'after the rollback the client reaches the API again');
});
