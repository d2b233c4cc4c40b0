/**
 * CARP on FreeBSD (issue 39 item 1), through fake ifconfig and sysctl on PATH that record every call: the
 * virtual addresses become `ifconfig … vhid … advskew … pass … alias` (golden), advskew follows the role,
 * demotion and failing checks (lower wins), pfsync follows the state-sync peer, stale CARP addresses go, the
 * state is read from `ifconfig -a`, and a refusal is a 409 that never shows the password.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeTools } from './helpers/fake-tools.js';
import { assertGolden } from './helpers/golden.js';
import { advskew, createFreebsdCarp, parseCarp } from '../src/platform/freebsd/carp.js';
import type { HaSpec } from '../src/platform/ha.js';

const tools = fakeTools('carp');
// ifconfig -a prints the file `ifconfig-a.txt` the test writes (the kernel's state); a `vhid 66` address is refused.
tools.fake('ifconfig', `case "$*" in
  "-a") cat "$dir/ifconfig-a.txt" 2>/dev/null ;;
  *" vhid 66 "*) echo "ifconfig: SIOCAIFADDR: File exists" >&2; exit 1 ;;
esac`);
tools.fake('sysctl', '');
const kernel = (text: string) => writeFileSync(join(tools.dir, 'ifconfig-a.txt'), text);

const SPEC: HaSpec = {
  role: 'primary', demotion: 0, failingChecks: 0, runtime: { dataDir: '/var/db/bulwark' } as HaSpec['runtime'],
  addresses: [
    { vhid: 39, virtualIp: '10.0.1.1', prefix: 24, interface: 'em1', password: 'lanpw' },
    { vhid: 40, virtualIp: '2001:db8::1', prefix: 64, interface: 'em0', password: 'wanpw' },
  ],
  stateSync: { syncInterface: 'em2', syncPeer: '10.255.0.2' },
};

const IFCONFIG_A = `em0: flags=8943<UP,BROADCAST,RUNNING,PROMISC,SIMPLEX,MULTICAST> metric 0 mtu 1500
\tinet6 2001:db8::1 prefixlen 64 vhid 40
\tcarp: MASTER vhid 40 advbase 1 advskew 50
em1: flags=8943<UP,BROADCAST,RUNNING,PROMISC,SIMPLEX,MULTICAST> metric 0 mtu 1500
\tinet 10.0.1.2 netmask 0xffffff00 broadcast 10.0.1.255
\tinet 10.0.1.1 netmask 0xffffff00 broadcast 10.0.1.255 vhid 39
\tinet 10.0.9.1 netmask 0xffffff00 broadcast 10.0.9.255 vhid 9
\tcarp: MASTER vhid 39 advbase 1 advskew 50
\tcarp: BACKUP vhid 9 advbase 1 advskew 100
pfsync0: flags=41<UP,RUNNING> metric 0 mtu 1500
\tsyncdev: em2 syncpeer: 10.255.0.2 maxupd: 128 defer: off
`;

test('advskew: the primary below the secondary; a demotion, a failing check or a promotion moves it across', () => {
  assert.equal(advskew('primary', 0, 0), 50);
  assert.equal(advskew('secondary', 0, 0), 100);
  assert.ok(advskew('primary', 240, 0) > advskew('secondary', 0, 0), 'a demoted primary gives the addresses away');
  assert.ok(advskew('primary', 0, 1) > advskew('secondary', 0, 0), 'a primary with a failing check falls below a healthy secondary');
  assert.ok(advskew('secondary', -100, 0) < advskew('primary', 0, 0), 'a promoted secondary takes them');
  assert.equal(advskew('primary', 240, 5), 254, 'within CARP\'s range');
});

test('apply: the stale CARP address goes, preemption on, each address with its vhid, advskew and password, pfsync to the peer (golden); status from ifconfig -a', async () => {
  kernel(IFCONFIG_A);
  tools.calls();
  const carp = createFreebsdCarp();
  const status = await carp.apply(SPEC);
  assertGolden('freebsd-carp-apply.txt', `${tools.calls().join('\n')}\n`);
  assert.equal(status.engine, 'carp');
  assert.equal(status.vrrp_state, 'master', 'both vhids of the specification are MASTER (vhid 9 is not ours)');
  assert.equal(status.state_sync?.running, true);
  kernel(IFCONFIG_A.replace('carp: MASTER vhid 40', 'carp: BACKUP vhid 40'));
  assert.equal((await carp.status()).vrrp_state, 'mixed');
  kernel(IFCONFIG_A.replaceAll('carp: MASTER', 'carp: BACKUP'));
  assert.equal((await carp.status()).vrrp_state, 'backup');
  assert.equal(carp.vrrpState(), 'backup');
  tools.calls();
  await carp.adjust(240, 0);
  assert.deepEqual(tools.calls(), ['ifconfig em1 vhid 39 advskew 254', 'ifconfig em0 vhid 40 advskew 254'], 'demote: only the skew changes (to the slowest)');
  kernel(IFCONFIG_A);
  tools.calls();
  await carp.apply(null);
  assert.deepEqual(tools.calls(), ['ifconfig -a', 'ifconfig em0 inet6 2001:db8::1 -alias', 'ifconfig em1 inet 10.0.1.1 -alias', 'ifconfig em1 inet 10.0.9.1 -alias', 'ifconfig pfsync0 -syncdev -syncpeer down', 'ifconfig -a']);
});

test('a refused address answers 409 naming the command, never the password', async () => {
  kernel('');
  const carp = createFreebsdCarp();
  await assert.rejects(carp.apply({ ...SPEC, addresses: [{ vhid: 66, virtualIp: '10.6.6.1', prefix: 24, interface: 'em1', password: 'S3cret' }] }), (error: Error & { statusCode?: number }) => {
    assert.equal(error.statusCode, 409);
    assert.match(error.message, /ifconfig em1 inet vhid 66 advskew 50 pass \*\*\* alias 10\.6\.6\.1\/24 was refused: ifconfig: SIOCAIFADDR: File exists/);
    assert.doesNotMatch(error.message, /S3cret/);
    return true;
  });
});

test('parseCarp reads the addresses and states of every interface', () => {
  const { addresses, states } = parseCarp(IFCONFIG_A);
  assert.deepEqual(addresses, [{ interface: 'em0', address: '2001:db8::1', vhid: 40 }, { interface: 'em1', address: '10.0.1.1', vhid: 39 }, { interface: 'em1', address: '10.0.9.1', vhid: 9 }]);
  assert.deepEqual(states.map((state) => [state.vhid, state.state, state.advskew]), [[40, 'MASTER', 50], [39, 'MASTER', 50], [9, 'BACKUP', 100]]);
});
