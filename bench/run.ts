import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** Runs every bench/*.bench.ts in its own process (so one benchmark's heap never skews another's). */
const directory = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const files = readdirSync(directory).filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only))).sort();
let failed = false;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(directory, file)], { stdio: 'inherit' });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
