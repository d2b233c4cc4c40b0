/**
 * How a daemon area reports a configuration its checker refused, or one its renderer refused to write. The
 * client learns which line of the rendered file (its own line number) and which keyword on that line (read
 * from Bulwark's own rendered text) were refused; the checker's output goes only to the server log, since it
 * can quote any file the checker opened.
 */
import type { AppContext } from '../../context.js';
import { HttpError } from '../../core/errors.js';
import type { CheckResult } from '../../platform/daemons.js';
import { isRenderRefusal, type RenderRefusal } from '../../render/refusal.js';
import { keywordAt } from '../../platform/tool-refusal.js';

export { keywordAt };

/** One sentence about a refusal, built only from our own text. */
export function describeRefusal(label: string, check: CheckResult, renderedText: string): string {
  // Not run at all (e.g. the daemon's user is missing): our own reason, no checker output exists.
  if (!check.checked) return `the rendered ${label} configuration was not checked: ${check.output}`;
  const program = check.checker?.split(' ')[0] ?? 'the checker';
  if (!check.line) return `the rendered ${label} configuration was refused by ${program}; its output names no line of the rendered file (details are in the server log)`;
  const keyword = keywordAt(renderedText, check.line);
  return `the rendered ${label} configuration was refused by ${program} at line ${check.line}${keyword ? ` (${keyword})` : ''} of the rendered file (details are in the server log)`;
}

/** Logs the checker's full output at warn. */
export function logRefusal(context: AppContext, daemon: string, check: CheckResult): void {
  context.log.warn({ daemon, checker: check.checker, line: check.line ?? null, output: check.details ?? '' }, 'configuration checker refused the rendered file');
}

/** The 409 for a refused check, after logging the details. */
export function checkerRefusal(context: AppContext, daemon: string, label: string, check: CheckResult, renderedText: string): HttpError {
  logRefusal(context, daemon, check);
  return new HttpError(409, describeRefusal(label, check, renderedText));
}

/** A check result without the checker's raw output, for a response. */
export function publicCheck(check: CheckResult): CheckResult {
  return { checked: check.checked, ok: check.ok, checker: check.checker, output: check.output };
}

/** The 409 for a stored value the renderer refused to write (it names the field, never the value). */
export function renderRefusal(label: string, error: RenderRefusal): HttpError {
  return new HttpError(409, `the stored ${label} configuration cannot be rendered: ${error.field} ${error.reason}; correct it and apply again`);
}

/** Runs a render, wording a RenderRefusal its renderer left unworded as the area's 409. */
export function renderOr409<T>(label: string, render: () => T): T {
  try {
    return render();
  } catch (error) {
    if (isRenderRefusal(error)) throw renderRefusal(label, error);
    throw error;
  }
}
