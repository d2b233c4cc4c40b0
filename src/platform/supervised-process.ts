import { spawn, type ChildProcess } from 'node:child_process';
import { reportDaemonEvent } from './daemon-events.js';
import { failureReason } from './process-daemons.js';

export interface SupervisedProcessOptions {
  /** Name used in messages (`wireguard-go b13wg0`, `charon-systemd`). */
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** True once the process serves what it is for (its interface exists, its control socket answers). */
  ready: () => Promise<boolean>;
  readyTimeoutMs?: number;
  /** Runs after every automatic restart, once ready: puts the configuration back (the process lost it when it died). */
  afterRestart?: () => Promise<void>;
  /** First delay before a restart; doubled after each failed one, up to 30 s. */
  restartDelayMs?: number;
  /** Receives every line the process writes (for the server log). */
  onLine?: (line: string) => void;
  /** When set, standard output goes here as it arrives (Caddy's access log) and is not kept as the process's own lines. */
  onStdout?: (chunk: Buffer) => void;
}

export interface SupervisedState {
  running: boolean;
  pid: number | null;
  started_at: string | null;
  /** Automatic restarts after the process died on its own. */
  restarts: number;
  /** Why the last run ended or why a start or restart failed; null while all is well. */
  last_error: string | null;
}

const MAX_LINES = 500;
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * One foreground process under Bulwark's supervision (no init system is assumed): started and waited for until
 * ready, stopped on request, and restarted with a growing delay when it dies on its own, its configuration then
 * put back by `afterRestart`. Its output is kept for the reason of a failure.
 */
export class SupervisedProcess {
  private child: ChildProcess | null = null;
  private startedAt: number | null = null;
  private restarts = 0;
  private lastError: string | null = null;
  private lines: string[] = [];
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private delay: number;

  constructor(private readonly options: SupervisedProcessOptions) {
    this.delay = options.restartDelayMs ?? 1000;
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  state(): SupervisedState {
    return {
      running: this.alive,
      pid: this.alive ? this.child!.pid ?? null : null,
      started_at: this.startedAt === null ? null : new Date(this.startedAt).toISOString(),
      restarts: this.restarts,
      last_error: this.lastError,
    };
  }

  /** Sends a signal to the running process (a live reload); false when none runs. */
  signal(signal: NodeJS.Signals): boolean {
    return this.alive && this.child!.kill(signal);
  }

  /** The process's own recent output. */
  log(): string[] {
    return [...this.lines];
  }

  /** Starts the process (if it does not run) and waits until it is ready; throws the reason when it is not. */
  async start(): Promise<void> {
    this.stopping = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (this.alive) return;
    await this.launch();
  }

  private async launch(): Promise<void> {
    const { command, args, env, label } = this.options;
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    this.child = child;
    this.startedAt = Date.now();
    const runStart = this.lines.length;
    const take = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        this.lines.push(line);
        this.options.onLine?.(line);
        reportDaemonEvent({ kind: 'log', daemon: label, line });
      }
      if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
    };
    child.stdout?.on('data', this.options.onStdout ?? take);
    child.stderr?.on('data', take);
    child.on('error', (error) => {
      this.lastError = `${label} could not be started: ${error.message}`;
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child || this.stopping) return;
      const reason = failureReason(this.lines.slice(Math.max(0, runStart)));
      this.lastError = `${label} exited with ${signal ?? `status ${code}`}${reason ? `: ${reason}` : ''}; restarting`;
      reportDaemonEvent({ kind: 'crashed', daemon: label, reason: this.lastError });
      this.scheduleRestart();
    });
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 10_000);
    while (Date.now() < deadline) {
      if (this.child !== child || !this.alive) break;
      if (await this.options.ready()) {
        this.lastError = null;
        this.delay = this.options.restartDelayMs ?? 1000;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const reason = failureReason(this.lines.slice(Math.max(0, runStart)));
    const why = this.alive ? `did not become ready within ${(this.options.readyTimeoutMs ?? 10_000) / 1000} s` : 'exited at start';
    await this.terminate();
    this.lastError = `${label} ${why}${reason ? `: ${reason}` : ''}`;
    throw new Error(this.lastError);
  }

  private scheduleRestart(): void {
    if (this.restartTimer || this.stopping) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping || this.alive) return;
      this.restarts++;
      this.launch()
        .then(() => {
          reportDaemonEvent({ kind: 'restarted', daemon: this.options.label, restarts: this.restarts });
          return this.options.afterRestart?.();
        })
        .catch((error: Error) => {
          this.lastError = `${this.options.label} restart failed: ${error.message}`;
          this.delay = Math.min(this.delay * 2, MAX_RESTART_DELAY_MS);
          this.scheduleRestart();
        });
    }, this.delay);
    this.restartTimer.unref();
  }

  /** Stops the process (SIGTERM, SIGKILL after 5 s) and cancels any pending restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.terminate();
  }

  /** Ends the current run; its exit is expected, so it schedules no restart. */
  private async terminate(): Promise<void> {
    const child = this.child;
    const alive = this.alive;
    this.child = null;
    if (child && alive) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  }
}
