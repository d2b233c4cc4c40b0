import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;

/** Every *.test.ts under test/, as `npm test` finds them. */
function testFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The timeouts a file's tests declare (`test('…', { timeout: 120_000 }, …)`), in milliseconds. */
const declaredTimeouts = (source: string) =>
  [...source.matchAll(/^\s*test\(.*?\btimeout: ([\d_]+)/gm)].map((match) => Number(match[1].replaceAll('_', '')));

test('npm test bounds every test file with --test-timeout, above what the slowest file\'s tests declare', () => {
  const flag = /--test-timeout=(\d+)\b/.exec(script);
  assert.ok(flag, `npm test sets no --test-timeout, so a hung test blocks the run: ${script}`);
  const limit = Number(flag[1]);
  // Node 20 runs each file in its own process and applies --test-timeout to the file as a whole.
  const slowest = testFiles()
    .map((file) => ({ file, declared: declaredTimeouts(readFileSync(file, 'utf8')).reduce((sum, ms) => sum + ms, 0) }))
    .sort((a, b) => b.declared - a.declared)[0];
  assert.ok(slowest.declared > 0, 'some test declares a timeout');
  // A minute on top for the file's hooks (namespaces, daemons) and its tests that declare none.
  assert.ok(limit >= slowest.declared + 60_000, `--test-timeout=${limit} leaves ${slowest.file} (tests declaring ${slowest.declared} ms) too little`);
  assert.ok(limit <= 30 * 60_000, `--test-timeout=${limit}: a hung test should fail well within a CI job`);
});
