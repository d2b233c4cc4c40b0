import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { CheckResult, DaemonName } from './daemons.js';
import { runCommand } from './exec.js';

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
  chronyd: { program: 'chronyd', args: (file) => ['-p', '-f', file] },
};

const VERSION_ARGS: Record<DaemonName, string[]> = { unbound: ['-V'], 'kea-dhcp4': ['-V'], chronyd: ['-v'] };

export async function runChecker(name: DaemonName, file: string): Promise<CheckResult> {
  const checker = CHECKERS[name];
  const program = findProgram(checker.program);
  const display = `${checker.program} ${checker.args(file).join(' ')}`;
  if (!program) return { checked: false, ok: true, checker: null, output: `${checker.program} is not installed; the file was not validated` };
  const result = await runCommand(program, checker.args(file), { timeoutMs: 20_000 });
  const output = `${result.stdout}${result.stderr}`.trim();
  return { checked: true, ok: result.code === 0, checker: display, output: output.slice(0, 8000) };
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
