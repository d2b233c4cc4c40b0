/**
 * The DNS-block and DHCP-lease hooks of plugins, fed from the real daemons (docs/plugins.md): Bulwark
 * (`--platform linux`) runs Unbound and Kea in a firewall namespace and a test plugin subscribed to `dns_query`
 * and `dhcp_lease`. From a client namespace, dig asks for a name a custom block holds — Unbound's blocklist filter
 * logs the block, the event hub announces `dns.block`, the plugin receives it — and busybox udhcpc takes a lease —
 * Kea's run_script hook reports it, the hub announces `dhcp.lease`, the plugin receives it with the client's MAC
 * (and the script's token-bearing lines are not among Kea's log lines).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { keaHookLibrary } from '../../src/platform/kea-hooks.js';
import { unboundPythonDir } from '../../src/platform/unbound-python.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, ROOT } from '../helpers/netns-lab.js';

const skipReason = () => systemSkip('the plugin hooks namespace lab', {
  root: true,
  programs: ['kea-dhcp4', 'busybox', 'unbound', 'unbound-checkconf', 'unbound-control', 'dig', 'ip', 'setpriv'],
  users: ['_kea', 'unbound', 'nobody'],
  also: [
    ['python3-unbound', unboundPythonDir()],
    ['libdhcp_lease_cmds.so (kea-common)', keaHookLibrary('libdhcp_lease_cmds.so')],
    ['libdhcp_run_script.so (kea-common)', keaHookLibrary('libdhcp_run_script.so')],
  ],
});

const FW = '10.239.0.1';
const CLIENT = '10.239.0.2';
const CLIENT_MAC = '02:42:0a:ef:00:42';
const BLOCKED = 'blocked.hooks.example';

test('a plugin subscribed to dns_query and dhcp_lease receives the block of a dig and the lease of udhcpc', { skip: skipReason(), timeout: 300_000 }, async () => {
  const lab = new NetnsLab('pe', { privateParent: true });
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const fwLink = `d${lab.tag}`;
    const clientLink = `c${lab.tag}`;
    lab.link({ ns: fw, name: fwLink, address: `${FW}/24` }, { ns: client, name: clientLink, address: `${CLIENT}/24`, mac: CLIENT_MAC });
    cpSync(join(ROOT, 'test/fixtures/plugins/hook-probe'), join(lab.dataDir, 'plugins', 'hook-probe'), { recursive: true });
    lab.startBulwark(fw, await freePort());

    lab.call('POST', '/api/v1/plugins/toggle', { name: 'hook-probe' }, 200);
    const output = (): string[] => (lab.call('GET', '/api/v1/plugins/hook-probe/logs?lines=500').entries as string[]);
    const waitFor = async (what: string, pattern: RegExp): Promise<string> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const found = output().find((line) => pattern.test(line));
        if (found) return found;
        if (Date.now() > deadline) assert.fail(`the plugin never logged ${what}; its log:\n${output().join('\n')}\n${lab.log}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    await waitFor('its hello', /output: hello hooks=dns_query,dhcp_lease/);

    // DNS: a custom block; dig from the client gets NXDOMAIN, the filter's block line becomes the plugin's event.
    lab.call('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: [FW], port: 53, forwarding_enabled: false, dnssec: false, rebind_protection: false });
    lab.call('POST', '/api/v1/dns/resolver/acls', { network: '10.239.0.0/24', action: 'allow' });
    lab.call('POST', '/api/v1/dns/customblocks', { pattern: BLOCKED });
    const resolver = lab.call('POST', '/api/v1/dns/resolver/apply');
    assert.equal(resolver.running, true, JSON.stringify(resolver));
    const dig = spawnSync('ip', ['netns', 'exec', client, 'dig', '+time=3', '+tries=3', '+noall', '+comments', '-b', CLIENT, `@${FW}`, BLOCKED, 'A'], { encoding: 'utf8', timeout: 30_000 });
    assert.match(dig.stdout, /status: NXDOMAIN/, dig.stdout + dig.stderr);
    const block = await waitFor('the DNS block', new RegExp(`output: event dns_query dns\\.block .*"qname":"${BLOCKED.replaceAll('.', '\\.')}"`));
    const blocked = JSON.parse(block.slice(block.indexOf('{')));
    assert.deepEqual({ client: blocked.client, qtype: blocked.qtype, action: blocked.action, zone: blocked.zone }, { client: CLIENT, qtype: 'A', action: 'nxdomain', zone: 'custom' });

    // DHCP: a subnet on the same link; udhcpc takes a lease, Kea's run_script hook reports it.
    lab.call('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: [fwLink] });
    lab.call('POST', '/api/v1/dhcp/v4/subnets', { network: '10.239.0.0/24', pool_start: '10.239.0.100', pool_end: '10.239.0.150', gateway: FW });
    const dhcp = lab.call('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(dhcp.running, true, JSON.stringify(dhcp));
    const udhcpc = spawnSync('ip', ['netns', 'exec', client, 'busybox', 'udhcpc', '-i', clientLink, '-f', '-q', '-n', '-t', '10', '-T', '1', '-s', '/bin/true'], { encoding: 'utf8', timeout: 60_000 });
    const address = /lease of (\S+) obtained/.exec(`${udhcpc.stdout}${udhcpc.stderr}`)?.[1];
    assert.ok(address, `${udhcpc.stdout}${udhcpc.stderr}`);
    const lease = await waitFor('the DHCP lease', new RegExp(`output: event dhcp_lease dhcp\\.lease .*"ip_address":"${address.replaceAll('.', '\\.')}"`));
    const leased = JSON.parse(lease.slice(lease.indexOf('{')));
    assert.equal(leased.event, 'leases4_committed');
    assert.equal(leased.mac_address, CLIENT_MAC);
    assert.ok(leased.valid_lifetime > 0, JSON.stringify(leased));
    // The script's lines carry its token: read by Bulwark, never shown among Kea's log lines.
    const keaLog: string[] = lab.call('GET', '/api/v1/dhcp/logs?lines=2000');
    assert.ok(keaLog.length > 0 && !keaLog.some((line) => line.includes('bulwark-lease')), keaLog.join('\n'));
  } finally {
    await lab.cleanup();
  }
});
