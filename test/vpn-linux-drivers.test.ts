/**
 * The linux VPN drivers' refusals, through fake `ip` and `wg` on PATH: a kernel without the WireGuard module and
 * no wireguard-go answers 503 naming the package; a tool that refuses answers 409 with its reason and the
 * half-made interface is removed again; charon or swanctl missing answers 503 naming their packages.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLinuxWireguard } from '../src/platform/linux/wireguard.js';
import { createCharonIpsec } from '../src/platform/charon-ipsec.js';
import { LINUX_KERNEL_PLUGINS } from '../src/platform/linux/ipsec.js';
import type { HttpError } from '../src/core/errors.js';

const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-fake-linux-vpn-'));
const work = mkdtempSync(join(tmpdir(), 'bulwark-linux-vpn-files-'));
const path = process.env.PATH;
after(() => {
  process.env.PATH = path;
  rmSync(fakeDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const fake = (name: string, behaviour: string) => {
  writeFileSync(join(fakeDir, name), `#!/bin/sh\nPATH=/usr/bin:/bin\ndir="${fakeDir}"\nn=$(ls "$dir"/call-* 2>/dev/null | wc -l)\nprintf '%s\\n' "${name} $*" > "$dir/call-$(printf '%04d' "$n")"\n${behaviour}\nexit 0\n`);
  chmodSync(join(fakeDir, name), 0o755);
};
function calls(): string[] {
  const files = readdirSync(fakeDir).filter((f) => f.startsWith('call-')).sort();
  const lines = files.map((f) => readFileSync(join(fakeDir, f), 'utf8').trim());
  for (const f of files) rmSync(join(fakeDir, f));
  return lines;
}

const spec = {
  interface: 'b13t0', private_key: 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=', public_key: 'xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=', listen_port: 51820,
  address: '10.8.0.1/24', mtu: null, peers: [], setconf: '[Interface]\n', setconfFile: join(work, 'b13t0.conf'),
};

test('linux WireGuard: no kernel module and no wireguard-go is a 503 naming the package', async () => {
  // Only the fakes are found: the kernel refuses the wireguard link type, and wireguard-go is not installed.
  fake('ip', '[ "$1 $2" = "link add" ] && { echo "Error: Unknown device type." >&2; exit 2; }; [ "$1 $2" = "link show" ] && exit 1');
  fake('wg', '');
  process.env.PATH = fakeDir;
  await assert.rejects(createLinuxWireguard().up(spec), (error: HttpError) => {
    assert.equal(error.statusCode, 503);
    assert.equal(error.message, 'this kernel has no WireGuard module and wireguard-go is not installed on this system: install the Debian package wireguard-go');
    return true;
  });
  // A link already there (left running by an earlier API process) would be adopted; there is none.
  assert.deepEqual(calls(), ['ip link show dev b13t0', 'ip link add dev b13t0 type wireguard']);
});

test('linux WireGuard: an address the kernel refuses is a 409 with the reason, and the interface is removed again', async () => {
  // The kernel module exists here (the fake accepts the link type); the address is refused.
  fake('ip', `
case "$1 $2" in
  "link add") touch "$dir/link" ;;
  "link show") [ -e "$dir/link" ] || exit 1 ;;
  "link del") rm -f "$dir/link" ;;
  "address add") echo "RTNETLINK answers: File exists" >&2; exit 2 ;;
esac`);
  process.env.PATH = fakeDir;
  await assert.rejects(createLinuxWireguard().up(spec), (error: HttpError) => error.statusCode === 409 && error.message === 'addressing b13t0 failed: ip address: RTNETLINK answers: File exists');
  assert.deepEqual(calls(), [
    'ip link show dev b13t0', 'ip link add dev b13t0 type wireguard', `wg setconf b13t0 ${join(work, 'b13t0.conf')}`,
    'ip -o address show dev b13t0 scope global', 'ip address add 10.8.0.1/24 dev b13t0', 'ip link show dev b13t0', 'ip link del dev b13t0',
  ]);
  process.env.PATH = path;
});

test('charon and swanctl missing are 503s naming their packages', async () => {
  const files = { strongswanConf: join(work, 's.conf'), swanctlDir: join(work, 'swanctl'), viciSocket: join(work, 'v'), pidFile: join(work, 'p') };
  const without = (missing: string) => createCharonIpsec({ program: 'charon-systemd', daemon: 'charon-systemd', dataPath: async () => 'libipsec', kernelPlugins: LINUX_KERNEL_PLUGINS, findProgram: (p) => (p === missing ? null : `/usr/bin/${p}`) });
  await assert.rejects(without('charon-systemd').apply(files), (error: HttpError) => error.statusCode === 503 && /install the Debian package charon-systemd$/.test(error.message));
  await assert.rejects(without('swanctl').apply(files), (error: HttpError) => error.statusCode === 503 && /install the Debian package strongswan-swanctl$/.test(error.message));
  const noLibipsec = createCharonIpsec({
    program: 'charon-systemd', daemon: 'charon-systemd', dataPath: async () => 'libipsec', kernelPlugins: LINUX_KERNEL_PLUGINS, findProgram: (p) => `/usr/bin/${p}`,
    missing: (dataPath) => (dataPath === 'libipsec' ? { program: 'libstrongswan-kernel-libipsec.so', package: 'libcharon-extra-plugins' } : null),
  });
  await assert.rejects(noLibipsec.apply(files), (error: HttpError) => error.statusCode === 503 && /install the Debian package libcharon-extra-plugins$/.test(error.message));
});
