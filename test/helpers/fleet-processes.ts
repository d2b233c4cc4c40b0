/** PostgreSQL databases, controller processes and light agents for the fleet tests and the fleet bench. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { freePort } from './free-port.js';
import { FleetAgent } from '../../src/agent/agent.js';
import { enrolWithController } from '../../src/agent/enrol.js';
import { MemoryApplier } from '../../src/agent/memory-applier.js';
import { MemoryStateStore } from '../../src/agent/state.js';

export const PG = { host: '127.0.0.1', port: 5432, user: 'postgres' };

/**
 * The preload that ends a spawned process once the test that spawned it is gone (its stdin closes: SIGKILL
 * included). Spawn with `...dieWithParent(args)` and stdin `'pipe'`.
 */
const DIE_WITH_PARENT = new URL('./die-with-parent.mjs', import.meta.url);
export const dieWithParent = (args: readonly string[]): string[] => ['--import', fileURLToPath(DIE_WITH_PARENT), ...args];

/**
 * The same for the test file's own process under `node --test`: its stdin is a pipe from the runner, so a SIGKILLed
 * runner ends it too (its 'exit' handlers run; its children's pipes close). Outside the runner, nothing.
 */
export async function exitWithTestRunner(): Promise<void> {
  if (process.env.NODE_TEST_CONTEXT) await import(DIE_WITH_PARENT.href);
}

/** A database of this test run's own (unique name), and how to drop it. */
export async function temporaryDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bulwark_fleet_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ ...PG, database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: `postgres://${PG.user}@${PG.host}:${PG.port}/${name}`,
    drop: async () => {
      const client = new pg.Client({ ...PG, database: 'postgres' });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** Polls `probe` every `intervalMs` until it answers something truthy; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false | null>, timeoutMs = 120_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The test's HTTPS client of a controller (its certificate is not checked: the test is the administrator). */
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

export class ControllerProcess {
  child: ChildProcess | null = null;
  output = '';
  token = '';

  /**
   * `keyDir` holds the CA's seal key: processes of one controller share it (a second process is given the first's).
   * `entry` runs the controller (default: from the TypeScript sources; the bench runs the compiled one).
   */
  constructor(
    readonly database: string,
    readonly port: number,
    readonly keyDir = mkdtempSync(join(tmpdir(), 'bulwark-fleet-controller-')),
    private readonly entry: string[] = ['--import', 'tsx', 'src/controller/main.ts'],
    /** Names and addresses agents dial it by (its certificate's SANs). */
    private readonly names = '127.0.0.1',
  ) {}

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  static async start(database: string, options: { keyDir?: string; entry?: string[]; names?: string } = {}): Promise<ControllerProcess> {
    const controller = new ControllerProcess(database, await freePort(), options.keyDir, options.entry, options.names);
    await controller.spawn();
    return controller;
  }

  async spawn(): Promise<void> {
    this.output = '';
    const child = spawn(process.execPath, dieWithParent(this.entry), {
      // stdin: the pipe whose end tells the controller its test is gone (die-with-parent.mjs).
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, BULWARK_CONTROLLER_DB: this.database, BULWARK_CONTROLLER_LISTEN: `127.0.0.1:${this.port}`, BULWARK_CONTROLLER_KEY_FILE: join(this.keyDir, 'controller.key'), BULWARK_CONTROLLER_NAMES: this.names },
    });
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.child = child;
    await until('the controller to listen', async () => {
      if (child.exitCode !== null) throw new Error(`controller exited: ${this.output}`);
      return this.output.includes('Bulwark controller listening');
    });
  }

  /** SIGKILL: no shutdown at all, as a crash. */
  async kill(): Promise<void> {
    const child = this.child;
    // Ended already (a signal sets signalCode, not exitCode): there is no exit left to wait for.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async call(method: string, path: string, body?: unknown, token = this.token): Promise<{ status: number; body: any; headers: Record<string, string> }> {
    const response = await undiciFetch(`${this.url}${path}`, {
      method, dispatcher: insecure,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // PEM and other text answers stay text.
    }
    return { status: response.status, body: parsed, headers: Object.fromEntries(response.headers) };
  }

  async signInFirstAdmin(): Promise<void> {
    const credentials = { username: 'fleet-admin', password: 'Fleet-admin-password-1' };
    const registered = await this.call('POST', '/api/v1/auth/register', credentials, '');
    if (registered.status !== 200) throw new Error(`register: ${JSON.stringify(registered.body)}`);
    this.token = (await this.call('POST', '/api/v1/auth/login', credentials, '')).body.token;
  }

  async enrolmentToken(name: string, variables: Record<string, string> = {}): Promise<string> {
    const issued = await this.call('POST', '/api/v1/enrolment-tokens', { name, variables });
    if (issued.status !== 200) throw new Error(`token: ${JSON.stringify(issued.body)}`);
    return issued.body.token as string;
  }

  async close(removeKey = true): Promise<void> {
    await this.kill();
    if (removeKey) rmSync(this.keyDir, { recursive: true, force: true });
  }
}

export type LightAgentTiming = { statusIntervalMs: number; backoff: { initialMs: number; maxMs: number } };

/**
 * A light agent: the agent code with an in-memory state and configuration, in this process. It dials `dial` (a
 * controller process, or anything standing for one: a load balancer); `applier` replaces its stand-in (a test's
 * subclass that holds an apply).
 */
export async function lightAgent<A extends MemoryApplier = MemoryApplier>(
  controller: ControllerProcess, name: string, variables: Record<string, string> = {}, dial: { readonly url: string } = controller,
  timing: LightAgentTiming = { statusIntervalMs: 1000, backoff: { initialMs: 200, maxMs: 2000 } },
  refuse?: ConstructorParameters<typeof MemoryApplier>[0],
  applier: A = new MemoryApplier(refuse) as A,
) {
  return enrolLightAgent(dial.url, await controller.enrolmentToken(name, variables), timing, refuse, applier);
}

/** Enrols a light agent with a token (its own enrolment: CA fetch, key pairs, request) and starts it. */
export async function enrolLightAgent<A extends MemoryApplier = MemoryApplier>(
  controllerUrl: string, token: string, timing: LightAgentTiming, refuse?: ConstructorParameters<typeof MemoryApplier>[0],
  applier: A = new MemoryApplier(refuse) as A,
) {
  const store = new MemoryStateStore();
  const enrolled = await enrolWithController({ controllerUrl, token, allowList: ['127.0.0.1'] });
  store.save({ ...enrolled, attempts: {}, applied_revision: 0, applied_document: null });
  const quiet = { info: () => undefined, warn: () => undefined };
  const agent = new FleetAgent(store, applier, { version: 'light-1', allowList: () => ['127.0.0.1'], log: quiet as never, ...timing });
  agent.start();
  return { agent, applier, store, id: enrolled.appliance_id };
}
