import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { CheckResult, DaemonName } from './daemons.js';
import { runCommand } from './exec.js';
import { describeMissing, missingTool } from './debian-packages.js';

/** Debian puts daemons in sbin, which a non-login PATH may lack. */
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/** Absolute path of an installed program, or null. */
export function findProgram(program: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...EXTRA_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Each daemon's own offline checker (exit status 0 = valid). */
const CHECKERS: Record<DaemonName, { program: string; args: (file: string) => string[] }> = {
  unbound: { program: 'unbound-checkconf', args: (file) => [file] },
  'kea-dhcp4': { program: 'kea-dhcp4', args: (file) => ['-t', file] },
  'kea-dhcp-ddns': { program: 'kea-dhcp-ddns', args: (file) => ['-t', file] },
  chronyd: { program: 'chronyd', args: (file) => ['-p', '-f', file] },
};

const VERSION_ARGS: Record<DaemonName, string[]> = { unbound: ['-V'], 'kea-dhcp4': ['-V'], 'kea-dhcp-ddns': ['-V'], chronyd: ['-v'] };

/** Escapes a string for use inside a RegExp. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The first line of `file` that a checker's output names (`FILE:LINE` as Unbound and Kea print it, or chrony's
 * `line N in file FILE`); null when it names none. Lines of any other file are ignored.
 */
export function refusedLine(output: string, file: string): number | null {
  const patterns = [new RegExp(`${literal(file)}:(\\d+)`), new RegExp(`line (\\d+) in file ${literal(file)}(?![^\\s])`)];
  for (const pattern of patterns) {
    const match = pattern.exec(output);
    if (match) return Number(match[1]);
  }
  return null;
}

export interface CheckerOptions {
  /** Run as this user (through setpriv), so the checker reads only what the daemon could. */
  runAs?: string | null;
  /**
   * A real platform: a checker that is not installed fails the check (with `missing` set) instead of letting an
   * unvalidated file through. The simulated platform runs the checker when it happens to be installed.
   */
  required?: boolean;
  /** Extra environment (e.g. where Unbound's Python module finds its support code). */
  env?: Record<string, string>;
  /** Where programs are found (default: PATH plus the sbin directories). */
  findProgram?: (program: string) => string | null;
}

/**
 * Runs the daemon's checker on a file. The result carries Bulwark's own summary; the raw output is only in
 * `details`.
 */
export async function runChecker(name: DaemonName, file: string, options: CheckerOptions = {}): Promise<CheckResult> {
  const checker = CHECKERS[name];
  const find = options.findProgram ?? findProgram;
  const program = find(checker.program);
  const display = `${checker.program} ${checker.args(file).join(' ')}`;
  if (!program) {
    const missing = missingTool(checker.program);
    if (options.required) return { checked: false, ok: false, checker: null, output: describeMissing(missing), line: null, missing };
    return { checked: false, ok: true, checker: null, output: `${checker.program} is not installed; the file was not validated`, line: null };
  }
  const { runAs } = options;
  const setpriv = runAs ? find('setpriv') : null;
  if (runAs && !setpriv) {
    const missing = missingTool('setpriv');
    return { checked: false, ok: false, checker: display, output: `${checker.program} was not run: ${describeMissing(missing)}`, line: null, missing };
  }
  const [command, args] = runAs && setpriv
    ? [setpriv, [`--reuid=${runAs}`, `--regid=${runAs}`, '--init-groups', '--', program, ...checker.args(file)]]
    : [program, checker.args(file)];
  // A checker that loads a big blocklist (Unbound's Python module) needs more than a moment.
  const result = await runCommand(command, args, { timeoutMs: 120_000, env: { ...process.env, ...options.env } });
  const details = `${result.stdout}${result.stderr}`.trim().slice(0, 8000);
  const ok = result.code === 0;
  const line = ok ? null : refusedLine(details, file);
  const output = ok
    ? `${checker.program} accepted the file`
    : `${checker.program} refused the file${line === null ? ' (its output names no line of the file)' : ` at line ${line}`}`;
  return { checked: true, ok, checker: display, output, line, details };
}

const versions = new Map<DaemonName, string>();

/** The first line of the daemon's version output, cached; `not installed` when absent. */
export async function daemonVersion(name: DaemonName): Promise<string> {
  const cached = versions.get(name);
  if (cached) return cached;
  const program = findProgram(name);
  let version = 'not installed';
  if (program) {
    const result = await runCommand(program, VERSION_ARGS[name], { timeoutMs: 5_000 });
    const line = `${result.stdout}\n${result.stderr}`.split('\n').map((l) => l.trim()).find(Boolean);
    version = line ? (/^\d/.test(line) ? `${name} ${line}` : line) : name;
  }
  versions.set(name, version);
  return version;
}
