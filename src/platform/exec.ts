import { execFile } from 'node:child_process';

/** The exit code runCommand answers when the program could not be run at all (not installed, not executable). */
export const NOT_RUNNABLE = 127;

export interface CommandResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs a program with an argument array (never a shell string), optionally feeding stdin.
 * Resolves with the exit code instead of throwing so drivers can report the tool's own message.
 */
export function runCommand(
  file: string,
  args: readonly string[],
  options: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv; as?: { uid: number; gid: number } } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      // `as`: libuv sets the group, drops the supplementary groups, then sets the user before exec.
      { timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024, env: options.env ?? process.env, ...(options.as ?? {}) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : NOT_RUNNABLE) : 0;
        resolve({ stdout: String(stdout), stderr: String(stderr || (error && !stderr ? error.message : '')), code });
      },
    );
    if (options.input !== undefined) {
      // A program that exits without reading its input (refusing its arguments) closes the pipe: its exit
      // status and message are the answer, not an EPIPE that would end the server.
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(options.input);
    }
  });
}
