/**
 * The freebsd VPN drivers through fake `ifconfig`, `wg`, `route`, `charon` and `swanctl` on PATH that record
 * every call: WireGuard interfaces are created with `ifconfig wg create`, configured with `wg setconf`,
 * addressed with `ifconfig` and routed with `route`; live peer changes touch only the peers that changed; IPsec
 * runs charon and loads swanctl.conf over the appliance's own VICI socket, and reads `swanctl --list-sas`.
 * The command sequences are compared with golden files (test/golden/freebsd-*.calls).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFreebsdWireguard } from '../src/platform/freebsd/wireguard.js';
import { createFreebsdIpsec } from '../src/platform/freebsd/ipsec.js';
import type { WireguardInterfaceSpec } from '../src/platform/wireguard.js';
import { HttpError } from '../src/core/errors.js';
import { assertGolden } from './helpers/golden.js';
import { fakeTools } from './helpers/fake-tools.js';

const tools = fakeTools('vpn');
const fakeDir = tools.dir;
const fake = tools.fake;
const work = mkdtempSync(join(tmpdir(), 'bulwark-vpn-files-'));
after(() => rmSync(work, { recursive: true, force: true }));

// ifconfig: `wg create name IF` makes IF exist; `IF destroy` removes it; `ifconfig IF` answers whether it exists.
fake('ifconfig', `
case "$*" in
  "wg create name "*) touch "$dir/if-$4" ;;
  *" destroy") rm -f "$dir/if-$1" ;;
  *" "*) ;;
  *) [ -e "$dir/if-$1" ] || exit 1 ;;
esac`);
// wg: `show IF dump` prints the dump file of the test; setconf copies the file it is given.
fake('wg', `
case "$1" in
  show) [ -e "$dir/if-$2" ] || exit 1; cat "$dir/dump-$2" 2>/dev/null ;;
  setconf) cp "$3" "$dir/setconf-$2" ;;
  set) case "$*" in *preshared-key\\ /dev/null*) ;; *preshared-key*) echo psk-read >> "$dir/psk-log" ;; esac ;;
esac`);
fake('route', '');
// charon: creates the VICI socket file named in its strongswan.conf, then waits like a daemon.
fake('charon', `
socket=$(sed -n 's#.*socket = "unix://\\([^"]*\\)".*#\\1#p' "$STRONGSWAN_CONF" | head -1)
mkdir -p "$(dirname "$socket")"; touch "$socket"
exec sleep 600`);
fake('swanctl', `
case "$*" in
  "--load-all"*) [ -e "$dir/swanctl-refuse" ] && echo "loading connection 'bulwark-x' failed: invalid value for: proposals, config discarded"; echo "loaded connection 'bulwark-x'" ;;
  "--list-sas --raw"*) echo 'list-sa event {bulwark-x {uniqueid=1 version=2 state=ESTABLISHED local-host=192.0.2.1 remote-host=192.0.2.2 local-id=CN=fw, O=Example established=12 child-sas {bulwark-x-1 {name=bulwark-x state=INSTALLED mode=TUNNEL protocol=ESP encap=no spi-in=c1 spi-out=c2 bytes-in=100 packets-in=2 bytes-out=200 packets-out=3 local-ts=[10.1.0.0/16] remote-ts=[10.9.0.0/24 10.10.0.0/24]}}}}'; echo 'list-sas reply {}' ;;
esac`);
/** The calls recorded since the last read, with the test's temporary paths replaced by names. */
const calls = () => tools.calls({ [work]: '<work>' });
/** Compares a command sequence with test/golden/<name>, one call a line. */
const assertGoldenCalls = (recorded: string[], name: string) => assertGolden(name, `${recorded.join('\n')}\n`);

const KEY = 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=';
const PEER_A = 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=';
const PEER_B = 'TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0=';
const spec = (peers: WireguardInterfaceSpec['peers']): WireguardInterfaceSpec => ({
  interface: 'wg0', private_key: KEY, public_key: PEER_A, listen_port: 51820, address: '10.8.0.1/24', mtu: null, peers,
  setconf: '[Interface]\nPrivateKey = <rendered>\n', setconfFile: join(work, 'wireguard', 'wg0.conf'),
});
const alice = { public_key: PEER_A, preshared_key: null, allowed_ips: ['10.8.0.2/32'], endpoint: null, persistent_keepalive: null };
const bob = { public_key: PEER_B, preshared_key: KEY, allowed_ips: ['10.8.0.3/32', '192.168.50.0/24'], endpoint: '198.51.100.7:51820', persistent_keepalive: 25 };

test('freebsd WireGuard: ifconfig creates and addresses the interface, wg setconf configures it, routes follow the peers, live changes touch only changed peers', async () => {
  const wireguard = createFreebsdWireguard();
  calls();
  await wireguard.up(spec([alice, bob]));
  assertGoldenCalls(calls(), 'freebsd-wireguard-up.calls');
  assert.equal(readFileSync(join(fakeDir, 'setconf-wg0'), 'utf8'), '[Interface]\nPrivateKey = <rendered>\n', 'wg reads the rendered file');

  // wg now reports both peers; Bob's allowed IPs change, Alice is removed, Carol is unchanged-and-absent.
  writeFileSync(join(fakeDir, 'dump-wg0'), [
    `${KEY}\t${PEER_A}\t51820\toff`,
    `${PEER_A}\t(none)\t(none)\t10.8.0.2/32\t0\t0\t0\toff`,
    `${PEER_B}\t${KEY}\t198.51.100.7:51820\t10.8.0.3/32,192.168.50.0/24\t1700000000\t10\t20\t25`,
  ].join('\n'));
  await wireguard.syncPeers(spec([alice, bob]));
  assert.deepEqual(calls(), ['wg show wg0 dump'], 'nothing changed: no peer is set again');
  await wireguard.syncPeers(spec([{ ...bob, allowed_ips: ['10.8.0.3/32', '192.168.60.0/24'] }]));
  assertGoldenCalls(calls(), 'freebsd-wireguard-sync.calls');
  assert.ok(!existsSync(join(work, 'wireguard', 'wg0.psk')), 'the preshared key file lives only while wg set reads it');
  assert.equal(readFileSync(join(fakeDir, 'psk-log'), 'utf8'), 'psk-read\n');

  const status = await wireguard.status('wg0');
  assert.equal(status.running, true);
  assert.equal(status.backend, 'kernel');
  assert.deepEqual(status.peers.map((p) => [p.public_key, p.allowed_ips]), [[PEER_A, '10.8.0.2/32'], [PEER_B, '10.8.0.3/32,192.168.50.0/24']]);
  calls();
  await wireguard.down('wg0');
  assert.deepEqual(calls(), ['ifconfig wg0', 'ifconfig wg0 destroy']);
  assert.equal((await wireguard.status('wg0')).running, false);
});

test('freebsd WireGuard: a tool that refuses answers 409 with its reason and leaves no half-configured interface; a missing tool answers 503 naming the package', async () => {
  const wireguard = createFreebsdWireguard();
  fake('wg', `[ "$1" = setconf ] && { echo "Line unrecognized: \\\`PrivateKey=${KEY}'" >&2; exit 1; }`);
  calls();
  await assert.rejects(wireguard.up(spec([alice])), (error: HttpError) => {
    assert.equal(error.statusCode, 409);
    assert.match(error.message, /^configuring wg0 failed: wg setconf: Line unrecognized/);
    assert.ok(!error.message.includes(KEY), 'a key the tool echoes never reaches the client');
    return true;
  });
  assert.deepEqual(calls(), ['ifconfig wg0', 'ifconfig wg create name wg0', 'wg setconf wg0 <work>/wireguard/wg0.conf', 'ifconfig wg0', 'ifconfig wg0 destroy']);
  rmSync(join(fakeDir, 'wg'));
  const path = process.env.PATH;
  process.env.PATH = fakeDir; // the host's own wg must not be found either
  try {
    await assert.rejects(wireguard.up(spec([alice])), (error: HttpError) => error.statusCode === 503 && /wg is not installed on this system: install the Debian package wireguard-tools/.test(error.message));
  } finally {
    process.env.PATH = path;
  }
});

test('freebsd IPsec: charon runs with the appliance\'s strongswan.conf, swanctl loads over its own VICI socket, SA state comes from --list-sas, a refused load is a 409', async () => {
  const ipsec = createFreebsdIpsec();
  assert.equal(await ipsec.dataPath(), 'kernel');
  const dir = join(work, 'charon');
  mkdirSync(join(dir, 'state'), { recursive: true });
  const files = { strongswanConf: join(dir, 'strongswan.conf'), swanctlDir: join(dir, 'swanctl'), viciSocket: join(dir, 'state', 'charon.vici'), pidFile: join(dir, 'state', 'charon.pid') };
  writeFileSync(files.strongswanConf, `charon {\n  plugins {\n    vici { socket = "unix://${files.viciSocket}" }\n  }\n}\n`);
  calls();
  try {
    await ipsec.apply(files);
    const recorded = calls();
    assert.equal(recorded[0], 'charon', 'charon started without arguments (its settings come from STRONGSWAN_CONF)');
    assertGoldenCalls(recorded.filter((c) => !c.startsWith('charon')).filter((c, i, all) => c !== all[i - 1]), 'freebsd-ipsec-apply.calls');
    assert.match(readFileSync(files.pidFile, 'utf8'), /^\d+\n$/);
    const status = await ipsec.status();
    assert.equal(status.running, true);
    assert.deepEqual(status.sas, [{
      name: 'bulwark-x', ike_state: 'ESTABLISHED', local_host: '192.0.2.1', remote_host: '192.0.2.2', established_secs: 12,
      children: [{ name: 'bulwark-x', state: 'INSTALLED', mode: 'tunnel', protocol: 'esp', encap: false, spi_in: 'c1', spi_out: 'c2', bytes_in: 100, bytes_out: 200, packets_in: 2, packets_out: 3, local_ts: ['10.1.0.0/16'], remote_ts: ['10.9.0.0/24', '10.10.0.0/24'] }],
    }]);
    writeFileSync(join(fakeDir, 'swanctl-refuse'), '');
    await assert.rejects(ipsec.apply(files), (error: HttpError) => error.statusCode === 409 && /loading connection 'bulwark-x' failed: invalid value for: proposals/.test(error.message));
    rmSync(join(fakeDir, 'swanctl-refuse'));
  } finally {
    await ipsec.stop();
  }
  assert.equal((await ipsec.status()).running, false);
});
