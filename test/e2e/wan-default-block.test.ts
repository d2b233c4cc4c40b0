/**
 * A fresh appliance is not open (issue 36 item 7), proven from clients in namespaces the test creates: Bulwark
 * (`--platform linux`, listening on every address) in a firewall namespace, a LAN client and a WAN client. With
 * the interface roles set and nothing else configured, a WAN client's connection to a port on the firewall is
 * dropped, the API answers the LAN client (anti-lockout), /rules/simulate and /rules/system say the same, and
 * turning the setting off opens it. Only these namespaces are touched.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace } from '../helpers/netns-lab.js';

const skip = systemSkip('the WAN default-block namespace lab', { root: true, programs: ['ip', 'nft'] });
const SERVICE_PORT = '8036';
const FW_LAN = '10.36.1.1';
const FW_WAN = '10.36.2.1';
let lab: NetnsLab;
let fw = '';
let lan = '';
let wan = '';
let apiPort = 0;
const links = { lan: '', wan: '' };

/**
 * How long a client waits for an answer: a dropped connection is told by waiting `BLOCKED_MS` in vain; where an
 * answer is expected, `ANSWER_MS` lets a loaded machine give it (a 1.5 s wait failed there for an open API).
 */
const BLOCKED_MS = 1500;
const ANSWER_MS = 15_000;

/** What a TCP service on the firewall said to a client (`failed: …` when the connection got nowhere). */
const ask = (ns: string, host: string, port: string, waitMs = BLOCKED_MS) =>
  inNamespace(ns, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), host, port, String(waitMs)], { timeoutMs: waitMs + 30_000 }).trim();

/** The HTTP status the API gave a client, or `failed` when the request got nowhere. */
const apiStatus = (ns: string, host: string, waitMs = BLOCKED_MS) =>
  inNamespace(ns, process.execPath, ['-e', `fetch('http://${host}:${apiPort}/api/v1/auth/register', { signal: AbortSignal.timeout(${waitMs}) }).then((r) => r.status, () => 'failed').then((said) => { console.log(said); process.exit(0); })`], { timeoutMs: waitMs + 30_000 }).trim();

const simulate = (iface: string, src: string, dst: string) =>
  lab.call('POST', '/api/v1/rules/simulate', { interface: iface, direction: 'in', protocol: 'tcp', src, dst, src_port: 40000, dst_port: Number(SERVICE_PORT) }, 200);

before(async () => {
  if (skip) return;
  lab = new NetnsLab('b37');
  fw = lab.namespace('fw');
  lan = lab.namespace('ln');
  wan = lab.namespace('wn');
  const t = lab.tag.slice(-8);
  Object.assign(links, { lan: `b37l${t}`, wan: `b37w${t}` });
  lab.link({ ns: fw, name: links.lan, address: `${FW_LAN}/24` }, { ns: lan, name: `b37L${t}`, address: '10.36.1.2/24' });
  lab.link({ ns: fw, name: links.wan, address: `${FW_WAN}/24` }, { ns: wan, name: `b37W${t}`, address: '10.36.2.2/24' });
  const service = lab.spawnIn(fw, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), SERVICE_PORT, 'fw']);
  await new Promise((resolve) => service.stdout!.once('data', resolve));
  apiPort = await freePort();
  // Every address, as an appliance listens: the anti-lockout rule is what keeps the API reachable from LAN.
  lab.startBulwark(fw, apiPort, ['--listen', `0.0.0.0:${apiPort}`]);
  lab.call('PUT', `/api/v1/interfaces/${links.lan}/role`, { role: 'lan' }, 200);
  lab.call('PUT', `/api/v1/interfaces/${links.wan}/role`, { role: 'wan' }, 200);
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('a fresh linux appliance: WAN blocked unless a rule passes it, the API reachable from LAN; turning the setting off opens WAN', { skip, timeout: 120_000 }, () => {
  assert.deepEqual(lab.call('GET', '/api/v1/rules/wan-default-block'), { enabled: true }, 'on by default on linux');
  lab.call('POST', '/api/v1/reload');
  const system = lab.call('GET', '/api/v1/rules/system') as string[];
  assert.ok(system.some((line) => line.startsWith(`iifname "${links.wan}"`) && line.includes('drop comment "system: WAN default block"')), system.join('\n'));

  assert.match(ask(wan, FW_WAN, SERVICE_PORT), /^failed/, 'a WAN client cannot open a connection to the firewall');
  assert.equal(apiStatus(wan, FW_WAN), 'failed', 'nor reach the API from WAN');
  assert.equal(ask(lan, FW_LAN, SERVICE_PORT, ANSWER_MS), 'fw', 'LAN is not affected');
  assert.equal(apiStatus(lan, FW_LAN, ANSWER_MS), '200', 'the API answers the LAN client (anti-lockout)');
  const blocked = simulate(links.wan, '10.36.2.2', FW_WAN);
  assert.deepEqual([blocked.verdict, blocked.decided_by], ['block', { type: 'default', policy: 'block' }], JSON.stringify(blocked));
  assert.equal(simulate(links.lan, '10.36.1.2', FW_LAN).verdict, 'pass');

  // A rule passing the port opens it for WAN, in the kernel and in the simulator alike.
  const rule = lab.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', interface: links.wan, protocol: 'tcp', src_addr: 'any', dst_addr: 'any', dst_port_start: Number(SERVICE_PORT), dst_port_end: Number(SERVICE_PORT) });
  lab.call('POST', '/api/v1/reload');
  assert.equal(ask(wan, FW_WAN, SERVICE_PORT, ANSWER_MS), 'fw', 'a pass rule opens the port to WAN');
  assert.equal(simulate(links.wan, '10.36.2.2', FW_WAN).decided_by.type, 'rule');
  assert.equal(apiStatus(wan, FW_WAN), 'failed', 'everything else stays blocked');
  const [removed] = lab.api(['DELETE', `/api/v1/rules/${(rule.data ?? rule).id}`]);
  assert.ok(removed.status < 300, JSON.stringify(removed));

  assert.deepEqual(lab.call('PUT', '/api/v1/rules/wan-default-block', { enabled: false }, 200), { enabled: false });
  lab.call('POST', '/api/v1/reload');
  assert.equal(ask(wan, FW_WAN, SERVICE_PORT, ANSWER_MS), 'fw', 'with the setting off, WAN is open again (the earlier default)');
  assert.equal(apiStatus(wan, FW_WAN, ANSWER_MS), '200');
  assert.deepEqual(simulate(links.wan, '10.36.2.2', FW_WAN).decided_by, { type: 'default', policy: 'pass' });
  assert.ok(!(lab.call('GET', '/api/v1/rules/system') as string[]).some((line) => line.includes('WAN default block')));
});
