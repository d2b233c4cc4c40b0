/**
 * Detached supervision (src/platform/supervised-process.ts): a process started detached outlives the supervisor
 * that let go of it; the next supervisor adopts it by its pid record when it runs the same configuration and
 * answers (same pid), replaces it when the configuration differs, starts a new one when the recorded pid is gone
 * or is another program, and restarts an adopted process that dies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SupervisedProcess } from '../src/platform/supervised-process.js';
import { processStartTime, recordFile } from '../src/platform/process-record.js';

/** A daemon stand-in: answers on a unix socket, logs a line, exits on SIGTERM. */
const DAEMON = `const net = require('net'); const fs = require('fs'); const path = process.argv[1];
fs.rmSync(path, { force: true }); net.createServer((s) => s.end('ok')).listen(path, () => console.error('listening on ' + path));
process.on('SIGTERM', () => process.exit(0));`;

const answers = (path: string) => new Promise<boolean>((resolve) => {
  const socket = connect(path);
  socket.on('data', () => { socket.destroy(); resolve(true); });
  socket.on('error', () => resolve(false));
});

const alive = (pid: number) => processStartTime(pid) !== null;

const until = async (what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** Every supervisor a test made: stopped at its end, so a failed assertion leaves no stand-in running. */
const made: SupervisedProcess[] = [];
const stopAll = async () => {
  for (const supervised of made.splice(0)) await supervised.stop().catch(() => undefined);
};

function supervisor(dir: string, configHash: string | null) {
  const socket = join(dir, 'daemon.sock');
  const lines: string[] = [];
  const process_ = new SupervisedProcess({
    label: 'stand-in', command: process.execPath, args: ['-e', DAEMON, socket], readyTimeoutMs: 5000, restartDelayMs: 100,
    ready: () => answers(socket), onLine: (line) => lines.push(line),
    detached: { dir, name: 'stand-in', configHash },
  });
  made.push(process_);
  return { process: process_, lines };
}

test('a detached process outlives its supervisor and is adopted (same pid) by the next one when it runs the same configuration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-supervise-'));
  try {
    const first = supervisor(dir, 'hash-a');
    assert.equal(await first.process.start(), 'started');
    const pid = first.process.state().pid!;
    await until('its log line read from the log file', () => first.lines.some((line) => line.startsWith('listening on')));
    const record = JSON.parse(readFileSync(recordFile(dir, 'stand-in'), 'utf8'));
    assert.equal(record.pid, pid);
    assert.equal(record.config_sha256, 'hash-a');
    first.process.release();

    // A SIGKILL of the supervising process is what release stands for here: nothing is sent to the daemon.
    assert.ok(alive(pid), 'the released process keeps running');
    const second = supervisor(dir, 'hash-a');
    assert.equal(await second.process.start(), 'adopted');
    assert.equal(second.process.state().pid, pid);
    assert.equal(second.process.state().adopted, true);

    // Killed behind the supervisor's back: the liveness poll notices and starts it again.
    process.kill(pid, 'SIGKILL');
    // Ready again (its error cleared) means its new pid is recorded.
    await until('a restart', () => second.process.state().restarts === 1 && second.process.state().running && second.process.state().last_error === null, 10_000);
    assert.equal(JSON.parse(readFileSync(recordFile(dir, 'stand-in'), 'utf8')).pid, second.process.state().pid);
    const restarted = second.process.state().pid!;
    assert.notEqual(restarted, pid);

    // Another configuration: the recorded process is replaced, not adopted.
    second.process.release();
    const third = supervisor(dir, 'hash-b');
    assert.equal(await third.process.start(), 'started');
    assert.notEqual(third.process.state().pid, restarted);
    await until('the replaced process to end', () => !alive(restarted));

    // stop ends it and removes the record.
    const last = third.process.state().pid!;
    await third.process.stop();
    assert.ok(!alive(last));
    assert.equal(existsSync(recordFile(dir, 'stand-in')), false);
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a recorded pid that is gone, or now runs another program, is never adopted nor signalled: a new process starts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-supervise-'));
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    await until('sleep to run', () => other.pid !== undefined && alive(other.pid));
    // The record names a live process that is not the stand-in (a reused pid).
    writeFileSync(recordFile(dir, 'stand-in'), JSON.stringify({
      pid: other.pid, start_time: processStartTime(other.pid!), exe: process.execPath, command: process.execPath, args: [], config_sha256: 'hash-a', started_at: new Date().toISOString(),
    }));
    const run = supervisor(dir, 'hash-a');
    assert.equal(await run.process.start(), 'started');
    assert.notEqual(run.process.state().pid, other.pid);
    assert.ok(alive(other.pid!), 'the unrelated process was left alone');
    await run.process.stop();

    // A record whose pid no longer runs.
    writeFileSync(recordFile(dir, 'stand-in'), JSON.stringify({ pid: 2 ** 22 + 7, start_time: '1', exe: process.execPath, command: '', args: [], config_sha256: 'hash-a', started_at: '' }));
    const again = supervisor(dir, 'hash-a');
    assert.equal(await again.process.start(), 'started');
    await again.process.stop();
  } finally {
    await stopAll();
    other.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
