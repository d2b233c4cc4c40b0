/**
 * A plugin feeds a `plugin` alias and the kernel drops what it fed (issue 38 item 4), proven from clients in
 * namespaces the test creates: Bulwark (`--platform linux`) in a firewall namespace runs the test plugin
 * (test/fixtures/plugins/probe-plugin) as nobody; a rule blocks the alias; the address the plugin feeds from its
 * settings cannot open a connection to the firewall while the other client can, and new settings move the block.
 * Only these namespaces are touched.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT, inNamespace } from '../helpers/netns-lab.js';

const skip = systemSkip('the plugin provider namespace lab', { root: true, programs: ['ip', 'nft'], users: ['nobody'] });
const SERVICE_PORT = '8038';
let lab: NetnsLab;
let fw = '';
let one = '';
let two = '';
let linkOne = '';

/** What a TCP service on the firewall said to a client (`failed: …` when the connection got nowhere). */
const ask = (ns: string, host: string) =>
  inNamespace(ns, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-ask.mjs'), host, SERVICE_PORT, '1000'], { timeoutMs: 10_000 }).trim();

/** Polls until both clients get the expected answers (a plugin's feed is asynchronous); deadline 20 s. */
async function expectReach(oneReaches: boolean, twoReaches: boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const said = [ask(one, '10.38.1.1'), ask(two, '10.38.2.1')];
    if ((said[0] === 'fw') === oneReaches && (said[1] === 'fw') === twoReaches) return;
    if (Date.now() > deadline) assert.fail(`clients said ${JSON.stringify(said)}, expected reach ${oneReaches}/${twoReaches}\n${JSON.stringify(lab.call('GET', '/api/v1/plugins/probe-plugin/logs'))}\n${lab.log}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

before(async () => {
  if (skip) return;
  lab = new NetnsLab('b38');
  fw = lab.namespace('fw');
  one = lab.namespace('c1');
  two = lab.namespace('c2');
  const t = lab.tag.slice(-8);
  linkOne = `b38a${t}`;
  lab.link({ ns: fw, name: linkOne, address: '10.38.1.1/24' }, { ns: one, name: `b38A${t}`, address: '10.38.1.2/24' });
  lab.link({ ns: fw, name: `b38b${t}`, address: '10.38.2.1/24' }, { ns: two, name: `b38B${t}`, address: '10.38.2.2/24' });
  const service = lab.spawnIn(fw, process.execPath, [join(ROOT, 'test/e2e/fixtures/tcp-say.mjs'), SERVICE_PORT, 'fw']);
  await new Promise((resolve) => service.stdout!.once('data', resolve));
  cpSync(join(ROOT, 'test/fixtures/plugins/probe-plugin'), join(lab.dataDir, 'plugins', 'probe-plugin'), { recursive: true });
  lab.startBulwark(fw, await freePort());
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('a plugin feeds a plugin alias: the fed address is dropped by the kernel and simulate says block; new settings move the block', { skip, timeout: 120_000 }, async () => {
  lab.call('POST', '/api/v1/aliases', { name: 'probe_feed', alias_type: 'plugin', entries: ['probe-plugin'] });
  lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', src_addr: '<probe_feed>', dst_addr: 'any', dst_port_start: Number(SERVICE_PORT), dst_port_end: Number(SERVICE_PORT) });
  lab.call('POST', '/api/v1/reload');
  await expectReach(true, true);

  lab.call('PUT', '/api/v1/plugins/probe-plugin/config', { settings: { block: ['10.38.1.2'] } });
  lab.call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin' }, 200);
  await expectReach(false, true);
  const simulated = lab.call('POST', '/api/v1/rules/simulate', { interface: linkOne, direction: 'in', protocol: 'tcp', src: '10.38.1.2', dst: '10.38.1.1', src_port: 40000, dst_port: Number(SERVICE_PORT) }, 200);
  assert.equal(simulated.verdict, 'block', JSON.stringify(simulated));

  lab.call('PUT', '/api/v1/plugins/probe-plugin/config', { settings: { block: ['10.38.2.0/24'] } });
  await expectReach(true, false);
});

test('ip-reputation, once enabled, blocks its list by itself: a system rule in /rules/system, simulate says block, packets drop; disabling lifts it', { skip, timeout: 120_000 }, async () => {
  lab.call('POST', '/api/v1/plugins/toggle', { name: 'probe-plugin', enabled: false }, 200);
  await expectReach(true, true);
  lab.call('PUT', '/api/v1/plugins/ip-reputation/config', { settings: { blocklist: ['10.38.1.2'] } });
  lab.call('POST', '/api/v1/plugins/toggle', { name: 'ip-reputation' }, 200);
  await expectReach(false, true);
  const system = lab.call('GET', '/api/v1/rules/system') as string[];
  assert.ok(system.some((line) => line.includes('saddr @alias_sysplugin_ip_reputation_v4') && line.includes('drop comment "system: plugin ip-reputation blocklist"')), system.join('\n'));
  const simulated = lab.call('POST', '/api/v1/rules/simulate', { interface: linkOne, direction: 'in', protocol: 'tcp', src: '10.38.1.2', dst: '10.38.1.1', src_port: 40000, dst_port: Number(SERVICE_PORT) }, 200);
  assert.deepEqual([simulated.verdict, simulated.decided_by], ['block', { type: 'system', rule: 'plugin-blocklist' }], JSON.stringify(simulated));
  assert.equal(lab.call('GET', '/api/v1/plugins').plugins.find((p: { name: string }) => p.name === 'ip-reputation').state, 'running');

  lab.call('POST', '/api/v1/plugins/toggle', { name: 'ip-reputation', enabled: false }, 200);
  await expectReach(true, true);
  assert.ok(!(lab.call('GET', '/api/v1/rules/system') as string[]).some((line) => line.includes('ip-reputation')), 'the system rule is gone');
});
