// A node:test reporter, plain JavaScript because node loads reporters before tsx's loader is in place.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/** test/allowed-skips.json without its comment: key → { file, reason }. */
export const ALLOWED_SKIPS = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(new URL('../allowed-skips.json', import.meta.url), 'utf8'))).filter(([key]) => key !== '//'),
);

/** Skips the runner itself makes (`--test-name-pattern`, `--test-only`): not a test declining to run. */
const RUNNER_SKIPS = new Set(['test name does not match pattern', "'only' option not set"]);

/** Whether a test in `file` may skip for `reason` under REQUIRE_SYSTEM_TESTS=1. */
export function isAllowedSkip(file, reason) {
  if (typeof reason === 'string' && RUNNER_SKIPS.has(reason)) return true;
  const path = file === undefined ? '' : relative(process.cwd(), file);
  return Object.values(ALLOWED_SKIPS).some((allowed) => allowed.file === path && allowed.reason === reason);
}

/**
 * `npm test` runs this next to spec: under REQUIRE_SYSTEM_TESTS=1 every skipped test not on
 * test/allowed-skips.json is listed and the run exits non-zero, so no skip passes for a pass in CI.
 * Without REQUIRE_SYSTEM_TESTS it reports nothing.
 */
export default async function* skipGuard(source) {
  const requireSystemTests = process.env.REQUIRE_SYSTEM_TESTS === '1';
  const refused = [];
  for await (const event of source) {
    if (!requireSystemTests || event.type !== 'test:pass') continue;
    const { skip, name, file } = event.data;
    if (skip === undefined || skip === false || isAllowedSkip(file, skip)) continue;
    refused.push(`${file ? relative(process.cwd(), file) : '?'}: "${name}" skipped (${skip === true ? 'no reason' : skip})`);
  }
  if (refused.length === 0) return;
  process.exitCode = 1;
  yield `REQUIRE_SYSTEM_TESTS=1: ${refused.length} skipped test(s) not on test/allowed-skips.json:\n${refused.map((line) => `  ${line}\n`).join('')}`;
}
