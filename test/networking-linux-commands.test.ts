/**
 * The linux network driver through a fake `ip` on PATH that records every call (arguments and batch input):
 * what an interface change, a VLAN and a static route ask of iproute2, what a refused batch puts back, and that
 * a hostile description never becomes a batch line. The VLAN commands are proven here because this kernel has
 * no 802.1Q support (test/e2e/routing-interfaces.test.ts keeps the namespace test for kernels that have it).
 */
import { test, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLinuxNetwork } from '../src/platform/linux/network.js';
import { HttpError } from '../src/core/errors.js';
import type { NetInterface } from '../src/platform/network.js';
import { createSimulatedPlatform } from '../src/platform/simulated/index.js';
import { startAreaApp } from './helpers/area-app.js';
import { json } from './helpers/app.js';

const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-fake-ip-'));
writeFileSync(join(fakeDir, 'ip'), `#!/bin/sh
# Fake ip: records each call, answers reads from canned JSON, refuses a batch when asked to.
dir="${fakeDir}"
n=$(ls "$dir"/call-* 2>/dev/null | wc -l)
echo "$*" > "$dir/call-$n.args"
case "$*" in
  *"-batch -"*) cat > "$dir/call-$n.input"
    if [ -e "$dir/refuse-batch" ] && [ "$1" = "-batch" ]; then echo "RTNETLINK answers: Numerical result out of range"; echo "Command failed -:2" >&2; exit 1; fi ;;
  "-j link show dev eth1") if [ -e "$dir/read-once" ] && [ -e "$dir/link-after.json" ]; then cat "$dir/link-after.json"; else cat "$dir/link.json"; fi; touch "$dir/read-once" ;;
  "-j addr show dev eth1") cat "$dir/addr.json" ;;
  "link show dev vlan30") [ -e "$dir/vlan-exists" ] || exit 1 ;;
  "link add "*) if [ -e "$dir/no-vlan" ]; then echo "Error: Unknown device type." >&2; exit 2; fi ;;
  "route del "*) if [ -e "$dir/route-gone" ]; then echo "RTNETLINK answers: No such process" >&2; exit 2; fi ;;
esac
exit 0
`);
chmodSync(join(fakeDir, 'ip'), 0o755);
const originalPath = process.env.PATH;
process.env.PATH = `${fakeDir}:${process.env.PATH}`;
after(() => {
  process.env.PATH = originalPath;
  rmSync(fakeDir, { recursive: true, force: true });
});

const LINK = [{ ifname: 'eth1', flags: ['BROADCAST', 'UP'], mtu: 1500, link_type: 'ether', ifalias: 'lan' }];
const ADDRESSES = [{ ifname: 'eth1', addr_info: [
  { family: 'inet', local: '192.0.2.1', prefixlen: 24, scope: 'global' },
  { family: 'inet6', local: '2001:db8::1', prefixlen: 64, scope: 'global' },
  { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' },
] }];

function calls(): { args: string; input?: string }[] {
  return readdirSync(fakeDir).filter((f) => f.endsWith('.args'))
    .sort((a, b) => Number(a.split(/[-.]/)[1]) - Number(b.split(/[-.]/)[1]))
    .map((f) => {
      const input = join(fakeDir, f.replace('.args', '.input'));
      return { args: readFileSync(join(fakeDir, f), 'utf8').trim(), input: existsSync(input) ? readFileSync(input, 'utf8') : undefined };
    });
}

beforeEach(() => {
  for (const f of readdirSync(fakeDir)) if (f !== 'ip') rmSync(join(fakeDir, f));
  writeFileSync(join(fakeDir, 'link.json'), JSON.stringify(LINK));
  writeFileSync(join(fakeDir, 'addr.json'), JSON.stringify(ADDRESSES));
});

test('an interface change is one ip -batch: addresses of the named family replaced, MTU, description and state set', async () => {
  const network = createLinuxNetwork();
  const outcome = await network.configureInterface('eth1', { ipv4_mode: 'static', ipv4_address: '198.51.100.7/25', mtu: 1400, description: 'guest lan', enabled: true });
  assert.equal(outcome.applied, true);
  const batch = calls().filter((c) => c.input !== undefined);
  assert.equal(batch.length, 1, 'one batch');
  assert.equal(batch[0].args, '-batch -');
  assert.equal(batch[0].input, [
    'address del 192.0.2.1/24 dev eth1',
    'address add 198.51.100.7/25 dev eth1',
    'link set dev eth1 mtu 1400',
    'link set dev eth1 alias "guest lan"',
    'link set dev eth1 up',
    '',
  ].join('\n'));
});

test('ipv4_mode none removes the IPv4 addresses only; ipv6_address replaces the global IPv6 one (link-local kept)', async () => {
  await createLinuxNetwork().configureInterface('eth1', { ipv4_mode: 'none', ipv6_address: '2001:db8:5::1/64' });
  const [batch] = calls().filter((c) => c.input !== undefined);
  assert.equal(batch.input, ['address del 192.0.2.1/24 dev eth1', 'address del 2001:db8::1/64 dev eth1', 'address add 2001:db8:5::1/64 dev eth1', ''].join('\n'));
});

test('a batch the kernel refuses is answered 409 with its one-line reason, and what it changed is put back', async () => {
  writeFileSync(join(fakeDir, 'refuse-batch'), '');
  await assert.rejects(createLinuxNetwork().configureInterface('eth1', { mtu: 9000, description: 'x' }), (error: HttpError) => {
    assert.equal(error.statusCode, 409);
    assert.equal(error.message, 'interface eth1: the kernel refused the change (RTNETLINK answers: Numerical result out of range); the previous settings are kept');
    return true;
  });
  const batches = calls().filter((c) => c.input !== undefined);
  assert.equal(batches.length, 1, 'the fake reads the interface unchanged after the refusal, so nothing is put back');
});

test('half a refused batch is undone: the restore batch (ip -force) sets back what the kernel shows changed', async () => {
  writeFileSync(join(fakeDir, 'refuse-batch'), '');
  // Read after the refusal, the interface shows the first line applied (MTU 9000, down).
  writeFileSync(join(fakeDir, 'link-after.json'), JSON.stringify([{ ...LINK[0], mtu: 9000, flags: ['BROADCAST'] }]));
  await assert.rejects(createLinuxNetwork().configureInterface('eth1', { mtu: 9000, enabled: false, description: 'lan' }), (error: HttpError) => error.statusCode === 409);
  const batches = calls().filter((c) => c.input !== undefined);
  assert.deepEqual(batches.map((b) => b.args), ['-batch -', '-force -batch -']);
  assert.equal(batches[1].input, 'link set dev eth1 mtu 1500\nlink set dev eth1 up\n');
});

test('a hostile description never becomes a batch line: refused before ip runs', async () => {
  for (const description of ['a\nlink set dev eth0 down', 'x" up', 'a # b', 'tab\there\u0000']) {
    await assert.rejects(createLinuxNetwork().configureInterface('eth1', { description }), (error: HttpError) => error.statusCode === 409 && /body\.description/.test(error.message));
  }
  assert.equal(calls().filter((c) => c.input !== undefined).length, 0, 'no batch was run');
});

test('ipv4_mode dhcp is refused on linux (no DHCP client is run for the appliance itself)', async () => {
  await assert.rejects(createLinuxNetwork().configureInterface('eth1', { ipv4_mode: 'dhcp' }), (error: HttpError) => error.statusCode === 409 && /dhcp/.test(error.message));
  assert.deepEqual(calls(), []);
});

test('VLANs: ip link add link PARENT name vlanN type vlan id N, brought up; removal deletes the device; a kernel without 802.1Q answers 409', async () => {
  const network = createLinuxNetwork();
  await network.setVlan({ device: 'vlan30', parent: 'eth1', vlan_id: 30, mtu: 1496 }, true);
  assert.deepEqual(calls().map((c) => c.args), ['link show dev vlan30', 'link add link eth1 name vlan30 mtu 1496 type vlan id 30', 'link set dev vlan30 up']);
  for (const f of readdirSync(fakeDir)) if (f.startsWith('call-')) rmSync(join(fakeDir, f));
  writeFileSync(join(fakeDir, 'vlan-exists'), '');
  await network.setVlan({ device: 'vlan30', parent: 'eth1', vlan_id: 30, mtu: 1496 }, false);
  assert.deepEqual(calls().map((c) => c.args), ['link show dev vlan30', 'link del dev vlan30']);
  rmSync(join(fakeDir, 'vlan-exists'));
  writeFileSync(join(fakeDir, 'no-vlan'), '');
  await assert.rejects(network.setVlan({ device: 'vlan30', parent: 'eth1', vlan_id: 30, mtu: 1500 }, true), (error: HttpError) =>
    error.statusCode === 409 && error.message === 'VLAN vlan30 could not be created: Error: Unknown device type.');
});

test('static routes: ip route replace on install, ip route del on withdrawal (already gone is fine), main for table 0', async () => {
  const network = createLinuxNetwork();
  await network.setStaticRoute({ destination: '10.9.0.0/16', gateway: '192.0.2.254', interface: 'eth1', metric: 5, table: 0 }, true);
  await network.setStaticRoute({ destination: 'default', gateway: '192.0.2.254', interface: null, metric: 0, table: 7 }, false);
  assert.deepEqual(calls().map((c) => c.args), [
    'route replace 10.9.0.0/16 via 192.0.2.254 dev eth1 metric 5 table main',
    'route del default via 192.0.2.254 metric 0 table 7',
  ]);
  writeFileSync(join(fakeDir, 'route-gone'), '');
  const outcome = await network.setStaticRoute({ destination: '10.9.0.0/16', gateway: '192.0.2.254', interface: 'eth1', metric: 5, table: 0 }, false);
  assert.equal(outcome.applied, true);
});

test('restore re-applies VLANs through the networking applier: restoring a version without vlan30 deletes it, restoring one with it creates it; a reload leaves it alone', async () => {
  // The app's networking area on the linux driver (fake ip); the host shows eth1 only, as `ip -j link` would.
  const linux = createLinuxNetwork();
  const eth1: NetInterface = { name: 'eth1', mac: '02:00:00:00:00:01', mtu: 1500, up: true, loopback: false, ipv4: '192.0.2.1', ipv4_prefix: 24, ipv6: null, vlan_id: null, vlan_parent: null, description: null, counters: { bytes_in: 0, bytes_out: 0, packets_in: 0, packets_out: 0, errors_in: 0, errors_out: 0 } };
  const platform = { ...createSimulatedPlatform(), network: { ...linux, interfaces: async () => [eth1] } };
  const t = await startAreaApp({ platform });
  const args = () => calls().map((c) => c.args);
  const clearCalls = () => {
    for (const f of readdirSync(fakeDir)) if (f.startsWith('call-')) rmSync(join(fakeDir, f));
  };
  try {
    const without = json((await t.request('POST', '/api/v1/reload'))).version;
    const created = await t.request('POST', '/api/v1/vlans', { vlan_id: 30, parent: 'eth1', mtu: 1496 });
    assert.equal(created.statusCode, 201, created.body);
    assert.ok(args().includes('link add link eth1 name vlan30 mtu 1496 type vlan id 30'), JSON.stringify(args()));
    writeFileSync(join(fakeDir, 'vlan-exists'), '');
    clearCalls();
    const withVlan = json(await t.request('POST', '/api/v1/reload')).version;
    assert.deepEqual(args().filter((a) => a.startsWith('link')), [], 'a reload does not re-create a VLAN the kernel holds as stored');

    clearCalls();
    const restored = await t.request('POST', '/api/v1/config/restore', { version: without });
    assert.equal(restored.statusCode, 200, restored.body);
    assert.deepEqual(args().filter((a) => a.startsWith('link')), ['link show dev vlan30', 'link del dev vlan30'], 'restoring the version without it deletes vlan30');
    assert.ok(json(restored).appliers.some((a: { name: string; ok: boolean }) => a.name === 'networking' && a.ok), restored.body);
    rmSync(join(fakeDir, 'vlan-exists'));

    clearCalls();
    const back = await t.request('POST', '/api/v1/config/restore', { version: withVlan });
    assert.equal(back.statusCode, 200, back.body);
    assert.deepEqual(args().filter((a) => a.startsWith('link')), ['link show dev vlan30', 'link add link eth1 name vlan30 mtu 1496 type vlan id 30', 'link set dev vlan30 up'], 'restoring the version with it creates vlan30');

    // A kernel that refuses the VLAN: the restore answers 409 naming it, and the previous configuration is put back.
    writeFileSync(join(fakeDir, 'vlan-exists'), '');
    await t.request('POST', '/api/v1/config/restore', { version: without });
    rmSync(join(fakeDir, 'vlan-exists'));
    writeFileSync(join(fakeDir, 'no-vlan'), '');
    const refused = await t.request('POST', '/api/v1/config/restore', { version: withVlan });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(json(refused).error, /networking: creating VLAN vlan30: VLAN vlan30 could not be created: Error: Unknown device type\..*the previous configuration was put back/);
    assert.deepEqual(json(await t.request('GET', '/api/v1/vlans')), [], 'the stored VLANs are those of the previous configuration');
  } finally {
    await t.close();
  }
});
