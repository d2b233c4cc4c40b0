/**
 * Root never follows a link a daemon's user planted (issue 31 item 2). A daemon's state directory belongs to its
 * user, who may put a symbolic link under any name there; each of root's writes, chowns and chmods in the runtime
 * tree is tried with such a link pointing outside, and the outside file or directory must be untouched (content,
 * owner, mode) while the write is refused or goes to a fresh file. Needs root and Unbound's `unbound` account.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { lchownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonRuntime, prepareDaemonRuntime, runtimeRoot, writeDaemonFile, writeDaemonStateFile, type DaemonRuntime } from '../../src/platform/daemon-runtime.js';
import { EveTail } from '../../src/platform/linux/eve-tail.js';
import { json } from '../helpers/app.js';
import { startAreaApp } from '../helpers/area-app.js';
import { REQUIRE_SYSTEM_TESTS } from '../helpers/shared.js';

function skipReason(): string | false {
  const missing = process.getuid?.() !== 0 ? 'root' : daemonRuntime({ dataDir: tmpdir() }, 'unbound', false).account === null ? 'the unbound system account (Debian package unbound)' : null;
  if (missing === null) return false;
  if (REQUIRE_SYSTEM_TESTS) throw new Error(`REQUIRE_SYSTEM_TESTS=1 but this test needs ${missing}`);
  return `needs ${missing}`;
}
const skip = skipReason();

let scratch: string;
let outside: string;
before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'bulwark-links-'));
  outside = join(scratch, 'outside');
  mkdirSync(outside, { mode: 0o700 });
});
/** Data directories whose runtime trees (in /var/lib/bulwark-daemons) this file made. */
const dataDirs: string[] = [];
after(() => {
  rmSync(scratch, { recursive: true, force: true });
  for (const dataDir of dataDirs) rmSync(runtimeRoot({ dataDir }), { recursive: true, force: true });
});

/** What the attacker aims at: a root-owned file (or directory) outside the runtime tree. */
function victimFile(name: string): { path: string; untouched(): void } {
  const path = join(outside, name);
  writeFileSync(path, 'root-owned, not for daemons\n', { mode: 0o600 });
  const before = statSync(path);
  return {
    path,
    untouched() {
      const now = statSync(path);
      assert.equal(readFileSync(path, 'utf8'), 'root-owned, not for daemons\n', `${path} was written through the link`);
      assert.deepEqual([now.uid, now.gid, now.mode], [before.uid, before.gid, before.mode], `${path} changed owner or mode through the link`);
    },
  };
}

/** A fresh data directory's Unbound runtime with its tree prepared, as the DNS area does before rendering. */
function unboundRuntime(): DaemonRuntime {
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  dataDirs.push(dataDir);
  const runtime = daemonRuntime({ dataDir }, 'unbound', false);
  prepareDaemonRuntime(runtime);
  return runtime;
}

/** Plants `link -> target` as the daemon's user would (the link itself owned by that user). */
function plant(runtime: DaemonRuntime, link: string, target: string): void {
  symlinkSync(target, link);
  const account = runtime.account!;
  lchownSync(link, account.uid, account.gid);
}

test('writeDaemonStateFile replaces a planted link with a fresh file owned by the daemon; the link target keeps its content and owner', { skip }, () => {
  const runtime = unboundRuntime();
  const victim = victimFile('shadow-like');
  const link = join(runtime.stateDir, 'root.key');
  plant(runtime, link, victim.path);
  writeDaemonStateFile(runtime, 'root.key', 'trust anchor\n');
  victim.untouched();
  const written = lstatSync(link);
  assert.ok(written.isFile() && !written.isSymbolicLink(), 'root.key is now a regular file');
  assert.deepEqual([written.uid, written.gid, written.mode & 0o777], [runtime.account!.uid, runtime.account!.gid, 0o640]);
  assert.equal(readFileSync(link, 'utf8'), 'trust anchor\n');
});

test('writeDaemonStateFile through a dangling link creates nothing outside the state directory', { skip }, () => {
  const runtime = unboundRuntime();
  const aimed = join(outside, 'created-by-root');
  plant(runtime, join(runtime.stateDir, 'root.key'), aimed);
  writeDaemonStateFile(runtime, 'root.key', 'trust anchor\n');
  assert.equal(existsSync(aimed), false, 'root created a file of the daemon user\'s choice');
  assert.ok(lstatSync(join(runtime.stateDir, 'root.key')).isFile());
});

test('prepareDaemonRuntime refuses a state directory that is a link, and chowns nothing through it', { skip }, () => {
  const dataDir = mkdtempSync(join(scratch, 'data-'));
  dataDirs.push(dataDir);
  const runtime = daemonRuntime({ dataDir }, 'unbound', false);
  const target = join(outside, 'some-root-dir');
  mkdirSync(target, { mode: 0o700 });
  mkdirSync(runtime.dir, { recursive: true });
  symlinkSync(target, runtime.stateDir);
  assert.throws(() => prepareDaemonRuntime(runtime), /symbolic link/);
  const stats = statSync(target);
  assert.deepEqual([stats.uid, stats.gid, stats.mode & 0o777], [0, 0, 0o700], 'the link target kept owner and mode');
});

test('writeDaemonFile neither writes through a link at the file name nor into a linked subdirectory', { skip }, () => {
  const runtime = unboundRuntime();
  const victim = victimFile('config-like');
  plant(runtime, join(runtime.dir, 'unbound.conf.new'), victim.path);
  writeDaemonFile(runtime, ['unbound.conf.new'], 'server:\n');
  victim.untouched();
  assert.ok(lstatSync(join(runtime.dir, 'unbound.conf.new')).isFile());

  const targetDir = join(outside, 'dir-for-blocklists');
  mkdirSync(targetDir, { mode: 0o700 });
  plant(runtime, join(runtime.dir, 'blocklists'), targetDir);
  assert.throws(() => writeDaemonFile(runtime, ['blocklists', 'x.tsv'], 'data'), /symbolic link/);
  assert.equal(existsSync(join(targetDir, 'x.tsv')), false);
  const stats = statSync(targetDir);
  assert.deepEqual([stats.uid, stats.gid, stats.mode & 0o777], [0, 0, 0o700]);
});

test('the IDS alert reader does not follow eve.json when it is a link to another file', { skip }, async () => {
  const runtime = unboundRuntime();
  const victim = join(outside, 'eve-like.json');
  writeFileSync(victim, '{"secret":"root-only"}\n', { mode: 0o600 });
  const eve = join(runtime.stateDir, 'eve.json');
  plant(runtime, eve, victim);
  const delivered: string[] = [];
  const tail = new EveTail(eve, (lines) => delivered.push(lines));
  await tail.read();
  assert.deepEqual(delivered, [], 'root read another file through the link');
  // A regular eve.json is still read.
  rmSync(eve);
  writeFileSync(eve, '{"event_type":"alert"}\n');
  await tail.read();
  assert.deepEqual(delivered, ['{"event_type":"alert"}']);
});

test('DNS: rendering for an apply check replaces a planted root.key link; nothing is created where it pointed', { skip, timeout: 120_000 }, async () => {
  const t = await startAreaApp({ config: { platform: 'linux' } });
  try {
    const headers = t.headers;
    const runtime = daemonRuntime({ dataDir: t.dataDir }, 'unbound', false);
    prepareDaemonRuntime(runtime);
    const aimed = join(outside, 'dns-created-by-root');
    plant(runtime, join(runtime.stateDir, 'root.key'), aimed);
    const check = await t.app.inject({ method: 'GET', url: '/api/v1/config/check', headers });
    assert.equal(check.statusCode, 200, check.body);
    assert.equal(existsSync(aimed), false, 'root created the file the link named');
    const dns = (json(check).checked.appliers as { name: string; errors: number }[]).find((a) => a.name === 'dns');
    assert.deepEqual(dns, { name: 'dns', compiled: true, errors: 0, warnings: 0 }, check.body);
    const anchor = lstatSync(join(runtime.stateDir, 'root.key'));
    assert.ok(anchor.isFile(), 'root.key is a regular file');
    assert.equal(anchor.uid, runtime.account!.uid);
    assert.match(readFileSync(join(runtime.stateDir, 'root.key'), 'utf8'), /DS/);
  } finally {
    await t.close();
  }
});
