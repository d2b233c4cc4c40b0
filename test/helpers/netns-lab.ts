/**
 * A small network-namespace lab for the daemon e2e suites: namespaces named after this process (so parallel
 * runs never share one), Bulwark started with `--platform linux` inside one of them, API calls made from
 * inside it (test/e2e/fixtures/api-calls.mjs signs in as the first admin), and a cleanup that ends every
 * process left in the namespaces and removes them. Only loopback and the namespaces created here are touched.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';
import { stopDetachedDaemons } from './detached-daemons.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export function run(file: string, args: string[], options: { timeoutMs?: number } = {}): string {
  const result = spawnSync(file, args, { encoding: 'utf8', timeout: options.timeoutMs ?? 60_000 });
  if (result.status !== 0) throw new Error(`${file} ${args.join(' ')}: ${result.stderr || result.error?.message}`);
  return result.stdout;
}

export const inNamespace = (ns: string, file: string, args: string[], options?: { timeoutMs?: number }) => run('ip', ['netns', 'exec', ns, file, ...args], options);

export interface ApiAnswer {
  status: number;
  body: any;
  /** How long the request took, measured by the client inside the namespace. */
  ms: number;
  /** When the answer was read (epoch ms, the machine's one clock): a figure's start, free of the client's exit. */
  at: number;
}

export class NetnsLab {
  /** A short tag unique to this process and lab: namespace and link names are built from it. */
  readonly tag = `${process.pid.toString(36)}${randomBytes(2).toString('hex')}`;
  readonly namespaces: string[] = [];
  /** The folder the lab's files live in (mode 0700, as mkdtemp makes it). */
  private readonly folder = mkdtempSync(join(tmpdir(), 'bulwark-lab-'));
  /**
   * Bulwark's data directory: the lab folder itself, or (privateParent) a directory inside it, as
   * `--data-dir /root/bulwark/data` gives — a parent no daemon user can traverse.
   */
  readonly dataDir: string;
  private readonly children: ChildProcess[] = [];
  private bulwarkLog = '';
  base = '';
  private bulwarkNs = '';

  /** `prefix` starts every namespace name (a suite that must not collide with others picks its own, e.g. `b16`). */
  constructor(readonly prefix = 'bw', options: { privateParent?: boolean } = {}) {
    this.dataDir = options.privateParent ? join(this.folder, 'data') : this.folder;
    if (options.privateParent) mkdirSync(this.dataDir, { mode: 0o700 });
  }

  /** Creates a namespace `<prefix><role>-<tag>` with loopback up. */
  namespace(role: string): string {
    const name = `${this.prefix}${role}-${this.tag}`;
    run('ip', ['netns', 'add', name]);
    this.namespaces.push(name);
    run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
    return name;
  }

  /** A veth pair between two namespaces, each end addressed (CIDR) when given, both up. */
  link(a: { ns: string; name: string; address?: string }, b: { ns: string; name: string; address?: string; mac?: string }): void {
    run('ip', ['link', 'add', a.name, 'netns', a.ns, 'type', 'veth', 'peer', 'name', b.name, 'netns', b.ns]);
    if (b.mac) run('ip', ['-n', b.ns, 'link', 'set', b.name, 'address', b.mac]);
    for (const end of [a, b]) {
      if (end.address) run('ip', ['-n', end.ns, 'addr', 'add', end.address, 'dev', end.name]);
      run('ip', ['-n', end.ns, 'link', 'set', end.name, 'up']);
    }
  }

  /** Starts a long-running process inside a namespace (ended at cleanup). */
  spawnIn(ns: string, file: string, args: string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', ns, file, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push(child);
    return child;
  }

  /** Bulwark on the linux platform inside `ns`, listening on loopback there. */
  private bulwark: ChildProcess | null = null;

  /** Stops the running Bulwark as an administrator's SIGTERM would (or a crash: SIGKILL), and waits for it to exit. */
  async stopBulwark(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.bulwark;
    if (!child || child.exitCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    return exited;
  }

  /**
   * `launcher`: a program and its arguments that exec Bulwark's command line given after them (e.g. `unshare --mount --uts …`).
   * `platform`: `simulated` for a suite that needs Bulwark's API and agents but none of the host's tools.
   */
  startBulwark(ns: string, port: number, extraArgs: string[] = [], launcher: string[] = [], platform: 'linux' | 'simulated' = 'linux'): ChildProcess {
    const [file, ...args] = [...launcher, process.execPath, '--import', 'tsx', join(ROOT, 'src/main.ts'), '--platform', platform, '--listen', `127.0.0.1:${port}`, '--data-dir', this.dataDir, '--log-level', 'warn', ...extraArgs];
    const child = this.bulwark = this.spawnIn(ns, file, args);
    child.stderr!.on('data', (chunk: Buffer) => (this.bulwarkLog += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => (this.bulwarkLog += chunk.toString()));
    this.base = `http://127.0.0.1:${port}`;
    this.bulwarkNs = ns;
    return child;
  }

  /** The daemons' runtime tree of the Bulwark this lab starts (no --runtime-dir: the default for its data directory). */
  get runtimeRoot(): string {
    return runtimeRoot({ dataDir: this.dataDir });
  }

  /** Bulwark's own output so far (for assertion messages). */
  get log(): string {
    return this.bulwarkLog.slice(-4000);
  }

  /** API calls made inside Bulwark's namespace as the first admin: [method, path, body?] each. */
  api(...calls: [string, string, unknown?][]): ApiAnswer[] {
    return JSON.parse(inNamespace(this.bulwarkNs, process.execPath, this.apiArgs(calls), { timeoutMs: 300_000 }));
  }

  /**
   * As `api`, without blocking this process meanwhile: for a suite whose own process serves something the
   * namespace's processes use while the calls run (a relay, a controller).
   */
  async apiAsync(...calls: [string, string, unknown?][]): Promise<ApiAnswer[]> {
    const { stdout } = await promisify(execFile)('ip', ['netns', 'exec', this.bulwarkNs, process.execPath, ...this.apiArgs(calls)], { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout);
  }

  private apiArgs(calls: [string, string, unknown?][]): string[] {
    const args = calls.flatMap(([method, path, body]) => [method, path, ...(body === undefined ? [] : [JSON.stringify(body)]), '--']);
    return [join(ROOT, 'test/e2e/fixtures/api-calls.mjs'), this.base, ...args];
  }

  /** One API call; throws with the answer when its status is not `expected`. */
  call(method: string, path: string, body?: unknown, expected = method === 'POST' && !/apply|refresh|reload|restart|start|stop/.test(path) ? 201 : 200): any {
    const [answer] = this.api([method, path, body]);
    if (answer.status !== expected) throw new Error(`${method} ${path} answered ${answer.status}, expected ${expected}: ${JSON.stringify(answer.body)}\n${this.log}`);
    return answer.body;
  }

  async cleanup(): Promise<void> {
    // Bulwark first, so that no supervisor starts a daemon again; then the detached daemons it left (they outlive it).
    await this.stopBulwark('SIGKILL');
    await stopDetachedDaemons(this.dataDir);
    // A second for the other children to end on SIGTERM; whatever is left in the namespaces is killed below.
    const running = this.children.filter((child) => child.exitCode === null && child.signalCode === null);
    const exited = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of running) child.kill('SIGTERM');
    await Promise.race([Promise.all(exited), new Promise((resolve) => setTimeout(resolve, 1000))]);
    for (const ns of this.namespaces) {
      const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
      for (const pid of pids) spawnSync('kill', ['-9', pid]);
      spawnSync('ip', ['netns', 'del', ns]);
    }
    rmSync(this.folder, { recursive: true, force: true });
    rmSync(this.runtimeRoot, { recursive: true, force: true });
  }
}
