/**
 * Installing a checked configuration for a supervised daemon, the same way for every daemon: the file is
 * written, the daemon (re)started, and it counts as running only when it answers on its control channel. A
 * daemon that is not installed answers 503 naming the Debian package; one that does not come up answers 409
 * with the reason, after the previous configuration has been put back and the daemon restarted with it.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import { HttpError } from '../../core/errors.js';
import type { CheckResult, DaemonName, DaemonStatus, StartOptions } from '../../platform/daemons.js';
import { describeMissing } from '../../platform/debian-packages.js';
import { writeDaemonFile, type DaemonRuntime } from '../../platform/daemon-runtime.js';
import type { DaemonRecord } from './daemon-record.js';
import { checkerRefusal } from './checker-refusal.js';

export interface Installation {
  /** Human name used in messages: `Unbound`, `Kea`, `chrony`. */
  label: string;
  runtime: DaemonRuntime;
  /** The configuration file's name inside the runtime directory. */
  fileName: string;
  /** The checked configuration text. */
  text: string;
  /** `start` keeps a daemon that already runs this file; `restart` always restarts. */
  mode: 'start' | 'restart';
  options?: StartOptions;
}

/** The 503 for a daemon, checker or helper that is not installed. */
export function notInstalled(label: string, status: { missing?: DaemonStatus['missing'] }): HttpError {
  return new HttpError(503, `${label} cannot run here: ${status.missing ? describeMissing(status.missing) : 'a program it needs is missing'}`);
}

/** Throws the 503 (checker missing) or 409 (checker refused) of a check that did not pass. */
export function requirePassedCheck(context: AppContext, record: DaemonRecord, label: string, check: CheckResult, renderedText: string): void {
  if (check.ok) return;
  if (check.missing) {
    record.result(`failed: ${describeMissing(check.missing)}`);
    throw notInstalled(label, check);
  }
  record.result(`failed: ${check.checker?.split(' ')[0] ?? 'the checker'} refused the configuration`);
  throw checkerRefusal(context, record.daemon, label, check, renderedText);
}

/** Writes the file, (re)starts the daemon and returns its status; 503 or 409 (after a rollback) when it does not run. */
export async function installAndRun(context: AppContext, record: DaemonRecord, plan: Installation): Promise<DaemonStatus> {
  const { daemons } = context.platform;
  const daemon: DaemonName = record.daemon;
  const target = join(plan.runtime.dir, plan.fileName);
  const previous = existsSync(target) ? readFileSync(target, 'utf8') : null;
  writeDaemonFile(plan.runtime, [plan.fileName], plan.text);
  const status = plan.mode === 'start' ? await daemons.start(daemon, target, plan.options) : await daemons.restart(daemon, target, plan.options);
  if (status.running) {
    record.installed(plan.text, target, plan.options);
    record.result('ok');
    return status;
  }
  const reason = status.last_error ?? `${daemon} did not start`;
  // Put back what ran before (or nothing), and run it again when there was something.
  if (previous === null) rmSync(target, { force: true });
  else writeDaemonFile(plan.runtime, [plan.fileName], previous);
  if (status.missing) {
    record.result(`failed: ${reason}`);
    throw notInstalled(plan.label, status);
  }
  let outcome: string;
  if (previous === null) {
    record.stopped();
    outcome = `there was no previous configuration to restore, so ${daemon} is stopped`;
  } else {
    const restored = await daemons.restart(daemon, target, plan.options);
    if (restored.running) {
      record.installed(previous, target, plan.options);
      outcome = `the previous configuration was restored and ${daemon} runs with it again`;
    } else {
      record.stopped();
      outcome = `the previous configuration was restored but ${daemon} did not start with it either (${restored.last_error ?? 'no reason given'})`;
    }
  }
  record.result(`rolled back: ${reason}`);
  context.log.warn({ daemon, reason }, 'daemon did not start with the new configuration; previous configuration restored');
  throw new HttpError(409, `${plan.label} did not start with the new configuration: ${reason}; ${outcome}`);
}

/** Stops the daemon (its service is disabled) and records it. */
export async function stopDaemon(context: AppContext, record: DaemonRecord): Promise<DaemonStatus> {
  const status = await context.platform.daemons.stop(record.daemon);
  record.stopped();
  record.result('ok: stopped');
  return status;
}
