import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';

/**
 * Files through which a switch of release is handed from the API that starts it to the activation helper and to
 * the release that comes up (all under <data-dir>/appliance/, written by temporary file and rename):
 * - ready.json: the running server's version and pid, written once it listens (what the helper waits for);
 * - outcome.json: the helper's result, recorded (history, event) once by whichever server reads it first;
 * - activations.log: every activation as one JSON line, with its timings (status shows the last);
 * - restore-database.json: a snapshot to put back before the database is opened (an automatic rollback).
 */
export interface ActivationOutcome {
  mode: 'install' | 'rollback' | 'restart';
  target: string;
  previous: string | null;
  outcome: 'activated' | 'rolled_back' | 'failed';
  reason: string;
  key_id: string | null;
  started_at: string;
  timings_ms: Record<string, number>;
}

export const applianceDir = (dataDir: string) => join(dataDir, 'appliance');
export const readyFile = (dataDir: string) => join(applianceDir(dataDir), 'ready.json');
export const outcomeFile = (dataDir: string) => join(applianceDir(dataDir), 'outcome.json');
export const activationLog = (dataDir: string) => join(applianceDir(dataDir), 'activations.log');
export const restoreFile = (dataDir: string) => join(applianceDir(dataDir), 'restore-database.json');
export const snapshotsDir = (dataDir: string) => join(applianceDir(dataDir), 'snapshots');

export function writeJsonAtomically(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

export function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Written by the server once it listens: what the activation helper waits for. */
export function writeReadyMarker(dataDir: string, version: string): void {
  writeJsonAtomically(readyFile(dataDir), { version, pid: process.pid, at: new Date().toISOString() });
}

export function appendActivation(dataDir: string, record: ActivationOutcome): void {
  mkdirSync(applianceDir(dataDir), { recursive: true, mode: 0o700 });
  appendFileSync(activationLog(dataDir), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

export function lastActivation(dataDir: string): ActivationOutcome | null {
  try {
    const lines = readFileSync(activationLog(dataDir), 'utf8').trim().split('\n');
    return JSON.parse(lines[lines.length - 1]) as ActivationOutcome;
  } catch {
    return null;
  }
}

/**
 * Takes the helper's outcome exactly once, by the release it left serving (the target once activated, the previous
 * release after a rollback): the rename is the lock between two servers that might both look.
 */
export function takeOutcome(dataDir: string, version: string): ActivationOutcome | null {
  const path = outcomeFile(dataDir);
  const waiting = readJson<ActivationOutcome>(path);
  if (!waiting || (waiting.outcome === 'rolled_back' ? waiting.previous : waiting.target) !== version) return null;
  const taken = `${path}.taken-${process.pid}`;
  try {
    renameSync(path, taken);
  } catch {
    return null;
  }
  const outcome = readJson<ActivationOutcome>(taken);
  rmSync(taken, { force: true });
  return outcome;
}

/**
 * Before the database is opened: puts back the snapshot an automatic rollback asked for (the release that failed
 * may have migrated the database). The snapshot must lie in <data-dir>/appliance/snapshots. Answers what it did.
 */
export function restorePendingDatabase(dataDir: string, version: string): string | null {
  const request = readJson<{ snapshot?: string; for_version?: string }>(restoreFile(dataDir));
  // A release that failed may still be starting while the rollback switches: only the release rolled back to acts.
  if (!request || request.for_version !== version) return null;
  const snapshot = resolve(String(request.snapshot ?? ''));
  const inside = relative(snapshotsDir(dataDir), snapshot);
  rmSync(restoreFile(dataDir), { force: true });
  if (!request.snapshot || inside.startsWith('..') || !existsSync(snapshot)) return `the requested database snapshot ${String(request.snapshot)} is not in ${snapshotsDir(dataDir)}: not restored`;
  const database = join(dataDir, 'bulwark.db');
  copyFileSync(snapshot, `${database}.restoring`);
  rmSync(`${database}-wal`, { force: true });
  rmSync(`${database}-shm`, { force: true });
  renameSync(`${database}.restoring`, database);
  return `database restored from ${snapshot}`;
}

/** Is a process alive (signal 0)? */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether systemd is PID 1 (then the service unit restarts Bulwark). */
export function systemdRuns(): boolean {
  return existsSync('/run/systemd/system');
}

/** `systemctl restart bulwark.service` (the unit's ExecStart runs /opt/bulwark/current/dist/main.js). */
export function systemctlRestart(): void {
  execFileSync('systemctl', ['restart', '--no-block', 'bulwark.service'], { stdio: 'ignore', timeout: 30_000 });
}
