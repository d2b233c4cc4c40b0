/**
 * DHCP proven from a client's side: Bulwark (`--platform linux`) runs Kea in a firewall namespace; busybox
 * udhcpc in a client namespace beside it obtains a lease; the API lists it with the client's MAC (read through
 * Kea's control socket), counts it in the pool statistics and metrics (Kea's own statistics), a reservation
 * for that MAC gives the client its fixed address when it renews, and DELETE releases the lease in Kea.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { keaHookLibrary } from '../../src/platform/kea-hooks.js';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab } from '../helpers/netns-lab.js';

const skipReason = () => systemSkip('the DHCP namespace lab', {
  root: true,
  programs: ['kea-dhcp4', 'busybox', 'ip', 'setpriv'],
  users: ['_kea'],
  also: [['libdhcp_lease_cmds.so (kea-common)', keaHookLibrary('libdhcp_lease_cmds.so')]],
});

const CLIENT_MAC = '02:42:0a:ea:00:99';

/** One DHCP exchange by busybox udhcpc in the client namespace; `requested` asks for an address (a renewal). */
function udhcpc(ns: string, link: string, requested?: string): { address: string | null; output: string } {
  const args = ['netns', 'exec', ns, 'busybox', 'udhcpc', '-i', link, '-f', '-q', '-n', '-t', '10', '-T', '1', '-s', '/bin/true', ...(requested ? ['-r', requested] : [])];
  const result = spawnSync('ip', args, { encoding: 'utf8', timeout: 60_000 });
  const output = `${result.stdout}${result.stderr}`; // udhcpc reports on stderr
  return { address: /lease of (\S+) obtained/.exec(output)?.[1] ?? null, output };
}

test('a client obtains a lease from Kea; Bulwark lists it with the MAC, counts it, pins it by reservation on renewal and releases it', { skip: skipReason(), timeout: 240_000 }, async () => {
  // The data directory inside a private (0700) folder: the daemons still reach their files (runtime tree).
  const lab = new NetnsLab('bw', { privateParent: true });
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const serverLink = `d${lab.tag}`;
    const clientLink = `c${lab.tag}`;
    lab.link({ ns: fw, name: serverLink, address: '10.234.0.1/24' }, { ns: client, name: clientLink, mac: CLIENT_MAC });
    lab.startBulwark(fw, await freePort());

    lab.call('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: [serverLink] });
    const subnet = lab.call('POST', '/api/v1/dhcp/v4/subnets', { network: '10.234.0.0/24', pool_start: '10.234.0.100', pool_end: '10.234.0.150', gateway: '10.234.0.1' });
    const applied = lab.call('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(applied.running, true, JSON.stringify(applied));

    const first = udhcpc(client, clientLink);
    assert.ok(first.address, first.output);
    assert.match(first.address!, /^10\.234\.0\.1\d\d$/);

    const [leases, pools, metrics, status] = lab.api(['GET', '/api/v1/dhcp/v4/leases'], ['GET', '/api/v1/dhcp/pool-stats'], ['GET', '/api/v1/dhcp/metrics'], ['GET', '/api/v1/dhcp/status']);
    const lease = leases.body.find((l: { ip_address: string }) => l.ip_address === first.address);
    assert.ok(lease, `the lease is listed: ${JSON.stringify(leases.body)}`);
    assert.equal(lease.mac_address, CLIENT_MAC);
    assert.equal(lease.subnet, '10.234.0.0/24');
    assert.equal(lease.state, 'bound');
    assert.deepEqual(pools.body, [{ subnet: '10.234.0.0/24', total: 51, allocated: 1, available: 50, utilization: 1.96 }]);
    assert.match(metrics.body, /^bulwark_dhcp4_up 1$/m);
    assert.match(metrics.body, /^bulwark_dhcp4_leases_assigned\{subnet="10\.234\.0\.0\/24"\} 1$/m);
    assert.match(metrics.body, /^bulwark_dhcp4_packets_total\{kind="ack-sent"\} [1-9]\d*$/m, metrics.body);
    assert.equal(status.body.running, true);
    assert.equal(typeof status.body.pid, 'number');
    assert.equal(status.body.active_leases, 1);
    assert.match(status.body.config_sha256, /^[0-9a-f]{64}$/);
    assert.equal(status.body.last_apply_result, 'ok');
    // Its pid and lock files live in the runtime state directory (KEA_PIDFILE_DIR, KEA_LOCKFILE_DIR).
    const logs: string[] = lab.call('GET', '/api/v1/dhcp/logs?lines=2000');
    assert.ok(!logs.some((line) => /Unable to open PID file|interprocess sync|DHCP4_INIT_FAIL/.test(line)), logs.join('\n'));

    // A reservation for the client's MAC (outside the pool): Kea is re-applied at once; the renewal gets it.
    lab.call('POST', '/api/v1/dhcp/v4/reservations', { subnet_id: subnet.id, mac_address: CLIENT_MAC, ip_address: '10.234.0.50', hostname: 'pinned' });
    const renewed = udhcpc(client, clientLink, first.address!);
    assert.equal(renewed.address, '10.234.0.50', renewed.output);
    const [afterReservation] = lab.api(['GET', '/api/v1/dhcp/v4/leases']);
    const pinned = afterReservation.body.find((l: { ip_address: string }) => l.ip_address === '10.234.0.50');
    assert.ok(pinned, JSON.stringify(afterReservation.body));
    assert.equal(pinned.mac_address, CLIENT_MAC);
    assert.ok(!afterReservation.body.some((l: { ip_address: string }) => l.ip_address === first.address), 'Kea moved the client off its pool address');

    // DELETE releases the lease in Kea (lease4-del through the lease_cmds hook).
    lab.call('DELETE', '/api/v1/dhcp/v4/leases/10.234.0.50');
    const [gone, poolsAfter, missing] = lab.api(['GET', '/api/v1/dhcp/v4/leases'], ['GET', '/api/v1/dhcp/pool-stats'], ['DELETE', '/api/v1/dhcp/v4/leases/10.234.0.50']);
    assert.deepEqual(gone.body, [], 'no lease left');
    assert.equal(poolsAfter.body[0].allocated, 0);
    assert.equal(missing.status, 404);
  } finally {
    await lab.cleanup();
  }
});
