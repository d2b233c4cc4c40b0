import { accessSync, constants } from 'node:fs';
import { createCharonIpsec } from '../charon-ipsec.js';
import { findProgram } from '../daemon-tools.js';
import type { IpsecControl } from '../ipsec.js';

/** FreeBSD's strongSwan package keeps charon in libexec, outside PATH. */
const LIBEXEC_CHARON = '/usr/local/libexec/ipsec/charon';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** strongSwan on FreeBSD: charon in the foreground; the kernel carries ESP (kernel-pfkey). */
export function createFreebsdIpsec(): IpsecControl {
  return createCharonIpsec({
    program: 'charon',
    daemon: 'charon',
    dataPath: async () => 'kernel',
    // PF_KEY for the SAs, the routing socket for routes and addresses.
    kernelPlugins: { kernel: ['kernel-pfkey', 'kernel-pfroute'], libipsec: ['kernel-libipsec', 'kernel-pfroute'] },
    findProgram: (program) => findProgram(program) ?? (program === 'charon' && executable(LIBEXEC_CHARON) ? LIBEXEC_CHARON : null),
  });
}
