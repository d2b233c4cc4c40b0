/**
 * The reverse proxy on Linux: Debian's Caddy, supervised by Bulwark in the foreground as the `caddy` user
 * (setpriv, with only CAP_NET_BIND_SERVICE), its admin API on a unix socket in its state directory. A running
 * Caddy takes a new configuration through `POST /load` on that socket: listeners are handed over and requests
 * in flight finish, so an apply or a certificate renewal never drops a connection or restarts the process.
 * Caddy's server log (stderr) and access log (stdout, JSON) are read by Bulwark; the access log file is
 * written by Bulwark, so Caddy needs no write access outside its state directory. A Caddy that dies is restarted
 * (1 s back-off, doubling to 30 s) from the same file, which holds the last applied configuration.
 */
import { request } from 'node:http';
import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProxyInstall, ReverseProxyControl } from '../reverse-proxy.js';
import { findProgram as findInstalledProgram } from '../daemon-tools.js';
import { runCommand } from '../exec.js';
import { systemAccount } from '../daemon-runtime.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { conflict, unavailable } from '../../core/errors.js';
import { formatAccessLine } from './caddy-access-log.js';
import { SupervisedProcess } from '../supervised-process.js';

const USER = 'caddy';
const MAX_LINES = 5000;
const READY_TIMEOUT_MS = 15_000;

export interface CaddyOptions {
  findProgram?: (program: string) => string | null;
}

/** The admin socket and storage of a configuration file's runtime (`<runtime>/state/`). */
export const caddyStateDir = (configFile: string) => join(dirname(configFile), 'state');
export const caddyAdminSocket = (configFile: string) => join(caddyStateDir(configFile), 'admin.sock');

/** One printable line of Caddy's JSON log: its message and error, never more than 200 characters. */
export function caddyLogReason(line: string): string | null {
  try {
    const entry = JSON.parse(line) as { level?: string; msg?: string; error?: string };
    if (entry.level !== 'error' && entry.level !== 'fatal' && entry.level !== 'panic') return null;
    return `${entry.msg ?? ''}${entry.error ? `: ${entry.error}` : ''}`.replace(/[^\x20-\x7e]/g, '').slice(0, 200) || null;
  } catch {
    return /error|fatal/i.test(line) ? line.replace(/[^\x20-\x7e]/g, '').slice(0, 200) : null;
  }
}

/** A request to Caddy's admin API on its unix socket, with an empty Host (the only one Caddy allows on a socket). */
function admin(socketPath: string, method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, setHost: false, headers: { host: '', ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) }, timeout: 60_000 }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('the admin API did not answer in time')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The one-line reason of an admin API refusal (`{"error": "..."}`), printable and short. */
function adminReason(text: string): string {
  try {
    return String((JSON.parse(text) as { error?: string }).error ?? text).replace(/[^\x20-\x7e]/g, '').slice(0, 200);
  } catch {
    return text.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
  }
}

export function createCaddyProxy(options: CaddyOptions = {}): ReverseProxyControl & { close(): Promise<void>; stopAll(): Promise<void> } {
  const findProgram = options.findProgram ?? findInstalledProgram;
  /** The supervised Caddy of the installed configuration file; replaced when the file's path changes. */
  let supervisor: SupervisedProcess | null = null;
  let install: ProxyInstall | null = null;
  const serverLog: string[] = [];
  const accessLog: string[] = [];
  let version: string | null = null;

  const alive = () => supervisor?.alive === true;
  const keep = (ring: string[], line: string) => {
    ring.push(line);
    if (ring.length > MAX_LINES) ring.splice(0, ring.length - MAX_LINES);
  };

  const caddy = () => {
    const program = findProgram('caddy');
    if (!program) throw unavailable(describeMissing(missingTool('caddy')));
    return program;
  };

  /** setpriv arguments that run Caddy as its own user when Bulwark is root; refuses to run it as root. */
  const asCaddy = (program: string, args: string[], caps: boolean): { command: string; args: string[] } => {
    if (process.getuid?.() !== 0) return { command: program, args };
    if (!systemAccount(USER)) throw unavailable(`the system user ${USER} does not exist: install the Debian package caddy (refusing to run Caddy as root)`);
    const setpriv = findProgram('setpriv');
    if (!setpriv) throw unavailable(describeMissing(missingTool('setpriv')));
    const capArgs = caps ? ['--inh-caps=+net_bind_service', '--ambient-caps=+net_bind_service'] : [];
    return { command: setpriv, args: [`--reuid=${USER}`, `--regid=${USER}`, '--init-groups', ...capArgs, '--', program, ...args] };
  };

  /** Caddy's home, data and config directories: its state directory, never the caddy user's real home. */
  const environment = (configFile: string) => {
    const state = caddyStateDir(configFile);
    return { HOME: state, XDG_DATA_HOME: join(state, 'data'), XDG_CONFIG_HOME: join(state, 'config') };
  };

  /** Appends access lines to the configured file: created 0640, never through a symbolic link. */
  const appendAccess = async (lines: string[]) => {
    const target = install?.accessLog;
    if (!target || lines.length === 0) return;
    try {
      await mkdir(dirname(target.path), { recursive: true, mode: 0o750 });
      const handle = await open(target.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
      try {
        await handle.appendFile(`${lines.join('\n')}\n`);
      } finally {
        await handle.close();
      }
    } catch (error) {
      keep(serverLog, JSON.stringify({ level: 'error', logger: 'bulwark', msg: 'access log not written', error: (error as Error).message }));
    }
  };

  /** Caddy's standard output is its access log (JSON lines), kept formatted and appended to the configured file. */
  const accessReader = () => {
    let pending = '';
    return (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      const formatted = lines.filter(Boolean).map((line) => formatAccessLine(line, install?.accessLog?.format ?? 'common'));
      for (const line of formatted) keep(accessLog, line);
      void appendAccess(formatted);
    };
  };

  const status = async () => {
    if (version === null) {
      const program = findProgram('caddy');
      version = program ? (await runCommand(program, ['version'], { timeoutMs: 5000 })).stdout.trim().split(/\s+/)[0] || 'caddy' : 'not installed';
    }
    const supervision = supervisor?.state();
    return {
      running: alive(), version: version === 'not installed' ? version : `caddy ${version}`,
      pid: supervision?.pid ?? null, restarts: supervision?.restarts ?? 0, last_error: supervision?.last_error ?? null,
    };
  };

  const stop = async (): Promise<string> => {
    await supervisor?.stop();
    return 'Caddy stopped';
  };

  /** Loads the installed file into the running Caddy in place: no restart, no dropped connection. */
  const load = async (next: ProxyInstall) => {
    const text = await readFile(next.configFile, 'utf8');
    const answer = await admin(caddyAdminSocket(next.configFile), 'POST', '/load', text).catch((error: Error) => ({ status: 0, text: JSON.stringify({ error: error.message }) }));
    if (answer.status !== 200) throw conflict(`Caddy refused the configuration: ${adminReason(answer.text)}`);
  };

  const start = async (next: ProxyInstall): Promise<string> => {
    const program = caddy();
    if (alive() && install?.configFile === next.configFile) {
      install = next;
      return 'Caddy is running';
    }
    await stop();
    install = next;
    const launch = asCaddy(program, ['run', '--config', next.configFile, '--adapter', ''], true);
    const socket = caddyAdminSocket(next.configFile);
    // A Caddy that dies is started again from the configuration file, which always holds the last applied configuration.
    supervisor = new SupervisedProcess({
      label: 'caddy', command: launch.command, args: launch.args, env: environment(next.configFile), readyTimeoutMs: READY_TIMEOUT_MS,
      ready: async () => (await admin(socket, 'GET', '/config/').catch(() => null))?.status === 200,
      onLine: (line) => keep(serverLog, line),
      onStdout: accessReader(),
      // Detached (pid record and output beside its configuration, root only): it outlives the API process; the next
      // start adopts it and loads the applied configuration into it in place.
      detached: { dir: dirname(next.configFile), name: 'caddy', configHash: null },
    });
    const runStart = serverLog.length;
    try {
      if ((await supervisor.start()) === 'adopted') {
        await load(next);
        return 'Caddy was running: adopted, and the configuration loaded in place';
      }
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 409) throw error;
      const reason = serverLog.slice(runStart).map(caddyLogReason).filter(Boolean).at(-1);
      throw conflict(`Caddy did not start${reason ? `: ${reason}` : ''}`);
    }
    return 'Caddy started';
  };

  return {
    dialect: 'caddy-json',
    status,
    start,
    stop,
    async restart(next) {
      await stop();
      return start(next);
    },
    async validate(configFile) {
      const program = caddy();
      const launch = asCaddy(program, ['validate', '--config', configFile, '--adapter', ''], false);
      const result = await runCommand(launch.command, launch.args, { timeoutMs: 60_000, env: { ...process.env, ...environment(configFile) } });
      if (result.code === 0) return null;
      // Caddy prints "Error: <reason>" last; the reason is one printable line, the rest stays out of the answer.
      const last = `${result.stderr}\n${result.stdout}`.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('Error:')).at(-1);
      return `caddy validate refused the configuration${last ? `: ${last.slice(6).trim().replace(/[^\x20-\x7e]/g, '').slice(0, 200)}` : ''}`;
    },
    async apply(next, enabled) {
      if (!enabled) {
        await stop();
        install = next;
        return 'Reverse proxy configuration saved, Caddy stopped';
      }
      if (!alive()) {
        await start(next);
        return 'Reverse proxy configuration applied, Caddy started';
      }
      // A running Caddy loads the new configuration in place: no restart, no dropped connection.
      install = next;
      await load(next);
      return 'Reverse proxy configuration applied, Caddy reloaded without a restart';
    },
    async logs(kind, lines) {
      return (kind === 'access' ? accessLog : serverLog).slice(-lines);
    },
    /** The API stops: Caddy keeps serving (the next start adopts it). */
    close: async () => {
      supervisor?.release();
    },
    stopAll: () => stop().then(() => undefined),
  };
}
