import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import type { HubEvent } from '../../core/event-hub.js';
import type { Permission } from '../../core/permissions.js';
import { SupervisedProcess } from '../../platform/supervised-process.js';
import { prepareDaemonRuntime, programRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import { PROBE_ACCOUNT, probeAccount } from '../../platform/probe-account.js';
import { dataPath } from '../common/data-files.js';
import type { Manifest } from './manifest.js';
import { subscribeHooks } from './hooks.js';

/** What a plugin is started from: its manifest and directory, settings, and the key's grant. */
export interface PluginLaunch {
  manifest: Manifest;
  dir: string;
  settings: Record<string, unknown>;
  permissions: Permission[];
  ownerId: string;
}

/** The API key a running plugin holds is named after it (one per plugin, replaced at every start). */
export const pluginKeyName = (name: string): string => `plugin:${name}`;
const MAX_FILES = 200;
const MAX_SOCKET_PATH = 100;

interface Running {
  launch: PluginLaunch;
  process: SupervisedProcess;
  server: Server;
  socket: string;
  key: string;
  timer: NodeJS.Timeout | null;
}

/**
 * Runs each enabled plugin as its own process under `nobody` (when Bulwark is root): its code is copied into the
 * runtime tree where that account can read it, the API is served to it on a unix socket in a folder only that
 * account (and root) can reach, with an API key limited to what its manifest asks for. Hooks arrive on its
 * standard input as JSON lines; it is restarted with a growing delay when it dies (SupervisedProcess), and its
 * output goes to its log.
 */
export class PluginHost {
  private readonly running = new Map<string, Running>();
  private app: FastifyInstance | null = null;
  private unsubscribe: (() => void) | null = null;
  /** The hooks `unsubscribe` holds subscriptions for, sorted and joined. */
  private subscribedHooks = '';

  constructor(
    private readonly context: AppContext,
    private readonly log: (name: string, line: string) => void,
  ) {}

  attach(app: FastifyInstance): void {
    this.app = app;
    this.resubscribe();
  }

  /** Subscribes the hub topics of the hooks the running plugins list (again whenever that set changes). */
  private resubscribe(): void {
    const hooks = new Set([...this.running.values()].flatMap((entry) => entry.launch.manifest.hooks));
    const key = [...hooks].sort().join(',');
    if (this.unsubscribe && key === this.subscribedHooks) return;
    this.unsubscribe?.();
    this.subscribedHooks = key;
    this.unsubscribe = subscribeHooks(this.context.events, hooks, (hook, event) => this.deliver(hook, event));
  }

  isRunning(name: string): boolean {
    return this.running.get(name)?.process.alive ?? false;
  }

  state(name: string) {
    return this.running.get(name)?.process.state() ?? null;
  }

  async start(launch: PluginLaunch): Promise<void> {
    const { manifest } = launch;
    if (!this.app) throw new Error('the plugin host is not attached to the server yet');
    await this.stop(manifest.name);
    const { codeDir, socketDir, account } = this.prepareFiles(launch);
    const socket = join(socketDir, 'api.sock');
    if (socket.length > MAX_SOCKET_PATH) throw new Error(`the plugin socket path ${socket} is too long for a unix socket`);
    rmSync(socket, { force: true });
    const app = this.app;
    const server = createServer((request, response) => app.routing(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
    const keys = this.context.identity.apiKeys;
    let key: string;
    try {
      chmodSync(socket, 0o600);
      if (account) chownSync(socket, account.uid, account.gid);
      for (const old of keys.list().filter((k) => k.name === pluginKeyName(manifest.name))) keys.remove(old.id);
      ({ key } = keys.create({ name: pluginKeyName(manifest.name), permissions: launch.permissions, ownerId: launch.ownerId, createdBy: 'plugin host', expiresAt: null }));
    } catch (error) {
      // Nothing half-started is left behind: the socket closes with the failure.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
    const entry: Running = { launch, server, socket, key, timer: null, process: null as unknown as SupervisedProcess };
    entry.process = new SupervisedProcess({
      label: `plugin ${manifest.name}`,
      command: process.execPath,
      args: [join(codeDir, manifest.entry!)],
      cwd: codeDir,
      as: account ?? undefined,
      inheritEnv: false,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/nonexistent', NODE_ENV: 'production' },
      ready: async () => true,
      restartDelayMs: 500,
      // The credentials go over standard input, never the environment or the command line (ps shows those).
      onSpawn: () => entry.process.write(JSON.stringify({ type: 'hello', name: manifest.name, socket, state_dir: socketDir, api_key: key, permissions: launch.permissions, hooks: manifest.hooks, settings: entry.launch.settings })),
      onLine: (line) => this.log(manifest.name, `output: ${line}`),
    });
    this.running.set(manifest.name, entry);
    if (this.app) this.resubscribe();
    await entry.process.start();
    if (manifest.hooks.includes('timer')) {
      entry.timer = setInterval(() => this.send(manifest.name, { type: 'event', hook: 'timer', topic: 'timer', at: new Date(this.context.clock.now()).toISOString(), payload: {} }), manifest.timer_seconds * 1000);
      entry.timer.unref();
    }
  }

  /** Hands the running plugin its new settings. */
  pushSettings(name: string, settings: Record<string, unknown>): void {
    const entry = this.running.get(name);
    if (!entry) return;
    entry.launch = { ...entry.launch, settings };
    this.send(name, { type: 'config', settings });
  }

  async stop(name: string): Promise<void> {
    const entry = this.running.get(name);
    if (!entry) return;
    this.running.delete(name);
    if (this.app) this.resubscribe();
    if (entry.timer) clearInterval(entry.timer);
    await entry.process.stop();
    await new Promise<void>((resolve) => entry.server.close(() => resolve()));
    const keys = this.context.identity.apiKeys;
    for (const old of keys.list().filter((k) => k.name === pluginKeyName(name))) keys.remove(old.id);
  }

  async stopAll(): Promise<void> {
    for (const name of [...this.running.keys()]) await this.stop(name);
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.app = null;
  }

  private deliver(hook: string, event: HubEvent): void {
    for (const [name, entry] of this.running) {
      if (entry.launch.manifest.hooks.includes(hook)) this.send(name, { type: 'event', hook, topic: event.topic, at: event.at, payload: event.payload });
    }
  }

  private send(name: string, message: Record<string, unknown>): void {
    this.running.get(name)?.process.write(JSON.stringify(message));
  }

  /**
   * Where the plugin's code and socket live. As root: the runtime tree, code root-owned and readable by the
   * plugin account's group, the socket in the state folder only that account can enter. Otherwise (development)
   * the data directory, run as Bulwark's own user.
   */
  private prepareFiles(launch: PluginLaunch): { codeDir: string; socketDir: string; account: { uid: number; gid: number } | null } {
    const account = probeAccount() ?? null;
    if (!account) {
      const socketDir = dataPath(this.context.config.dataDir, 'plugins-run', launch.manifest.name);
      mkdirSync(socketDir, { recursive: true, mode: 0o700 });
      return { codeDir: launch.dir, socketDir, account: null };
    }
    const runtime = programRuntime(this.context.config, `plugin-${launch.manifest.name}`, PROBE_ACCOUNT);
    rmSync(join(runtime.dir, 'code'), { recursive: true, force: true });
    prepareDaemonRuntime(runtime);
    chmodSync(runtime.stateDir, 0o700);
    let files = 0;
    const copy = (dir: string) => {
      for (const item of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, item.name);
        if (item.isDirectory()) copy(path);
        else if (item.isFile() && lstatSync(path).isFile()) {
          if (++files > MAX_FILES) throw new Error(`plugin ${launch.manifest.name} has more than ${MAX_FILES} files`);
          writeDaemonFile(runtime, ['code', ...relative(launch.dir, path).split('/')], readFileSync(path));
        }
      }
    };
    copy(launch.dir);
    return { codeDir: join(runtime.dir, 'code'), socketDir: runtime.stateDir, account };
  }
}
