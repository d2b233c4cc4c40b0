import os from 'node:os';
import type { SystemInfo } from './platform.js';

/** System facts read from the running OS (used by every platform: even the simulation runs on a real host). */
export function readSystemInfo(): SystemInfo {
  return {
    hostname: os.hostname(),
    os: `${os.type()} ${os.release()}`,
    kernel: os.version(),
    arch: os.arch(),
    cpus: os.cpus().length,
    memory_total_bytes: os.totalmem(),
    memory_free_bytes: os.freemem(),
    uptime_seconds: Math.round(os.uptime()),
    load_average: os.loadavg(),
  };
}
