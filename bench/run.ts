import { copyFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Compiles src/ and bench/ with tsc (as `npm start` runs compiled JavaScript, so figures such as RSS are the
 * product's, not the TypeScript loader's), then runs every *.bench.js in its own process so one benchmark's
 * heap never skews another's. `npm run bench -- <name>` runs the files whose name contains <name>.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build', 'bench');
rmSync(out, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json'), '--outDir', out], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(1);
copyFileSync(join(root, 'package.json'), join(out, 'package.json')); // build-info reads the version from it

const only = process.argv[2];
const directory = join(out, 'bench');
const files = readdirSync(directory).filter((f) => f.endsWith('.bench.js') && (!only || f.includes(only))).sort();
let failed = false;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, [join(directory, file)], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
