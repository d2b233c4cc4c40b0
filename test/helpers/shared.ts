import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

/**
 * ../shared (specification and fixtures) exists next to a developer checkout and in CI, not in a user's
 * clone. BULWARK_SHARED_DIR points elsewhere (.ci/run sets it for a clone of a local checkout).
 */
export const SHARED_DIR = process.env.BULWARK_SHARED_DIR
  ? resolve(process.env.BULWARK_SHARED_DIR)
  : resolve(fileURLToPath(new URL('../../../shared', import.meta.url)));
export const REQUIRE_SYSTEM_TESTS = process.env.REQUIRE_SYSTEM_TESTS === '1';

/**
 * Returns a skip reason when a shared file is absent, or throws when REQUIRE_SYSTEM_TESTS=1 demands it.
 * Use as `{ skip: sharedSkipReason(path) }`.
 */
export function sharedFile(relativePath: string): { path: string; skip: string | false } {
  const path = resolve(SHARED_DIR, relativePath);
  if (existsSync(path)) return { path, skip: false };
  if (REQUIRE_SYSTEM_TESTS) throw new Error(`REQUIRE_SYSTEM_TESTS=1 but ${path} is missing`);
  return { path, skip: `${relativePath} not found: ../shared is only present in a developer checkout` };
}

/** Skip reason for tests that need root (network namespaces, nftables), or a failure under REQUIRE_SYSTEM_TESTS. */
export function rootSkipReason(what: string): string | false {
  if (process.getuid?.() === 0) return false;
  if (REQUIRE_SYSTEM_TESTS) throw new Error(`REQUIRE_SYSTEM_TESTS=1 but ${what} needs root`);
  return `${what} needs root`;
}
