import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { measuredSeconds, runOrder, testFiles } from './helpers/run-order.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('npm test runs every test file exactly once: the order script lists what find lists', () => {
  const found = execFileSync('find', ['test', '-name', '*.test.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean).sort();
  const listed = execFileSync(process.execPath, ['test/helpers/run-order.mjs'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  assert.deepEqual([...listed].sort(), found);
  assert.equal(new Set(listed).size, listed.length, 'no file twice');
  assert.deepEqual(testFiles(), found);
});

test('the slowest measured file runs first, a file never measured before every measured one, ties in name order', () => {
  const order = runOrder(['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts', 'test/e2e/new.test.ts', 'test/d.test.ts'], { 'test/a.test.ts': 5, 'test/b.test.ts': 300, 'test/c.test.ts': 5, 'test/d.test.ts': 40 });
  assert.deepEqual(order, ['test/e2e/new.test.ts', 'test/b.test.ts', 'test/d.test.ts', 'test/a.test.ts', 'test/c.test.ts']);
});

test('test/durations.json holds seconds per file (a file removed since only leaves a line the order ignores)', () => {
  const seconds = measuredSeconds();
  assert.ok(Object.keys(seconds).length > 0, 'durations are checked in');
  for (const [file, value] of Object.entries(seconds)) assert.ok(typeof value === 'number' && value >= 0, `${file}: ${value}`);
});
