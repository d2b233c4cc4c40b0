import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/golden: the expected output of the renderers, the compilers and the FreeBSD command sequences. */
export const GOLDEN_DIR = fileURLToPath(new URL('../golden/', import.meta.url));

/**
 * A comparison with a golden file in `dir`. UPDATE_GOLDEN=1 (re)writes the file from the output, to be
 * reviewed in the diff; without it a missing file fails, so a golden test never passes against itself.
 */
export function goldenIn(dir: string) {
  return (name: string, actual: string): void => {
    const path = join(dir, name);
    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(path, actual);
      return;
    }
    assert.ok(existsSync(path), `golden file ${name} is missing: run with UPDATE_GOLDEN=1 to write it, then review it`);
    assert.equal(actual, readFileSync(path, 'utf8'), `${name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it after review)`);
  };
}

/** Compares the output with test/golden/<name>. */
export const assertGolden = goldenIn(GOLDEN_DIR);
