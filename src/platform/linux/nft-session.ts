/**
 * One long-lived libnftables context (Debian's python3-nftables, the nftables project's own binding) that runs
 * nft scripts for the packet-filter driver. Against a `nft` process per call it saves the process start and,
 * above all, closing nft's netlink socket after a commit, which waits about 10 ms in the kernel: a one-segment
 * delta among 10,000 rules takes 8 ms here against 25-35 ms through the CLI. The script is the same text `nft
 * -f` reads, in one transaction, and an error comes back as nft prints it.
 *
 * When python3-nftables is missing, or the helper dies or hangs, `run` answers undefined and the driver runs the
 * `nft` CLI instead; the helper is started again at the next call after RESTART_AFTER_MS.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CommandResult } from '../exec.js';

/** The helper: JSON lines in (a script), JSON lines out (nft's return code, output and error). */
const HELPER = `
import json, sys
try:
    import nftables
except ImportError:
    print(json.dumps({"unavailable": "python3-nftables is not installed"}), flush=True)
    sys.exit(0)
nft = nftables.Nftables()
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    rc, output, error = nft.cmd(request["script"])
    print(json.dumps({"rc": rc, "output": output, "error": error}), flush=True)
`;

const TIMEOUT_MS = 30_000;
const RESTART_AFTER_MS = 60_000;

interface Helper {
  child: ChildProcessWithoutNullStreams;
  lines: AsyncIterator<string>;
  ready: Promise<boolean>;
}

const isReady = (line: string) => {
  try {
    return (JSON.parse(line) as { ready?: boolean }).ready === true;
  } catch {
    return false;
  }
};

export class NftSession {
  private helper: Helper | undefined;
  private unavailableUntil = 0;
  /** Scripts the session ran (refused or not): the rest went to the CLI. */
  answered = 0;
  /** One script at a time: the helper answers in order. */
  private queue: Promise<unknown> = Promise.resolve();

  /** `command`: the Python interpreter with python3-nftables, e.g. ['/usr/bin/python3'] (or wrapped into a namespace). */
  constructor(private readonly command: readonly string[] = ['/usr/bin/python3']) {}

  /** Runs a script in the session; undefined when the session cannot (the caller then runs the CLI). */
  run(script: string): Promise<CommandResult | undefined> {
    const run = this.queue.then(() => this.runNow(script));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    const helper = this.helper;
    this.helper = undefined;
    if (!helper) return;
    helper.child.ref(); // waited for: it ends once its input does
    helper.child.stdin.end();
    if (helper.child.exitCode === null) await new Promise((resolve) => helper.child.once('exit', resolve));
  }

  private async runNow(script: string): Promise<CommandResult | undefined> {
    // An idle session never keeps the process alive; one starting or answering does.
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      return await this.request(script);
    } finally {
      clearInterval(keepAlive);
    }
  }

  private async request(script: string): Promise<CommandResult | undefined> {
    const helper = await this.started();
    if (!helper) return undefined;
    helper.child.stdin.write(`${JSON.stringify({ script })}\n`);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)));
    const answer = await Promise.race([helper.lines.next(), timedOut]);
    clearTimeout(timer);
    if (answer === 'timeout' || answer.done) {
      this.retire(helper);
      return answer === 'timeout' ? { code: 1, stdout: '', stderr: `nft did not answer within ${TIMEOUT_MS / 1000} s` } : undefined;
    }
    const { rc, output, error } = JSON.parse(answer.value) as { rc: number; output: string; error: string };
    this.answered++;
    return { code: rc === 0 ? 0 : 1, stdout: output, stderr: error };
  }

  private async started(): Promise<Helper | undefined> {
    if (this.helper) return (await this.helper.ready) ? this.helper : undefined;
    if (Date.now() < this.unavailableUntil) return undefined;
    const [file, ...args] = this.command;
    const child = spawn(file, [...args, '-c', HELPER], { stdio: 'pipe' });
    child.stderr.resume(); // a traceback is not an answer; nft's own errors come back in the JSON
    child.stdin.on('error', () => undefined); // a dead helper shows as the end of its answers
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) stream.unref?.();
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const ready = new Promise<boolean>((resolve) => {
      child.once('error', () => resolve(false));
      lines.next().then((first) => resolve(!first.done && isReady(first.value)), () => resolve(false));
    });
    const helper: Helper = { child, lines, ready };
    child.once('exit', () => {
      if (this.helper === helper) this.helper = undefined;
    });
    this.helper = helper;
    if (await ready) return helper;
    this.retire(helper);
    return undefined;
  }

  private retire(helper: Helper): void {
    if (this.helper === helper) this.helper = undefined;
    this.unavailableUntil = Date.now() + RESTART_AFTER_MS;
    helper.child.kill('SIGKILL');
  }
}
