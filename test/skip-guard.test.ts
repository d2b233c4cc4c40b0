import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isAllowedSkip } from './helpers/skip-guard.mjs';
import { ALLOWED_SKIPS } from './helpers/system-skip.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = 'test/fixtures/skip-guard.fixture.ts';

/** Runs `npm test`'s own command line (its flags, reporters included) on one file instead of the whole suite. */
function npmTestOn(file: string, requireSystemTests: boolean) {
  const script = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { test: string } }).scripts.test;
  // The command that runs the tests is the script's last step (`files=$(… run-order.mjs) && node … $files`).
  const command = script.split('&&').at(-1)!.replace(/\$files\s*$/, '').replace(/\$\(find .*$/, '');
  const [node, ...flags] = command.trim().split(/\s+/);
  assert.equal(node, 'node', `npm test runs node: ${script}`);
  // Without NODE_TEST_CONTEXT, which marks this process as a child of a test run: the run below is a run of its own.
  const { NODE_TEST_CONTEXT: _inherited, ...inherited } = process.env;
  const env = { ...inherited, REQUIRE_SYSTEM_TESTS: requireSystemTests ? '1' : '' };
  return spawnSync(process.execPath, [...flags, file], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
}

test('under REQUIRE_SYSTEM_TESTS=1 npm test fails on a skipped test that is not on ALLOWED_SKIPS, naming it', () => {
  const run = npmTestOn(FIXTURE, true);
  assert.equal(run.status, 1, `exit status ${run.status}\n${run.stdout}${run.stderr}`);
  assert.match(`${run.stdout}${run.stderr}`, /skip-guard\.fixture\.ts: "declines to run" skipped \(a program it needs is not installed\)/);
});

test('without REQUIRE_SYSTEM_TESTS the same skip is only reported', () => {
  const run = npmTestOn(FIXTURE, false);
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.doesNotMatch(`${run.stdout}${run.stderr}`, /not on ALLOWED_SKIPS/);
});

test('the allow-list accepts exactly its reason from exactly its file, and the runner\'s own name-pattern skips', () => {
  const vlan = ALLOWED_SKIPS['vlan-8021q'];
  assert.equal(isAllowedSkip(`${ROOT}${vlan.file}`, vlan.reason), true);
  assert.equal(isAllowedSkip(`${ROOT}test/e2e/dns-client.test.ts`, vlan.reason), false, 'the reason from another file');
  assert.equal(isAllowedSkip(`${ROOT}${vlan.file}`, 'unbound is not installed'), false, 'another reason from the file');
  assert.equal(isAllowedSkip(`${ROOT}${vlan.file}`, true), false, 'a skip without a reason');
  assert.equal(isAllowedSkip(`${ROOT}test/x.test.ts`, 'test name does not match pattern'), true);
});
