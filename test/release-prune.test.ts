/**
 * Old releases are pruned after a successful switch (docs/updates.md): the activation helper, run on a plan for an
 * install root in a temporary directory, restarts the "API" (a sleeping process the test supervises), sees the new
 * version answer ready, and then keeps `keepReleases` releases — never the current one or the rollback target.
 * A failed switch removes nothing.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InstallLayout } from '../src/areas/updates/install-layout.js';
import { lastActivation, readyFile, writeJsonAtomically } from '../src/areas/updates/activation-files.js';
import type { ActivationPlan } from '../src/areas/updates/activation-helper.js';

const HELPER = fileURLToPath(new URL('../src/areas/updates/activation-helper.ts', import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** An install root holding `versions` (oldest first by install time), `current` naming `current`. */
function layoutWith(versions: string[], current: string): InstallLayout {
  const root = mkdtempSync(join(tmpdir(), 'bulwark-prune-'));
  dirs.push(root);
  const layout = new InstallLayout(root);
  versions.forEach((version, index) => {
    const dir = join(layout.releasesDir, version);
    mkdirSync(join(dir, 'dist'), { recursive: true });
    writeFileSync(join(dir, 'dist/main.js'), '');
    const at = new Date(Date.UTC(2026, 0, 1 + index));
    utimesSync(dir, at, at);
  });
  symlinkSync(`releases/${current}`, layout.currentLink);
  return layout;
}
const kept = (layout: InstallLayout) => readdirSync(layout.releasesDir).sort();
const sleeper = () => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return child;
};
async function until<T>(what: string, probe: () => T | null | undefined | false, seconds = 120): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('prune keeps the current release, the rollback target and the newest others up to the count', () => {
  const layout = layoutWith(['1.0.0', '1.1.0', '1.2.0', '1.3.0'], '1.3.0');
  assert.deepEqual(layout.prune(3, ['1.2.0']), ['1.0.0']);
  assert.deepEqual(kept(layout), ['1.1.0', '1.2.0', '1.3.0']);
  // After a rollback to the oldest: it (current) and the release left (the rollback target) stay, newer ones go first.
  const back = layoutWith(['1.0.0', '1.1.0', '1.2.0', '1.3.0'], '1.0.0');
  assert.deepEqual(back.prune(2, ['1.0.0', '1.3.0']), ['1.1.0', '1.2.0']);
  assert.deepEqual(kept(back), ['1.0.0', '1.3.0']);
  assert.deepEqual(back.prune(2, ['1.0.0', '1.3.0']), [], 'nothing more to remove');
});

test('after a successful switch the activation helper removes the releases beyond the kept count; a failed one removes nothing', { timeout: 300_000 }, async () => {
  const layout = layoutWith(['1.0.0', '1.1.0', '1.2.0', '1.3.0'], '1.3.0');
  const dataDir = join(layout.root, 'data');
  const server = createServer((_request, response) => response.end('{}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const pidFile = join(layout.root, 'bulwark.pid');

  /** Runs the helper for `target` (current already names it, as the API leaves it) and plays the supervisor. */
  async function activate(target: string, previous: string, comesUp: boolean, readySeconds: number) {
    const api = sleeper();
    writeFileSync(pidFile, String(api.pid));
    writeJsonAtomically(readyFile(dataDir), { version: previous, pid: api.pid });
    const plan: ActivationPlan = {
      mode: 'install', installRoot: layout.root, dataDir, host: '127.0.0.1', port, target, previous, readySeconds, keepReleases: 2,
      manager: { kind: 'supervisor', pidFile }, snapshot: null, keyId: null, startedAt: new Date().toISOString(), timings: {},
    };
    const planPath = join(layout.root, 'plan.json');
    writeJsonAtomically(planPath, plan);
    const helper = spawn(process.execPath, ['--import', 'tsx', HELPER, planPath], { stdio: 'ignore' });
    children.push(helper);
    const exited = new Promise((resolve) => helper.once('exit', resolve));
    await until('the helper to stop the running API', () => api.exitCode !== null || api.signalCode !== null);
    if (comesUp) writeJsonAtomically(readyFile(dataDir), { version: target, pid: sleeper().pid });
    await exited;
    return lastActivation(dataDir)!;
  }

  const failed = await activate('1.3.0', '1.2.0', false, 5);
  assert.notEqual(failed.outcome, 'activated', failed.reason);
  assert.deepEqual(kept(layout), ['1.0.0', '1.1.0', '1.2.0', '1.3.0'], 'a failed switch removes nothing');

  layout.switchTo('1.3.0');
  const activated = await activate('1.3.0', '1.2.0', true, 60);
  assert.equal(activated.outcome, 'activated', activated.reason);
  assert.match(activated.reason, /older releases removed: 1\.0\.0, 1\.1\.0/);
  assert.deepEqual(kept(layout), ['1.2.0', '1.3.0'], 'the current release and the rollback target stay');
  assert.equal(layout.currentVersion(), '1.3.0');
  assert.ok(existsSync(join(layout.releasesDir, '1.2.0', 'dist/main.js')), 'rollback can still return to 1.2.0');
});
