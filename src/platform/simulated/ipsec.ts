import type { IpsecControl, IpsecFiles } from '../ipsec.js';
import { LINUX_KERNEL_PLUGINS } from '../linux/ipsec.js';

/** No charon: the configuration is kept (files written by the area), and no SA ever establishes. */
export function createSimulatedIpsec(): IpsecControl {
  let loaded: IpsecFiles | null = null;
  return {
    daemon: 'charon',
    dataPath: async () => 'kernel',
    kernelPlugins: LINUX_KERNEL_PLUGINS,
    async apply(files) {
      loaded = files;
    },
    release() {},
    async stop() {
      loaded = null;
    },
    async status() {
      return { running: loaded !== null, backend: 'simulated', data_path: null, pid: null, restarts: 0, last_error: null, sas: [] };
    },
  };
}
