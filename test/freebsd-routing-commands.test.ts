/**
 * The FreeBSD equivalents of the Linux routing drivers, through fake ifconfig, route, pfctl and sysctl on PATH
 * that record every call: an interface change as ifconfig steps (undone in reverse when one is refused),
 * VLANs, static routes in a FIB, interface pinning, the policy-routing anchors and cutting states by label.
 */
import { test, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFreebsdNetwork } from '../src/platform/freebsd/network.js';
import { createFreebsdRouting } from '../src/platform/freebsd/routing.js';
import { HttpError } from '../src/core/errors.js';

const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-fake-freebsd-'));
const recorder = (tool: string, body: string) => {
  writeFileSync(join(fakeDir, tool), `#!/bin/sh
dir="${fakeDir}"
n=$(ls "$dir"/call-* 2>/dev/null | wc -l)
echo "${tool} $*" > "$dir/call-$n.args"
case " $* " in *" -f - "*) cat > "$dir/call-$n.input" ;; esac
${body}
exit 0
`);
  chmodSync(join(fakeDir, tool), 0o755);
};
recorder('ifconfig', `case "$*" in
  "em1") cat "$dir/em1.txt" ;;
  "vlan30") [ -e "$dir/vlan-exists" ] || exit 1 ;;
  *" mtu 9000") echo "ifconfig: ioctl SIOCSIFMTU (set mtu): Invalid argument" >&2; exit 1 ;;
esac`);
recorder('route', `case "$*" in
  "-n add "*) if [ -e "$dir/route-exists" ]; then echo "route: writing to routing socket: File exists" >&2; exit 1; fi ;;
esac`);
recorder('pfctl', `case "$*" in "-k label -k pbr:p1") echo "killed 3 states from 1 rules" >&2 ;; esac`);
recorder('sysctl', `[ "$*" = "-n net.fibs" ] && echo 4`);
const originalPath = process.env.PATH;
process.env.PATH = `${fakeDir}:${process.env.PATH}`;
after(() => {
  process.env.PATH = originalPath;
  rmSync(fakeDir, { recursive: true, force: true });
});

const EM1 = `em1: flags=8843<UP,BROADCAST,RUNNING,SIMPLEX,MULTICAST> metric 0 mtu 1500
\tdescription: lan
\tether 00:0c:29:aa:bb:cc
\tinet 192.0.2.1 netmask 0xffffff00 broadcast 192.0.2.255
\tinet6 fe80::1%em1 prefixlen 64 scopeid 0x2
\tinet6 2001:db8::1 prefixlen 64
`;

function calls(): { args: string; input?: string }[] {
  return readdirSync(fakeDir).filter((f) => f.endsWith('.args'))
    .sort((a, b) => Number(a.split(/[-.]/)[1]) - Number(b.split(/[-.]/)[1]))
    .map((f) => {
      const input = join(fakeDir, f.replace('.args', '.input'));
      return { args: readFileSync(join(fakeDir, f), 'utf8').trim(), input: existsSync(input) ? readFileSync(input, 'utf8') : undefined };
    });
}

beforeEach(() => {
  for (const f of readdirSync(fakeDir)) if (!['ifconfig', 'route', 'pfctl', 'sysctl'].includes(f)) rmSync(join(fakeDir, f));
  writeFileSync(join(fakeDir, 'em1.txt'), EM1);
});

test('an interface change is ifconfig steps: the named family\'s addresses replaced, MTU, description, state', async () => {
  const outcome = await createFreebsdNetwork().configureInterface('em1', { ipv4_mode: 'static', ipv4_address: '198.51.100.7/25', ipv6_address: null, mtu: 1400, description: 'guest lan', enabled: false });
  assert.equal(outcome.applied, true);
  assert.deepEqual(calls().map((c) => c.args), [
    'ifconfig em1',
    'ifconfig em1 inet 192.0.2.1/24 -alias',
    'ifconfig em1 inet 198.51.100.7/25 alias',
    'ifconfig em1 inet6 2001:db8::1/64 -alias',
    'ifconfig em1 mtu 1400',
    'ifconfig em1 description guest lan',
    'ifconfig em1 down',
  ]);
});

test('a refused step undoes the steps that ran, in reverse, and answers 409 with ifconfig\'s reason', async () => {
  await assert.rejects(createFreebsdNetwork().configureInterface('em1', { ipv4_mode: 'none', description: null, mtu: 9000 }), (error: HttpError) => {
    assert.equal(error.statusCode, 409);
    assert.equal(error.message, 'interface em1: ifconfig refused the change (ifconfig: ioctl SIOCSIFMTU (set mtu): Invalid argument); the previous settings are kept');
    return true;
  });
  assert.deepEqual(calls().map((c) => c.args), [
    'ifconfig em1',
    'ifconfig em1 inet 192.0.2.1/24 -alias',
    'ifconfig em1 mtu 9000',
    'ifconfig em1 inet 192.0.2.1/24 alias',
  ]);
});

test('VLANs: ifconfig vlanN create vlan N vlandev PARENT; removal destroys the device', async () => {
  const network = createFreebsdNetwork();
  await network.setVlan({ device: 'vlan30', parent: 'em1', vlan_id: 30, mtu: 1496 }, true);
  writeFileSync(join(fakeDir, 'vlan-exists'), '');
  await network.setVlan({ device: 'vlan30', parent: 'em1', vlan_id: 30, mtu: 1496 }, false);
  assert.deepEqual(calls().map((c) => c.args), ['ifconfig vlan30', 'ifconfig vlan30 create vlan 30 vlandev em1 mtu 1496 up', 'ifconfig vlan30', 'ifconfig vlan30 destroy']);
});

test('static routes: route add in the FIB, changed in place when one exists, deleted on withdrawal', async () => {
  const network = createFreebsdNetwork();
  await network.setStaticRoute({ destination: '10.9.0.0/16', gateway: '192.0.2.254', interface: 'em1', metric: 5, table: 2 }, true);
  writeFileSync(join(fakeDir, 'route-exists'), '');
  await network.setStaticRoute({ destination: 'default', gateway: '2001:db8::fe', interface: null, metric: 0, table: 0 }, true);
  await network.setStaticRoute({ destination: '10.9.0.0/16', gateway: '192.0.2.254', interface: 'em1', metric: 5, table: 2 }, false);
  assert.deepEqual(calls().map((c) => c.args), [
    'route -n add -fib 2 -4 10.9.0.0/16 192.0.2.254',
    'route -n add -fib 0 -6 default 2001:db8::fe',
    'route -n change -fib 0 -6 default 2001:db8::fe',
    'route -n delete -fib 2 -4 10.9.0.0/16 192.0.2.254',
  ]);
});

test('policy routing: FIBs from sysctl, pinning with ifconfig fib, anchors loaded whole with pfctl -a, states cut by label', async () => {
  const routing = createFreebsdRouting();
  assert.equal(routing.dialect, 'pf');
  assert.deepEqual(await routing.fibs(), { net_fibs: 4 });
  await routing.pinInterface('em2', 3);
  await routing.loadAnchors({ 'bulwark-pbr': 'pass in quick on em1 from any to any rtable 3 keep state (if-bound) label "pbr:p1"\n', 'bulwark-mwan-leak': '' });
  assert.equal(await routing.killStates('pbr:p1'), 3);
  const recorded = calls();
  assert.deepEqual(recorded.map((c) => c.args), ['sysctl -n net.fibs', 'ifconfig em2 fib 3', 'pfctl -a bulwark-pbr -f -', 'pfctl -a bulwark-mwan-leak -f -', 'pfctl -k label -k pbr:p1']);
  assert.equal(recorded[2].input, 'pass in quick on em1 from any to any rtable 3 keep state (if-bound) label "pbr:p1"\n');
  await assert.rejects(routing.enableFibs(8, true), (error: HttpError) => error.statusCode === 503 && /loader\.conf/.test(error.message));
  await assert.rejects(routing.flows(10), (error: HttpError) => error.statusCode === 503);
});
