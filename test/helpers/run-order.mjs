// Prints every test file `npm test` runs, slowest first (plain JavaScript: it runs before tsx is loaded).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every *.test.ts under test/, relative to the repository, in name order. */
export function testFiles(dir = join(ROOT, 'test')) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
    })
    .sort();
}

/** test/durations.json: seconds each file took in a measured run (test/helpers/file-times.mjs writes it). */
export function measuredSeconds() {
  const path = join(ROOT, 'test/durations.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
}

/**
 * Longest first: node runs the files in the order given, N at a time, so a long file started last is a tail
 * the others cannot share. A file not measured yet counts as the slowest, so a new long suite never lands at
 * the end; ties keep name order.
 */
export function runOrder(files = testFiles(), seconds = measuredSeconds()) {
  const slowest = Math.max(0, ...Object.values(seconds));
  const estimate = (file) => seconds[file] ?? slowest + 1;
  return [...files].sort((a, b) => estimate(b) - estimate(a) || (a < b ? -1 : a > b ? 1 : 0));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(`${runOrder().join('\n')}\n`);
