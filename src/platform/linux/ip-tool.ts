import { conflict, unavailable } from '../../core/errors.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { NOT_RUNNABLE, runCommand, type CommandResult } from '../exec.js';

/**
 * The kernel's answer in one printable line: iproute2's own message ("RTNETLINK answers: File exists",
 * "Error: Nexthop has invalid gateway."), never the batch echo or anything longer than a sentence.
 */
export function ipReason(result: CommandResult): string {
  const lines = `${result.stderr}\n${result.stdout}`.split('\n').map((line) => line.replace(/[^\x20-\x7e]/g, '').trim()).filter(Boolean);
  const said = lines.find((line) => !/^Command failed/.test(line)) ?? lines[0] ?? `ip exited ${result.code}`;
  return said.slice(0, 160);
}

/** Runs `ip` with an argument array; 503 naming the Debian package when it is missing. */
export async function ip(args: readonly string[], options: { input?: string } = {}): Promise<CommandResult> {
  const result = await runCommand('ip', args, { timeoutMs: 15_000, input: options.input });
  if (result.code === NOT_RUNNABLE && /ENOENT|not found/i.test(result.stderr)) throw unavailable(describeMissing(missingTool('ip')));
  return result;
}

/** Runs `ip`, answering 409 with the kernel's reason when it refuses. */
export async function ipOrConflict(args: readonly string[], what: string, options: { input?: string } = {}): Promise<CommandResult> {
  const result = await ip(args, options);
  if (result.code !== 0) throw conflict(`${what}: ${ipReason(result)}`);
  return result;
}

export async function ipJson<T>(args: readonly string[]): Promise<T> {
  const result = await ip(['-j', ...args]);
  if (result.code !== 0) throw new Error(`ip ${args.join(' ')}: ${ipReason(result)}`);
  return JSON.parse(result.stdout || '[]') as T;
}
