/**
 * A start that fails (src/platform/supervised-process.ts): the process's last words are in the error, also when
 * its log file is being read at the moment it exits (a lost race left "unbound exited with status 1" bare).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SupervisedProcess } from '../src/platform/supervised-process.js';

/**
 * A daemon stand-in that cannot open its ports: it writes a long start-up chatter (some MiB: the supervisor's log
 * reader is still at it when the process exits), then Unbound's two error lines, and exits 1.
 */
const FAILING = `const fs = require('fs');
fs.writeSync(2, Array.from({ length: 100000 }, (_, n) => 'notice: init module ' + n + ': iterator, a line of start-up chatter\\n').join(''));
fs.writeSync(2, 'error: bind: address already in use\\nfatal error: could not open ports\\n');
process.exit(1);`;

const failingStandIn = (dir: string, script: string) => new SupervisedProcess({
  label: 'stand-in', command: process.execPath, args: ['-e', script], readyTimeoutMs: 30_000,
  ready: async () => false, detached: { dir, name: 'stand-in', configHash: null },
});

test('a detached process that exits at start: its own error lines are the reason, every time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-supervise-'));
  try {
    for (let run = 0; run < 3; run++) {
      const supervised = failingStandIn(dir, FAILING);
      await assert.rejects(supervised.start(), (error: Error) => {
        assert.equal(error.message, 'stand-in exited with status 1: error: bind: address already in use; fatal error: could not open ports', `run ${run}`);
        return true;
      });
      await supervised.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a detached process that exits at start without a word: the error says it wrote nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-supervise-'));
  try {
    const supervised = failingStandIn(dir, 'process.exit(1)');
    await assert.rejects(supervised.start(), { message: 'stand-in exited with status 1 without writing a line of output' });
    await supervised.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
