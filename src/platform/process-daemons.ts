import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { CheckResult, DaemonName, DaemonStatus, Daemons, DhcpStatistics, DnsStats, StartOptions, TimeTracking } from './daemons.js';
import { daemonVersion, findProgram as findInstalledProgram, runChecker } from './daemon-tools.js';
import { runCommand } from './exec.js';
import { DAEMON_USERS, stateDirOf, systemAccount } from './daemon-runtime.js';
import { describeMissing, missingTool, type MissingTool } from './debian-packages.js';
import { answers, chronySocketOf, READY_TIMEOUT_MS } from './daemon-readiness.js';
import { highAvailabilityOf, keaCommand, leasesOf, readKeaConfig, statisticsOf } from './kea-control.js';
import { parseChronySources, parseChronyTracking } from './chrony-state.js';
import { blocklistDataFile, blocklistZones, dnsStatsOf, EMPTY_DNS_STATS, parseUnboundStats } from './unbound-state.js';
import { unboundEnvironment } from './unbound-python.js';
import { parseUnboundEvent, type UnboundEvent } from './unbound-events.js';
import { isLeaseEventLine } from './kea-lease-events.js';
import { PerSecondBudget } from './per-second-budget.js';
import { SupervisedProcess } from './supervised-process.js';
import { failureReason } from './failure-reason.js';

export { parseUnboundStats } from './unbound-state.js';
export { parseChronySources } from './chrony-state.js';
export { failureReason } from './failure-reason.js';

interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** `setpriv` arguments that start a program as `user` with only the given capabilities kept. */
function asUser(setpriv: string, user: string, caps: string[], program: string, args: string[]): Launch {
  const capList = caps.map((c) => `+${c}`).join(',');
  const capArgs = caps.length ? [`--inh-caps=${capList}`, `--ambient-caps=${capList}`] : [];
  return { command: setpriv, args: [`--reuid=${user}`, `--regid=${user}`, '--init-groups', ...capArgs, '--', program, ...args] };
}

/**
 * How each daemon runs in the foreground under Bulwark's supervision (no systemd is assumed), as its own
 * user: Unbound and Kea are started unprivileged through setpriv with just the capabilities they need;
 * chronyd needs root for a moment to take the clock capability and drops to its user itself (-u).
 */
const FOREGROUND: Record<DaemonName, (program: string, file: string, setpriv: string | null, options: StartOptions) => Launch> = {
  unbound: (program, file, setpriv) =>
    setpriv ? asUser(setpriv, DAEMON_USERS.unbound, ['net_bind_service'], program, ['-d', '-c', file]) : { command: program, args: ['-d', '-c', file] },
  'kea-dhcp4': (program, file, setpriv) => {
    // Kea's pid and lock files default to /run/kea; they go into the runtime's state directory instead.
    const env = { KEA_PIDFILE_DIR: stateDirOf(file), KEA_LOCKFILE_DIR: stateDirOf(file) };
    const launch = setpriv ? asUser(setpriv, DAEMON_USERS['kea-dhcp4'], ['net_raw', 'net_bind_service'], program, ['-c', file]) : { command: program, args: ['-c', file] };
    return { ...launch, env };
  },
  // The DHCP-DDNS server listens on an unprivileged loopback port and sends updates: no capability needed.
  'kea-dhcp-ddns': (program, file, setpriv) => {
    const env = { KEA_PIDFILE_DIR: stateDirOf(file), KEA_LOCKFILE_DIR: stateDirOf(file) };
    const launch = setpriv ? asUser(setpriv, DAEMON_USERS['kea-dhcp-ddns'], [], program, ['-c', file]) : { command: program, args: ['-c', file] };
    return { ...launch, env };
  },
  chronyd: (program, file, setpriv, options) => ({
    command: program,
    args: ['-d', ...(options.clockControl === false ? ['-x'] : []), ...(setpriv ? ['-u', DAEMON_USERS.chronyd] : []), '-f', file],
  }),
};

/** Programs a daemon needs besides itself: the control tool through which Bulwark sees that it runs. */
const CONTROL_TOOLS: Record<DaemonName, string[]> = { unbound: ['unbound-control'], 'kea-dhcp4': [], 'kea-dhcp-ddns': [], chronyd: ['chronyc'] };

const MAX_LOG = 5000;
/** Block and query events per second passed on from the resolver's log; the rest are counted, not sent. */
const MAX_EVENTS_PER_SECOND = 200;

interface Supervised {
  /** The supervised run (a detached process: it outlives the API process and is adopted at the next start). */
  process: SupervisedProcess | null;
  /** Hash of the launch (program, arguments, environment) and the configuration text the process runs. */
  launchHash: string | null;
  configFile: string | null;
  starts: number;
  lastError: string | null;
  missing: MissingTool | null;
  log: string[];
}

export interface ProcessDaemonOptions {
  /** Where programs are found (tests substitute fake tools); default: PATH plus the sbin directories. */
  findProgram?: (program: string) => string | null;
  /** Whether to run daemons as their own users when Bulwark is root (default true). */
  dropPrivileges?: boolean;
}

/**
 * Runs the daemons as supervised foreground processes (the appliance has no init system that Bulwark can rely
 * on) and reads their live state through their own control tools. A start returns once the daemon answers on its
 * control channel, or reports why it did not. Each daemon runs detached, with its pid record and log in its
 * runtime directory: `release` (the API stops) leaves it running, and the next start adopts it when it still runs
 * the same configuration (closeAll stops them all: tests, uninstall).
 */
export function createProcessDaemons(options: ProcessDaemonOptions = {}): Daemons & { closeAll(): Promise<void>; release(): void } {
  const findProgram = options.findProgram ?? findInstalledProgram;
  const supervised = new Map<DaemonName, Supervised>();
  const dnsListeners = new Set<(event: UnboundEvent) => void>();
  const lineListeners = new Set<(name: DaemonName, line: string) => void>();
  const leaseListeners = new Set<(line: string) => void>();
  const blockHits = new Map<string, number>();
  const eventBudget = new PerSecondBudget(MAX_EVENTS_PER_SECOND);
  let zoneCache: { file: string; zones: { label: string; names: number }[] } | null = null;

  const entry = (name: DaemonName) => {
    let item = supervised.get(name);
    if (!item) {
      item = { process: null, launchHash: null, configFile: null, starts: 0, lastError: null, missing: null, log: [] };
      supervised.set(name, item);
    }
    return item;
  };
  const isAlive = (item: Supervised) => item.process?.alive === true;

  /** Turns a resolver log line into an event: every block is counted, at most MAX_EVENTS_PER_SECOND are passed on. */
  const dnsLine = (line: string) => {
    const event = parseUnboundEvent(line);
    if (!event) return;
    if (event.type === 'block') blockHits.set(event.data.zone, (blockHits.get(event.data.zone) ?? 0) + 1);
    if (dnsListeners.size === 0 || !eventBudget.take()) return;
    for (const listener of dnsListeners) listener(event);
  };

  const append = (name: DaemonName, item: Supervised, line: string) => {
    if (name === 'kea-dhcp4' && isLeaseEventLine(line)) {
      for (const listener of leaseListeners) listener(line);
      return;
    }
    item.log.push(line);
    if (name === 'unbound') dnsLine(line);
    for (const listener of lineListeners) listener(name, line);
    if (item.log.length > MAX_LOG) item.log.splice(0, item.log.length - MAX_LOG);
  };

  const status = async (name: DaemonName): Promise<DaemonStatus> => {
    const item = entry(name);
    const state = item.process?.state();
    return {
      name,
      running: state?.running ?? false,
      pid: state?.pid ?? null,
      started_at: state?.started_at ?? null,
      version: await daemonVersion(name),
      config_file: item.configFile,
      starts: item.starts,
      simulated: false,
      last_error: item.lastError ?? state?.last_error ?? null,
      missing: item.missing,
    };
  };

  const stop = async (name: DaemonName) => {
    const item = entry(name);
    await item.process?.stop();
    item.process = null;
    item.launchHash = null;
    return status(name);
  };

  /** The user a daemon (and its checker) runs as: its own when Bulwark is root; null when Bulwark is not root. */
  const daemonUser = (name: DaemonName): { user: string | null; error: string | null; missing: MissingTool | null } => {
    if (options.dropPrivileges === false || process.getuid?.() !== 0) return { user: null, error: null, missing: null };
    const user = DAEMON_USERS[name];
    if (!systemAccount(user)) return { user: null, error: `the system user ${user} does not exist: refusing to run ${name} as root`, missing: null };
    if (!findProgram('setpriv')) return { user: null, error: `setpriv is not installed: refusing to run ${name} as root`, missing: missingTool('setpriv') };
    return { user, error: null, missing: null };
  };

  /**
   * Runs the daemon with this file: keeps one that already runs the same launch and configuration text (also one
   * an earlier API process left running: adopted by its pid record once it answers), replaces one that runs
   * anything else, and starts one where none runs.
   */
  const start = async (name: DaemonName, configFile: string, startOptions: StartOptions = {}): Promise<DaemonStatus> => {
    const item = entry(name);
    const text = await readFile(configFile, 'utf8').catch(() => '');
    const environment = name === 'unbound' ? unboundEnvironment(text) : { env: {}, missing: null };
    const absent = [name, ...CONTROL_TOOLS[name]].find((program) => !findProgram(program));
    const { user, error, missing } = daemonUser(name);
    const unavailable = absent ? missingTool(absent) : environment.missing ?? missing;
    if (unavailable || error) {
      if (isAlive(item)) await stop(name);
      item.configFile = configFile;
      item.missing = unavailable;
      item.lastError = unavailable ? describeMissing(unavailable) : error;
      return status(name);
    }
    const launch = FOREGROUND[name](findProgram(name)!, configFile, user ? findProgram('setpriv') : null, startOptions);
    const env = { ...environment.env, ...launch.env };
    const launchHash = createHash('sha256').update(JSON.stringify({ command: launch.command, args: launch.args, env, text })).digest('hex');
    if (isAlive(item) && item.launchHash === launchHash) return status(name);
    if (item.process) await stop(name);
    item.configFile = configFile;
    item.missing = null;
    item.lastError = null;
    item.launchHash = launchHash;
    const runStart = item.log.length;
    const run = new SupervisedProcess({
      label: name, command: launch.command, args: launch.args, env,
      ready: () => answers(name, configFile, text, findProgram),
      readyTimeoutMs: READY_TIMEOUT_MS[name],
      readyDescription: 'answer on its control channel',
      onLine: (line) => append(name, item, line),
      // Kea's lease-event lines carry the script's token: read, never shown (GET /dhcp/logs, daemon.log, syslog).
      privateLine: name === 'kea-dhcp4' ? isLeaseEventLine : undefined,
      // The pid record and the log go into the root-owned runtime directory, not the state directory the daemon writes.
      detached: { dir: dirname(configFile), name: `${name}.supervised`, configHash: launchHash },
    });
    item.process = run;
    try {
      const outcome = await run.start();
      if (outcome === 'started') {
        item.starts++;
        if (name === 'unbound') blockHits.clear();
      }
    } catch (startError) {
      if (item.process === run) {
        item.process = null;
        item.launchHash = null;
      }
      const reason = (startError as Error).message;
      item.lastError = reason || failureReason(item.log.slice(runStart)) || `${name} exited at start`;
    }
    return status(name);
  };

  const configOf = async (name: DaemonName) => {
    const file = entry(name).configFile;
    return file ? readFile(file, 'utf8').catch(() => '') : '';
  };

  /** The control socket of the Kea that runs now, or null. */
  const keaSocket = async () => (isAlive(entry('kea-dhcp4')) ? readKeaConfig(await configOf('kea-dhcp4')) : null);

  return {
    status,
    start,
    stop,
    async restart(name, configFile, options) {
      await stop(name);
      return start(name, configFile, options);
    },
    async check(name, file): Promise<CheckResult> {
      const { user, error, missing } = daemonUser(name);
      if (error) return { checked: false, ok: false, checker: null, output: error, line: null, ...(missing ? { missing } : {}) };
      let env: Record<string, string> = {};
      if (name === 'unbound') {
        const environment = unboundEnvironment(await readFile(file, 'utf8').catch(() => ''));
        if (environment.missing) return { checked: false, ok: false, checker: null, output: describeMissing(environment.missing), line: null, missing: environment.missing };
        env = environment.env;
      }
      return runChecker(name, file, { runAs: user, required: true, env, findProgram });
    },
    logs: async (name) => [...entry(name).log],
    logLines(listener) {
      lineListeners.add(listener);
      return () => lineListeners.delete(listener);
    },
    leaseEventLines(listener) {
      leaseListeners.add(listener);
      return () => leaseListeners.delete(listener);
    },
    dnsEvents(listener) {
      dnsListeners.add(listener);
      return () => dnsListeners.delete(listener);
    },
    async dnsStats(): Promise<DnsStats> {
      const running = isAlive(entry('unbound'));
      const file = entry('unbound').configFile;
      if (!running || !file) return EMPTY_DNS_STATS(running, false);
      const control = findProgram('unbound-control');
      const result = control ? await runCommand(control, ['-c', file, 'stats_noreset'], { timeoutMs: 5000 }) : null;
      if (!result || result.code !== 0) return EMPTY_DNS_STATS(running, false);
      const dataFile = await blocklistDataFile(await configOf('unbound'));
      // Data files are named by their content, so a file's zones never change: read them once (stats run each second).
      const zones = !dataFile ? [] : zoneCache?.file === dataFile ? zoneCache.zones : await blocklistZones(dataFile);
      if (dataFile && zones.length) zoneCache = { file: dataFile, zones };
      return { ts: Date.now(), running, simulated: false, ...dnsStatsOf(parseUnboundStats(result.stdout), zones, blockHits) };
    },
    async dhcpLeases() {
      const config = await keaSocket();
      if (!config?.socket) return [];
      const answer = await keaCommand(config.socket, 'lease4-get-all').catch(() => null);
      return answer ? leasesOf(answer, config.subnets) : [];
    },
    async dhcpStatistics(): Promise<DhcpStatistics | null> {
      const config = await keaSocket();
      if (!config?.socket) return null;
      const answer = await keaCommand(config.socket, 'statistic-get-all').catch(() => null);
      return answer && answer.result === 0 ? statisticsOf(answer, config.subnets) : null;
    },
    async dhcpHighAvailability() {
      const config = await keaSocket();
      if (!config?.socket) return null;
      const answer = await keaCommand(config.socket, 'status-get').catch(() => null);
      return answer ? highAvailabilityOf(answer) : null;
    },
    async releaseDhcpLease(ip) {
      const config = await keaSocket();
      if (!config?.socket) return false;
      const answer = await keaCommand(config.socket, 'lease4-del', { 'ip-address': ip }).catch(() => null);
      return answer?.result === 0;
    },
    async timeTracking(): Promise<TimeTracking> {
      const socket = chronySocketOf(await configOf('chronyd'));
      const chronyc = findProgram('chronyc');
      if (!isAlive(entry('chronyd')) || !socket || !chronyc) return { synchronized: false, reference: null, stratum: 0, offset_ms: 0, sources: [] };
      const sources = parseChronySources((await runCommand(chronyc, ['-c', '-n', '-h', socket, 'sources'], { timeoutMs: 5000 })).stdout);
      return parseChronyTracking((await runCommand(chronyc, ['-c', '-n', '-h', socket, 'tracking'], { timeoutMs: 5000 })).stdout, sources);
    },
    async closeAll() {
      for (const name of supervised.keys()) await stop(name);
    },
    release() {
      for (const item of supervised.values()) item.process?.release();
    },
  };
}
