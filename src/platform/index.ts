import type { PlatformName } from '../config.js';
import type { Platform } from './platform.js';
import { createSimulatedPlatform } from './simulated/index.js';
import { createLinuxPlatform } from './linux/index.js';
import { createFreebsdPlatform } from './freebsd/index.js';

/** `aptRoot`: where OS updates run (BULWARK_APT_ROOT; `/` is the machine's own apt). `hostRoot`: where host settings write the host's files (BULWARK_HOST_ROOT). */
export function createPlatform(name: PlatformName, options: { aptRoot?: string; hostRoot?: string } = {}): Platform {
  switch (name) {
    case 'simulated':
      return createSimulatedPlatform();
    case 'linux':
      return createLinuxPlatform(options);
    case 'freebsd':
      return createFreebsdPlatform(options);
  }
}
