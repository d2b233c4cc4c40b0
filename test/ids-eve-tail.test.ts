/**
 * The EVE follower (src/platform/linux/eve-tail.ts): whole lines only, in order; a partial line waits for its
 * end; a file that shrinks is read again from its start; `fromEnd` skips what the file held before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EveTail } from '../src/platform/linux/eve-tail.js';

test('whole lines in order, partial lines held back, truncation restarts, old content skipped with fromEnd', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'b16-eve-'));
  try {
    const file = join(dir, 'eve.json');
    writeFileSync(file, '{"old":1}\n');
    const seen: string[] = [];
    const tail = new EveTail(file, (lines) => seen.push(...lines.split('\n')), true);
    await tail.read();
    assert.deepEqual(seen, [], 'what the file held at start is not new');
    appendFileSync(file, '{"a":1}\n{"b":');
    await tail.read();
    assert.deepEqual(seen, ['{"a":1}']);
    appendFileSync(file, '2}\n');
    await tail.read();
    assert.deepEqual(seen, ['{"a":1}', '{"b":2}'], 'the partial line completed');
    writeFileSync(file, '{"c":3}\n');
    await tail.read();
    assert.deepEqual(seen.at(-1), '{"c":3}', 'a truncated (rotated) file is read from its start');

    // A file created after the tail started: everything in it is new.
    const later = join(dir, 'later.json');
    const fresh: string[] = [];
    const second = new EveTail(later, (lines) => fresh.push(...lines.split('\n')), true);
    await second.read();
    writeFileSync(later, '{"d":4}\n{"e":5}\n');
    await second.read();
    assert.deepEqual(fresh, ['{"d":4}', '{"e":5}']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a read called while another is in flight resolves only once what the file held at the call is delivered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'b16-eve-'));
  try {
    const file = join(dir, 'daemon.log');
    writeFileSync(file, 'first\n');
    const seen: string[] = [];
    const tail = new EveTail(file, (lines) => seen.push(...lines.split('\n')));
    // The tail's own poll or directory watch may be reading when the supervisor asks for everything so far
    // (a daemon's last words before its failure's reason is taken).
    const inFlight = tail.read();
    appendFileSync(file, 'error: bind: address already in use\n');
    await tail.read();
    assert.deepEqual(seen, ['first', 'error: bind: address already in use']);
    await inFlight;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a round that fails in the background (a listener that throws) is retried at the next poll, not left to end the process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'b16-eve-'));
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const file = join(dir, 'eve.json');
    writeFileSync(file, '');
    let calls = 0;
    const seen: string[] = [];
    const tail = new EveTail(file, (lines) => {
      calls += 1;
      if (calls === 1) throw new Error('a listener failed once');
      seen.push(...lines.split('\n'));
    });
    tail.start();
    try {
      appendFileSync(file, '{"a":1}\n');
      const deadline = Date.now() + 10_000;
      while (calls < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      appendFileSync(file, '{"b":2}\n');
      while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      tail.stop();
    }
    assert.equal(calls >= 2, true, 'the tail went on after the failed round');
    assert.deepEqual(seen, ['{"b":2}']);
    assert.deepEqual(unhandled, [], 'no rejection was left unhandled');
  } finally {
    process.off('unhandledRejection', onUnhandled);
    rmSync(dir, { recursive: true, force: true });
  }
});
