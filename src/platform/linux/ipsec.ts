import { existsSync } from 'node:fs';
import { createCharonIpsec } from '../charon-ipsec.js';
import { findProgram } from '../daemon-tools.js';
import { runCommand } from '../exec.js';
import type { IpsecControl, IpsecDataPath } from '../ipsec.js';

const PLUGIN_DIR = '/usr/lib/ipsec/plugins';
/** Netlink for routes and addresses; kernel-libipsec carries ESP in userspace where the kernel has none. */
export const LINUX_KERNEL_PLUGINS = { kernel: ['kernel-netlink'], libipsec: ['kernel-libipsec', 'kernel-netlink'] };

/**
 * Whether this kernel carries ESP: an ESP state is added in a throwaway network namespace (nothing of the
 * host's is touched). Kernels built without ESP (as in some VMs) refuse it; strongSwan's userspace
 * kernel-libipsec then carries the traffic through a TUN device.
 */
async function probeDataPath(): Promise<IpsecDataPath> {
  const unshare = findProgram('unshare');
  const ip = findProgram('ip');
  if (!unshare || !ip) return 'libipsec';
  const result = await runCommand(unshare, ['--net', ip, 'xfrm', 'state', 'add', 'src', '192.0.2.1', 'dst', '192.0.2.2', 'proto', 'esp', 'spi', '0x100',
    'mode', 'tunnel', 'enc', 'cbc(aes)', `0x${'11'.repeat(16)}`, 'auth', 'hmac(sha256)', `0x${'22'.repeat(32)}`], { timeoutMs: 5000 });
  return result.code === 0 ? 'kernel' : 'libipsec';
}

/** strongSwan on Debian: charon-systemd in the foreground, with kernel-libipsec where the kernel has no ESP. */
export function createLinuxIpsec(): IpsecControl {
  return createCharonIpsec({
    program: 'charon-systemd',
    daemon: 'charon-systemd',
    dataPath: probeDataPath,
    kernelPlugins: LINUX_KERNEL_PLUGINS,
    missing: (dataPath) => {
      if (!existsSync(`${PLUGIN_DIR}/libstrongswan-openssl.so`)) return { program: 'libstrongswan-openssl.so', package: 'libstrongswan-standard-plugins' };
      if (dataPath === 'libipsec' && !existsSync(`${PLUGIN_DIR}/libstrongswan-kernel-libipsec.so`)) return { program: 'libstrongswan-kernel-libipsec.so', package: 'libcharon-extra-plugins' };
      return null;
    },
  });
}
