import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alias, config, rule } from './helpers/firewall-fixtures.js';
import { compilePf } from '../src/compile/pf.js';
import { nftSystemView } from '../src/compile/nftables.js';
import { simulatePacket } from '../src/compile/packet-simulation.js';

/** A blocklist plugin's system alias fed with one address, and a user rule passing everything. */
const withBlocklist = config({
  aliases: [alias('sysplugin_ip_reputation', 'plugin', ['ip-reputation'])],
  urlTables: { sysplugin_ip_reputation: ['203.0.113.7'] },
  rules: [rule({ action: 'pass', direction: 'in', quick: true })],
  system: { api: { host: '0.0.0.0', port: 8080 }, antiLockoutInterfaces: [], nflogGroup: 1, pluginBlocks: [{ plugin: 'ip-reputation', alias: 'sysplugin_ip_reputation' }] },
});
const host = { loopback: 'lo', byInterface: new Map([['eth0', ['192.0.2.1']]]) };
const packet = (src: string, dst_port = 443) => ({ interface: 'eth0', direction: 'in' as const, protocol: 'tcp' as const, src, dst: '192.0.2.1', src_port: 40000, dst_port });

test('a plugin blocklist is a system rule on both platforms, before user rules and after the anti-lockout', () => {
  const nft = nftSystemView(withBlocklist);
  assert.ok(nft.includes('ip saddr @alias_sysplugin_ip_reputation_v4 counter drop comment "system: plugin ip-reputation blocklist"'), nft.join('\n'));
  const pf = compilePf(withBlocklist).text.split('\n');
  const block = pf.indexOf('block in quick from <sysplugin_ip_reputation> label "bulwark:plugin-ip-reputation"');
  assert.ok(block > 0, pf.join('\n'));
  assert.ok(pf.findIndex((line) => line.includes('bulwark:anti-lockout')) < block, 'the anti-lockout comes first');
  assert.ok(pf.includes('table <sysplugin_ip_reputation> persist { 203.0.113.7 }'), 'the table holds what the plugin fed');

  assert.deepEqual(simulatePacket(withBlocklist, packet('203.0.113.7'), host).decided_by, { type: 'system', rule: 'plugin-blocklist' }, 'a listed source is blocked although a user rule passes everything');
  assert.equal(simulatePacket(withBlocklist, packet('203.0.113.8'), host).verdict, 'pass');
  assert.equal(simulatePacket(withBlocklist, packet('203.0.113.7', 8080), host).verdict, 'pass', 'the anti-lockout keeps the API reachable');
});
