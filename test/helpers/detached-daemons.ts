/**
 * The daemons a Bulwark started for a data directory run detached (their own session, src/platform/
 * supervised-process.ts): stopping or killing Bulwark leaves them running, and deleting a namespace does not end
 * a process inside it. A test that ran Bulwark as a separate process ends them here, by the pid records under
 * the data directory and its runtime tree, before it removes those directories (the records go with them).
 * Only a process whose record still matches (same pid, start time and program) is signalled: never a reused pid.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readProcessRecord, recordedProcessRuns, type ProcessRecord } from '../../src/platform/process-record.js';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';

function recordsUnder(dir: string): ProcessRecord[] {
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names.filter((name) => name.endsWith('.pid.json')).map((name) => readProcessRecord(join(dir, name))).filter((record): record is ProcessRecord => record !== null);
}

/** Ends every detached daemon recorded for `dataDir` (SIGTERM, SIGKILL after 5 s); the pids it ended. */
export async function stopDetachedDaemons(dataDir: string, runtimeDir = runtimeRoot({ dataDir })): Promise<number[]> {
  const running = [...recordsUnder(dataDir), ...recordsUnder(runtimeDir)].filter(recordedProcessRuns);
  const signal = (sig: NodeJS.Signals) => {
    for (const record of running.filter(recordedProcessRuns)) {
      try {
        process.kill(record.pid, sig);
      } catch {
        // already gone
      }
    }
  };
  signal('SIGTERM');
  for (const deadline = Date.now() + 5000; running.some(recordedProcessRuns) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
  signal('SIGKILL');
  return running.map((record) => record.pid);
}
