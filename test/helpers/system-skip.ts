import type { TestContext } from 'node:test';
import { ALLOWED_SKIPS } from './skip-guard.mjs';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { systemAccount } from '../../src/platform/daemon-runtime.js';

/**
 * The one way a test skips for want of the system (root, a program, a daemon's user, a file, a kernel
 * feature). Without REQUIRE_SYSTEM_TESTS=1 it answers a skip reason; with it (CI, `.ci/run`) a missing need
 * throws, so the suite fails instead of skipping. The only skips allowed under REQUIRE_SYSTEM_TESTS=1 are
 * test/allowed-skips.json, each with its reason; test/helpers/skip-guard.mjs (a reporter `npm test` runs) fails
 * the run on any other skipped test. How to use it: test/README.md.
 */
export const REQUIRE_SYSTEM_TESTS = process.env.REQUIRE_SYSTEM_TESTS === '1';

/** What a system test needs; every list is optional. */
export interface SystemNeeds {
  /** Root: network namespaces, nftables, daemons run as their own users. */
  root?: boolean;
  /** Programs that must be on PATH (or in the sbin directories findProgram also searches). */
  programs?: readonly string[];
  /** System accounts the test runs daemons as (`_kea`, `unbound`, `caddy`). */
  users?: readonly string[];
  /** Anything else, as [what is missing when unmet, whether it is met]: a hook library, a reachable Redis. */
  also?: readonly (readonly [missing: string, met: unknown])[];
}

/** A reason not to run, or under REQUIRE_SYSTEM_TESTS=1 an error that fails the suite. */
export function cannotRun(reason: string): string {
  if (REQUIRE_SYSTEM_TESTS) throw new Error(`REQUIRE_SYSTEM_TESTS=1 but ${reason}`);
  return reason;
}

/**
 * `false` when everything `what` needs is here, else the skip reason naming what is missing (or, under
 * REQUIRE_SYSTEM_TESTS=1, a thrown error). Use as `test(name, { skip: systemSkip('the DNS lab', {...}) }, …)`.
 */
export function systemSkip(what: string, needs: SystemNeeds): string | false {
  if (needs.root && process.getuid?.() !== 0) return cannotRun(`${what} needs root`);
  const missing = [
    ...(needs.programs ?? []).filter((program) => !findProgram(program)),
    ...(needs.users ?? []).filter((user) => !systemAccount(user)).map((user) => `the ${user} user`),
    ...(needs.also ?? []).filter(([, met]) => !met).map(([name]) => name),
  ];
  return missing.length === 0 ? false : cannotRun(`${what} needs ${missing.join(', ')}`);
}

/**
 * The skips allowed even under REQUIRE_SYSTEM_TESTS=1 (test/allowed-skips.json): a need CI cannot meet, the
 * file that may skip for it and its exact reason. test/helpers/skip-guard.mjs accepts exactly these.
 */
export { ALLOWED_SKIPS } from './skip-guard.mjs';

/** Skips the running test for one of ALLOWED_SKIPS. */
export function allowedSkip(t: TestContext, key: string): void {
  const allowed = ALLOWED_SKIPS[key];
  if (!allowed) throw new Error(`${key} is not in test/allowed-skips.json`);
  t.skip(allowed.reason);
}
