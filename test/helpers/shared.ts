import { existsSync } from 'node:fs';
import { cannotRun, systemSkip } from './system-skip.js';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

/**
 * ../shared (specification and fixtures) exists next to a developer checkout and in CI, not in a user's
 * clone. BULWARK_SHARED_DIR points elsewhere (.ci/run sets it for a clone of a local checkout).
 */
export const SHARED_DIR = process.env.BULWARK_SHARED_DIR
  ? resolve(process.env.BULWARK_SHARED_DIR)
  : resolve(fileURLToPath(new URL('../../../shared', import.meta.url)));
export { REQUIRE_SYSTEM_TESTS } from './system-skip.js';

/**
 * The path of a shared file, and a skip reason when it is absent (a throw under REQUIRE_SYSTEM_TESTS=1).
 * Use as `{ skip: sharedFile(path).skip }`.
 */
export function sharedFile(relativePath: string): { path: string; skip: string | false } {
  const path = resolve(SHARED_DIR, relativePath);
  if (existsSync(path)) return { path, skip: false };
  return { path, skip: cannotRun(`${relativePath} not found (${path}): ../shared is only present in a developer checkout`) };
}

/** Skip reason for tests that need only root: `systemSkip(what, { root: true })` (test/helpers/system-skip.ts). */
export const rootSkipReason = (what: string): string | false => systemSkip(what, { root: true });
