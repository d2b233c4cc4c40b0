import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goldenIn } from './helpers/golden.js';

/** Runs `body` with UPDATE_GOLDEN set as given (undefined: unset), restoring the caller's value after. */
function withUpdateGolden(value: string | undefined, body: () => void): void {
  const saved = process.env.UPDATE_GOLDEN;
  if (value === undefined) delete process.env.UPDATE_GOLDEN;
  else process.env.UPDATE_GOLDEN = value;
  try {
    body();
  } finally {
    if (saved === undefined) delete process.env.UPDATE_GOLDEN;
    else process.env.UPDATE_GOLDEN = saved;
  }
}

test('a missing golden file fails and is not written, unless UPDATE_GOLDEN=1 writes it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-golden-'));
  try {
    const golden = goldenIn(dir);
    withUpdateGolden(undefined, () => assert.throws(() => golden('absent.conf', 'output\n'), /golden file absent\.conf is missing: run with UPDATE_GOLDEN=1/));
    assert.equal(existsSync(join(dir, 'absent.conf')), false, 'a failed comparison writes nothing');
    withUpdateGolden('0', () => assert.throws(() => golden('absent.conf', 'output\n'), /is missing/));

    withUpdateGolden('1', () => golden('absent.conf', 'output\n'));
    assert.equal(readFileSync(join(dir, 'absent.conf'), 'utf8'), 'output\n');
    withUpdateGolden(undefined, () => golden('absent.conf', 'output\n'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a golden file that differs from the output fails and is left as it was', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-golden-'));
  try {
    writeFileSync(join(dir, 'kept.conf'), 'expected\n');
    withUpdateGolden(undefined, () => assert.throws(() => goldenIn(dir)('kept.conf', 'changed\n'), /kept\.conf differs from the golden file/));
    assert.equal(readFileSync(join(dir, 'kept.conf'), 'utf8'), 'expected\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
