/**
 * Light agents in child processes of their own (test/helpers/fleet-agent-worker.ts): the fleet tests' scale, a
 * thousand agents, without a thousand processes and without the test's own process doing their work.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LightAgentTiming } from './fleet-processes.js';

export interface LightAgentRecord {
  id: string;
  connected: boolean;
  /** How many times its in-memory stand-in applied a revision (whatever the agent's records say). */
  applies: number;
  applied_revision: number;
  /** The agent's own record: every revision number it attempted, with the outcome. */
  attempts: [number, string][];
  aliases: { name: string; entries: string[] }[];
}

export type WorkerRequest =
  | { type: 'enrol'; seq: number; controllerUrl: string; apiToken: string; agents: { name: string; variables: Record<string, string> }[]; concurrency: number; timing: LightAgentTiming }
  | { type: 'records'; seq: number }
  /** Answered as soon as `count` of this process's agents have applied a revision. */
  | { type: 'watch'; seq: number; count: number }
  | { type: 'stop'; seq: number };

export type WorkerReply =
  | { type: 'ready'; seq: 0 }
  | { type: 'enrolled'; seq: number; ids: string[] }
  | { type: 'records'; seq: number; agents: LightAgentRecord[] }
  | { type: 'reached'; seq: number; applied: number }
  | { type: 'stopped'; seq: number }
  | { type: 'failed'; seq: number; error: string };

const WORKER = fileURLToPath(new URL('./fleet-agent-worker.ts', import.meta.url));

export class LightAgentProcess {
  output = '';
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>();

  private constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    child.on('message', (reply: WorkerReply) => {
      const waiter = this.waiting.get(reply.seq);
      this.waiting.delete(reply.seq);
      if (reply.type === 'failed') waiter?.reject(new Error(`light agent process: ${reply.error}`));
      else waiter?.resolve(reply);
    });
    child.on('exit', (code, signal) => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`light agent process exited (${code ?? signal}): ${this.output}`));
      this.waiting.clear();
    });
  }

  /** A worker process, once it has loaded the agent code. */
  static async start(): Promise<LightAgentProcess> {
    const child = fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const worker = new LightAgentProcess(child);
    await worker.ask(() => undefined);
    return worker;
  }

  /** Sends a request (none: waits for the worker's `ready`) and resolves with its answer. */
  private ask(request: ((seq: number) => WorkerRequest) | (() => undefined)): Promise<WorkerReply> {
    const seq = request.length === 0 ? 0 : ++this.seq;
    const answered = new Promise<WorkerReply>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    const message = request(seq);
    if (message) this.child.send(message);
    return answered;
  }

  /** Issues each agent a token (with the administrator's API token) and enrols it, `concurrency` at a time. */
  async enrol(controllerUrl: string, apiToken: string, agents: { name: string; variables: Record<string, string> }[], timing: LightAgentTiming, concurrency = 4): Promise<string[]> {
    const reply = await this.ask((seq) => ({ type: 'enrol', seq, controllerUrl, apiToken, agents, concurrency, timing }));
    return (reply as Extract<WorkerReply, { type: 'enrolled' }>).ids;
  }

  async records(): Promise<LightAgentRecord[]> {
    return ((await this.ask((seq) => ({ type: 'records', seq }))) as Extract<WorkerReply, { type: 'records' }>).agents;
  }

  /** Resolves as soon as `count` of this process's agents have applied a revision, with how many had by then. */
  async whenApplied(count: number): Promise<number> {
    return ((await this.ask((seq) => ({ type: 'watch', seq, count }))) as Extract<WorkerReply, { type: 'reached' }>).applied;
  }

  /** SIGKILL and wait for the exit (the agents' sockets go with it). */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}
