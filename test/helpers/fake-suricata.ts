import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The fake engine's process in the namespace (a node process running fake-suricata.mjs without -T or -V). */
export function enginePid(ns: string): number | null {
  for (const pid of spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.some((arg) => arg.endsWith('fake-suricata.mjs')) && !argv.includes('-T') && !argv.includes('-V')) return Number(pid);
    } catch {
      // gone
    }
  }
  return null;
}
