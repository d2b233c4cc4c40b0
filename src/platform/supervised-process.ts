import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { failureReason } from './failure-reason.js';
import { reportDaemonEvent } from './daemon-events.js';
import { EveTail } from './linux/eve-tail.js';
import {
  processExe, processStartTime, readProcessRecord, recordedProcessRuns, recordFile, removeProcessRecord, writeProcessRecord, type ProcessRecord,
} from './process-record.js';

/**
 * Where a detached process keeps what outlives the API process: its pid record and its output. `dir` is written by
 * root only (a daemon's runtime directory, never the state directory the daemon writes).
 */
export interface DetachedFiles {
  dir: string;
  /** File-name stem: `<name>.pid.json`, `<name>.log` (and `<name>.stdout.log` when standard output is read apart). */
  name: string;
  /** Hash of what the process is started with; an adopted process recorded with another hash is replaced. Null: never compared. */
  configHash: string | null;
}

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
  /** What `ready` means, for the message of a start that timed out (default `become ready`). */
  readyDescription?: string;
  /** Receives every line the process writes (for the server log). */
  onLine?: (line: string) => void;
  /** Lines only `onLine` gets: not kept as the process's lines nor announced as `daemon.log` (they carry a secret). */
  privateLine?: (line: string) => boolean;
  /** When set, standard output goes here as it arrives (Caddy's access log) and is not kept as the process's own lines. */
  onStdout?: (chunk: Buffer) => void;
  /**
   * Run detached (own session, output to files, a pid record): the process outlives the API process, and the next
   * one adopts it at `start` instead of starting another. Without it the process is a child that ends with the API.
   */
  detached?: DetachedFiles;
  /** The account the process runs as (a plugin runs as `nobody`); undefined keeps Bulwark's own. */
  as?: { uid: number; gid: number };
  cwd?: string;
  /** False: the process gets only `env`, not Bulwark's environment (a plugin must not see Bulwark's secrets). */
  inheritEnv?: boolean;
  /** Gives the process a standard input (see `write`); called after every spawn, e.g. to hand it its credentials. */
  onSpawn?: () => void;
  /** Runs before every spawn (never before an adoption): clears what a dead run left that would stop a new one (a stale socket). */
  beforeSpawn?: () => void;
}

export interface SupervisedState {
  running: boolean;
  pid: number | null;
  started_at: string | null;
  /** Automatic restarts after the process died on its own. */
  restarts: number;
  /** Why the last run ended or why a start or restart failed; null while all is well. */
  last_error: string | null;
  /** True when this API process adopted the process from an earlier one rather than starting it. */
  adopted: boolean;
}

/** How `start` found the process: started now, adopted from an earlier API process, or already supervised. */
export type StartOutcome = 'started' | 'adopted' | 'running';

const MAX_LINES = 500;
const MAX_PENDING_INPUT = 1 << 20;
const MAX_RESTART_DELAY_MS = 30_000;
/** How often the liveness of an adopted process (not a child: no exit event) is checked. */
const ADOPTED_POLL_MS = 500;
/** A detached process's log is cut back to nothing once it grows past this (after it has been read). */
const MAX_LOG_BYTES = 16 * 1024 * 1024;
const PROCFS = existsSync('/proc/self/stat');

/**
 * One foreground process under Bulwark's supervision (no init system is assumed): started and waited for until
 * ready, stopped on request, and restarted with a growing delay when it dies on its own, its configuration then
 * put back by `afterRestart`. Its output is kept for the reason of a failure.
 *
 * Detached (options.detached), it runs in its own session with its output in files, so stopping or killing the
 * API leaves it running; `release` lets go of it without stopping it, and a later `start` adopts it by its pid
 * record once its control channel answers (or replaces it when it runs another configuration).
 */
export class SupervisedProcess {
  private child: ChildProcess | null = null;
  /** A process started by an earlier API process and adopted by this one: watched by polling /proc. */
  private adopted: ProcessRecord | null = null;
  private startedAt: number | null = null;
  private restarts = 0;
  private lastError: string | null = null;
  private lines: string[] = [];
  private stopping = false;
  private released = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private watchTimer: NodeJS.Timeout | null = null;
  private tails: EveTail[] = [];
  /** The pid of a run that is not ready yet (so not recorded). */
  private startingPid: number | null = null;
  private delay: number;

  constructor(private readonly options: SupervisedProcessOptions) {
    this.delay = options.restartDelayMs ?? 1000;
    // Adoption reads /proc (a pid's start time and program): without it (FreeBSD without procfs) a detached process
    // could never be adopted and would hold its ports against the next start, so the process stays a child.
    if (options.detached && !PROCFS) this.options = { ...options, detached: undefined };
  }

  get alive(): boolean {
    if (this.child) return this.child.exitCode === null && this.child.signalCode === null;
    return this.adopted !== null && recordedProcessRuns(this.adopted);
  }

  get pid(): number | null {
    if (!this.alive) return null;
    return this.child?.pid ?? this.adopted?.pid ?? null;
  }

  state(): SupervisedState {
    return {
      running: this.alive,
      pid: this.pid,
      started_at: this.startedAt === null ? null : new Date(this.startedAt).toISOString(),
      restarts: this.restarts,
      last_error: this.lastError,
      adopted: this.adopted !== null && this.alive,
    };
  }

  /** Sends a signal to the running process (a live reload); false when none runs. */
  signal(signal: NodeJS.Signals): boolean {
    const pid = this.pid;
    if (pid === null) return false;
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Writes one line to the process's standard input (only with `onSpawn`); false when none runs or it stopped reading. */
  write(line: string): boolean {
    if (!this.alive || !this.child!.stdin || this.child!.stdin.destroyed) return false;
    // A process that stops reading must not make Bulwark buffer without bound: past 1 MiB, lines are dropped.
    if (this.child!.stdin.writableLength > MAX_PENDING_INPUT) return false;
    this.child!.stdin.write(`${line}\n`);
    return true;
  }

  /** The process's own recent output. */
  log(): string[] {
    return [...this.lines];
  }

  /** Starts the process (or adopts the one an earlier API process left running) and waits until it is ready. */
  async start(): Promise<StartOutcome> {
    this.stopping = false;
    this.released = false;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (this.alive) return 'running';
    if (this.options.detached && (await this.adopt())) return 'adopted';
    await this.launch();
    return 'started';
  }

  /** Adopts the process an earlier API process left running with this configuration; never starts one. */
  async adoptOnly(): Promise<boolean> {
    this.stopping = false;
    this.released = false;
    if (this.alive) return true;
    return this.options.detached ? this.adopt() : false;
  }

  /**
   * Takes over the recorded process when it still runs the same configuration and answers; one that runs another
   * configuration, or does not answer, is stopped (so the new one can take its ports). False when nothing was adopted.
   */
  private async adopt(): Promise<boolean> {
    const files = this.options.detached!;
    const file = recordFile(files.dir, files.name);
    const record = readProcessRecord(file);
    if (!record || !recordedProcessRuns(record)) {
      removeProcessRecord(file);
      return false;
    }
    this.adopted = record;
    this.startedAt = Date.parse(record.started_at) || Date.now();
    this.follow(true);
    const same = files.configHash === null || record.config_sha256 === files.configHash;
    if (same && (await this.waitReady(() => this.alive))) {
      this.lastError = null;
      this.watchAdopted();
      return true;
    }
    await this.terminate();
    removeProcessRecord(file);
    return false;
  }

  /** Polls until ready, the process is gone, or the time is up. */
  private async waitReady(stillOurs: () => boolean): Promise<boolean> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 10_000);
    while (Date.now() < deadline) {
      if (!stillOurs() || !this.alive) return false;
      if (await this.options.ready()) return stillOurs() && this.alive;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  private take(text: string): void {
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      this.options.onLine?.(line);
      if (this.options.privateLine?.(line)) continue;
      this.lines.push(line);
      reportDaemonEvent({ kind: 'log', daemon: this.options.label, line });
    }
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
  }

  private logFiles(): { log: string; stdout: string | null } {
    const { dir, name } = this.options.detached!;
    return { log: join(dir, `${name}.log`), stdout: this.options.onStdout ? join(dir, `${name}.stdout.log`) : null };
  }

  /** Follows a detached process's output files; `fromEnd`: what they hold is from before (an adopted process). */
  private follow(fromEnd: boolean): void {
    this.unfollow();
    const { log, stdout } = this.logFiles();
    const onStdout = this.options.onStdout;
    this.tails = [new EveTail(log, (text) => this.take(text), fromEnd)];
    if (stdout && onStdout) this.tails.push(new EveTail(stdout, (text) => onStdout(Buffer.from(`${text}\n`)), fromEnd));
    for (const tail of this.tails) tail.start();
  }

  private unfollow(): void {
    for (const tail of this.tails) tail.stop();
    this.tails = [];
  }

  /** Reads what the output files hold now (before a failure's reason is taken), and cuts a file that grew too big. */
  private async catchUp(): Promise<void> {
    for (const tail of this.tails) await tail.read();
    if (!this.options.detached) return;
    const { log, stdout } = this.logFiles();
    for (const file of [log, stdout]) {
      if (!file) continue;
      try {
        if (statSync(file).size > MAX_LOG_BYTES) truncateSync(file, 0);
      } catch {
        // not there yet
      }
    }
  }

  /** Opens an output file for the process to append to: created 0640, never through a symbolic link. */
  private static openOutput(file: string): number {
    return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
  }

  private spawnProcess(): ChildProcess {
    const { command, args, env, detached, as, cwd, onSpawn } = this.options;
    // A plugin gets only its own environment: Bulwark's may hold secrets.
    const environment = this.options.inheritEnv === false ? { ...env } : { ...process.env, ...env };
    if (!detached) {
      const child = spawn(command, args, { stdio: [onSpawn ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: environment, cwd, ...(as ?? {}) });
      // A process that ends before reading its input must not make the write an unhandled error.
      child.stdin?.on('error', () => undefined);
      child.stdout?.on('data', this.options.onStdout ?? ((chunk: Buffer) => this.take(chunk.toString())));
      child.stderr?.on('data', (chunk: Buffer) => this.take(chunk.toString()));
      return child;
    }
    mkdirSync(detached.dir, { recursive: true });
    const { log, stdout } = this.logFiles();
    const err = SupervisedProcess.openOutput(log);
    const out = stdout ? SupervisedProcess.openOutput(stdout) : err;
    try {
      // Its own session and process group, no pipe to this process: a stop, a crash or a SIGKILL of the API leaves it running.
      const child = spawn(command, args, { stdio: ['ignore', out, err], env: environment, cwd, ...(as ?? {}), detached: true });
      child.unref();
      return child;
    } finally {
      closeSync(err);
      if (out !== err) closeSync(out);
    }
  }

  private async launch(): Promise<void> {
    const { label, detached, onSpawn } = this.options;
    this.adopted = null;
    if (detached) this.follow(true);
    this.options.beforeSpawn?.();
    const child = this.spawnProcess();
    this.child = child;
    this.startingPid = child.pid ?? null;
    this.startedAt = Date.now();
    const runStart = this.lines.length;
    let ready = false;
    let ended: string | null = null;
    child.on('error', (error) => {
      this.lastError = `${label} could not be started: ${error.message}`;
    });
    if (child.pid !== undefined) onSpawn?.();
    child.on('exit', (code, signal) => {
      ended = signal ?? `status ${code}`;
      // A run that never became ready is the start's failure (reported by launch), not one to restart from here.
      if (!ready || this.child !== child || this.stopping || this.released) return;
      void this.catchUp().then(() => {
        const reason = failureReason(this.lines.slice(Math.max(0, runStart)));
        this.lastError = `${label} exited with ${ended}${reason ? `: ${reason}` : ''}; restarting`;
        reportDaemonEvent({ kind: 'crashed', daemon: label, reason: this.lastError });
        this.scheduleRestart();
      });
    });
    if (await this.waitReady(() => this.child === child)) {
      ready = true;
      this.lastError = null;
      this.delay = this.options.restartDelayMs ?? 1000;
      if (detached) this.record(child);
      this.startingPid = null;
      return;
    }
    const timeout = (this.options.readyTimeoutMs ?? 10_000) / 1000;
    const stillRunning = this.alive;
    await this.terminate();
    await this.catchUp();
    this.unfollow();
    const reason = failureReason(this.lines.slice(Math.max(0, runStart)));
    const why = stillRunning ? `did not ${this.options.readyDescription ?? 'become ready'} within ${timeout} s` : `exited with ${ended ?? 'an error'}`;
    // A run that exited silently says so: the answer then points away from the daemon's own complaints.
    const said = reason ? `: ${reason}` : stillRunning ? '' : ' without writing a line of output';
    this.lastError = `${label} ${why}${said}`;
    throw new Error(this.lastError);
  }

  /** Writes the pid record of a detached process that became ready (its program is then the one it runs for good). */
  private record(child: ChildProcess): void {
    const { dir, name, configHash } = this.options.detached!;
    const pid = child.pid!;
    const startTime = processStartTime(pid);
    const exe = processExe(pid);
    if (startTime === null || exe === null) return;
    writeProcessRecord(recordFile(dir, name), {
      pid, start_time: startTime, exe, command: this.options.command, args: this.options.args, config_sha256: configHash,
      started_at: new Date(this.startedAt ?? Date.now()).toISOString(),
    });
  }

  /** An adopted process sends no exit event: its liveness is polled, and its death handled like a child's exit. */
  private watchAdopted(): void {
    if (this.watchTimer) clearInterval(this.watchTimer);
    const watched = this.adopted;
    this.watchTimer = setInterval(() => {
      if (this.adopted !== watched || this.stopping || this.released) return;
      if (watched && recordedProcessRuns(watched)) return;
      clearInterval(this.watchTimer!);
      this.watchTimer = null;
      void this.catchUp().then(() => {
        const reason = failureReason(this.lines.slice(-20));
        this.lastError = `${this.options.label} (pid ${watched?.pid}) exited${reason ? `: ${reason}` : ''}; restarting`;
        reportDaemonEvent({ kind: 'crashed', daemon: this.options.label, reason: this.lastError });
        this.scheduleRestart();
      });
    }, ADOPTED_POLL_MS);
    this.watchTimer.unref();
  }

  private scheduleRestart(): void {
    if (this.restartTimer || this.stopping || this.released) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping || this.released || this.alive) return;
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
    this.unfollow();
    if (this.options.detached) removeProcessRecord(recordFile(this.options.detached.dir, this.options.detached.name));
  }

  /**
   * Lets go of the process without stopping it (the API process is stopping): no restart, no watching. A detached
   * process keeps running and is adopted at the next start; a child ends with this process.
   */
  release(): void {
    this.released = true;
    // A detached run still starting has no pid record yet: the next start could not adopt it and would find its ports
    // taken, so it ends here (it was not serving yet).
    if (this.options.detached && this.child && this.alive && this.startingPid === this.child.pid) this.child.kill('SIGTERM');
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.restartTimer = null;
    this.watchTimer = null;
    this.unfollow();
  }

  /** Ends the current run; its exit is expected, so it schedules no restart. */
  private async terminate(): Promise<void> {
    const child = this.child;
    const adopted = this.adopted;
    const alive = this.alive;
    this.child = null;
    this.adopted = null;
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.watchTimer = null;
    if (child && alive) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    } else if (adopted && alive) {
      await terminateRecorded(adopted);
    }
  }
}

/** Stops a process that is not this process's child: SIGTERM, SIGKILL after 5 s, polling until it is gone. */
async function terminateRecorded(record: ProcessRecord): Promise<void> {
  const send = (signal: NodeJS.Signals) => {
    try {
      if (recordedProcessRuns(record)) process.kill(record.pid, signal);
    } catch {
      // already gone
    }
  };
  send('SIGTERM');
  const killAt = Date.now() + 5000;
  let killed = false;
  while (recordedProcessRuns(record)) {
    if (!killed && Date.now() > killAt) {
      send('SIGKILL');
      killed = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
