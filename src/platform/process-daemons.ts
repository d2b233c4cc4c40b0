import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import type { DaemonName, DaemonStatus, Daemons, DhcpLease, DnsStats, TimeTracking } from './daemons.js';
import { daemonVersion, findProgram, runChecker } from './daemon-tools.js';
import { runCommand } from './exec.js';
import { DAEMON_USERS, stateDirOf, systemAccount } from './daemon-runtime.js';

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
const FOREGROUND: Record<DaemonName, (program: string, file: string, setpriv: string | null) => Launch> = {
  unbound: (program, file, setpriv) =>
    setpriv ? asUser(setpriv, DAEMON_USERS.unbound, ['net_bind_service'], program, ['-d', '-c', file]) : { command: program, args: ['-d', '-c', file] },
  'kea-dhcp4': (program, file, setpriv) => {
    // Kea's pid and lock files default to /run/kea; they go into the runtime's state directory instead.
    const env = { KEA_PIDFILE_DIR: stateDirOf(file), KEA_LOCKFILE_DIR: stateDirOf(file) };
    const launch = setpriv ? asUser(setpriv, DAEMON_USERS['kea-dhcp4'], ['net_raw', 'net_bind_service'], program, ['-c', file]) : { command: program, args: ['-c', file] };
    return { ...launch, env };
  },
  chronyd: (program, file, setpriv) => ({ command: program, args: ['-d', ...(setpriv ? ['-u', DAEMON_USERS.chronyd] : []), '-f', file] }),
};

/** The user a daemon (and its checker) runs as: its own when Bulwark is root; null when Bulwark is not root. */
function daemonUser(name: DaemonName): { user: string | null; error: string | null } {
  if (process.getuid?.() !== 0) return { user: null, error: null };
  const user = DAEMON_USERS[name];
  if (!systemAccount(user)) return { user: null, error: `the system user ${user} does not exist: refusing to run ${name} as root` };
  if (!findProgram('setpriv')) return { user: null, error: `setpriv is not installed: refusing to run ${name} as root` };
  return { user, error: null };
}

const MAX_LOG = 5000;

interface Supervised {
  child: ChildProcess | null;
  startedAt: number | null;
  configFile: string | null;
  starts: number;
  lastError: string | null;
  log: string[];
}

/** Parses `unbound-control stats_noreset` (key=value lines). */
export function parseUnboundStats(text: string): Record<string, number> {
  const stats: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^([\w.\-]+)=([\d.]+)$/.exec(line.trim());
    if (match) stats[match[1]] = Number(match[2]);
  }
  return stats;
}

/** Parses Kea's memfile lease CSV (header line first); the newest row per address wins, zero lifetimes are deletions. */
export function parseKeaLeaseCsv(text: string, subnets: Map<number, string>): DhcpLease[] {
  const [header, ...rows] = text.split('\n').filter((line) => line.trim());
  if (!header) return [];
  const columns = header.split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  const byAddress = new Map<string, DhcpLease>();
  for (const line of rows) {
    const row = line.split(',');
    const address = at(row, 'address');
    const lifetime = Number(at(row, 'valid_lifetime'));
    const expire = Number(at(row, 'expire'));
    const state = Number(at(row, 'state'));
    if (!address) continue;
    if (lifetime === 0 || state === 2) {
      byAddress.delete(address);
      continue;
    }
    byAddress.set(address, {
      ip_address: address,
      mac_address: at(row, 'hwaddr'),
      hostname: at(row, 'hostname') || null,
      client_id: at(row, 'client_id') || null,
      state: state === 1 ? 'declined' : 'bound',
      lease_time: lifetime,
      start_time: expire - lifetime,
      expire_time: expire,
      subnet: subnets.get(Number(at(row, 'subnet_id'))) ?? '',
    });
  }
  return [...byAddress.values()];
}

/** Parses `chronyc -c sources` CSV lines. */
export function parseChronySources(text: string): TimeTracking['sources'] {
  const states: Record<string, TimeTracking['sources'][number]['state']> = { '*': 'selected', '+': 'candidate', '-': 'candidate', '?': 'unreachable', x: 'falseticker', '~': 'candidate' };
  return text
    .split('\n')
    .filter((line) => line.includes(','))
    .map((line) => {
      const fields = line.split(',');
      return {
        address: fields[2],
        state: states[fields[1]] ?? 'unknown',
        stratum: Number(fields[3]) || 0,
        offset_ms: Math.round(Number(fields[8] ?? 0) * 1e6) / 1e3,
        reach: Number(fields[5]) || 0,
      };
    });
}

/**
 * Runs the daemons as supervised foreground child processes (the appliance has no init system that Bulwark
 * can rely on) and reads their live state through their own control tools.
 */
export function createProcessDaemons(): Daemons & { closeAll(): Promise<void> } {
  const supervised = new Map<DaemonName, Supervised>();
  const entry = (name: DaemonName) => {
    let item = supervised.get(name);
    if (!item) {
      item = { child: null, startedAt: null, configFile: null, starts: 0, lastError: null, log: [] };
      supervised.set(name, item);
    }
    return item;
  };
  const append = (item: Supervised, text: string) => {
    for (const line of text.split('\n')) if (line.trim()) item.log.push(line);
    if (item.log.length > MAX_LOG) item.log.splice(0, item.log.length - MAX_LOG);
  };
  const status = async (name: DaemonName): Promise<DaemonStatus> => {
    const item = entry(name);
    return {
      name,
      running: item.child !== null && item.child.exitCode === null && item.child.signalCode === null,
      pid: item.child?.pid ?? null,
      started_at: item.startedAt === null ? null : new Date(item.startedAt).toISOString(),
      version: await daemonVersion(name),
      config_file: item.configFile,
      starts: item.starts,
      simulated: false,
      last_error: item.lastError,
    };
  };
  const stop = async (name: DaemonName) => {
    const item = entry(name);
    const child = item.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    item.child = null;
    return status(name);
  };
  const start = async (name: DaemonName, configFile: string) => {
    const item = entry(name);
    const current = await status(name);
    if (current.running && item.configFile === configFile) return current;
    if (current.running) await stop(name);
    const program = findProgram(name);
    item.configFile = configFile;
    if (!program) {
      item.lastError = `${name} is not installed`;
      return status(name);
    }
    const { user, error } = daemonUser(name);
    if (error) {
      item.lastError = error;
      return status(name);
    }
    const launch = FOREGROUND[name](program, configFile, user ? findProgram('setpriv') : null);
    const child = spawn(launch.command, launch.args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...launch.env } });
    item.child = child;
    item.startedAt = Date.now();
    item.starts++;
    item.lastError = null;
    child.stdout?.on('data', (chunk: Buffer) => append(item, chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => append(item, chunk.toString()));
    child.on('error', (error) => {
      item.lastError = error.message;
    });
    child.on('exit', (code, signal) => {
      append(item, `${name} exited (${signal ?? `status ${code}`})`);
      if (code) item.lastError = `${name} exited with status ${code}`;
    });
    // A daemon that rejects its configuration exits at once; give it a moment to do so.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return status(name);
  };
  const configOf = async (name: DaemonName) => {
    const file = entry(name).configFile;
    return file ? readFile(file, 'utf8').catch(() => '') : '';
  };
  return {
    status,
    start,
    stop,
    async restart(name, configFile) {
      await stop(name);
      return start(name, configFile);
    },
    async check(name, file) {
      const { user, error } = daemonUser(name);
      if (error) return { checked: false, ok: false, checker: null, output: error, line: null };
      return runChecker(name, file, user);
    },
    logs: async (name) => [...entry(name).log],
    async dnsStats(): Promise<DnsStats> {
      const running = (await status('unbound')).running;
      const file = entry('unbound').configFile;
      const empty: DnsStats = {
        ts: Date.now(), running, queries_total: 0, simulated: false,
        cache: { entries: 0, max_entries: 0, hits: 0, misses: 0, insertions: 0, evictions: 0, hit_rate_pct: 0 },
        rpz: { rules: 0, zones: 0, hits: 0, per_zone: [] },
      };
      if (!running || !file) return empty;
      const result = await runCommand(findProgram('unbound-control') ?? 'unbound-control', ['-c', file, 'stats_noreset'], { timeoutMs: 5000 });
      if (result.code !== 0) return empty;
      const stats = parseUnboundStats(result.stdout);
      const hits = stats['total.num.cachehits'] ?? 0;
      const misses = stats['total.num.cachemiss'] ?? 0;
      const queries = stats['total.num.queries'] ?? 0;
      const config = await configOf('unbound');
      const zones = [...config.matchAll(/^\s*include:\s*"?([^"\n]+)"?/gm)].map((m) => m[1]);
      const perZone = await Promise.all(zones.map(async (zone) => ({
        name: zone.split('/').pop()!.replace(/\.conf$/, ''),
        rules: ((await readFile(zone, 'utf8').catch(() => '')).match(/^\s*local-zone:/gm) ?? []).length,
        hits: 0,
      })));
      return {
        ...empty,
        queries_total: queries,
        cache: {
          entries: stats['msg.cache.count'] ?? 0, max_entries: 0, hits, misses, insertions: misses, evictions: 0,
          hit_rate_pct: queries ? Math.round((hits / queries) * 1000) / 10 : 0,
        },
        rpz: { rules: perZone.reduce((n, z) => n + z.rules, 0), zones: perZone.length, hits: stats['num.rpz.action.nxdomain'] ?? 0, per_zone: perZone },
      };
    },
    async dhcpLeases() {
      const config = await configOf('kea-dhcp4');
      let parsed: { Dhcp4?: { 'lease-database'?: { name?: string }; subnet4?: { id: number; subnet: string }[] } };
      try {
        parsed = JSON.parse(config);
      } catch {
        return [];
      }
      const file = parsed.Dhcp4?.['lease-database']?.name;
      if (!file) return [];
      const subnets = new Map((parsed.Dhcp4?.subnet4 ?? []).map((s) => [s.id, s.subnet]));
      return parseKeaLeaseCsv(await readFile(file, 'utf8').catch(() => ''), subnets);
    },
    async releaseDhcpLease(ip) {
      const config = await configOf('kea-dhcp4');
      let socketPath: string | undefined;
      try {
        socketPath = JSON.parse(config).Dhcp4?.['control-socket']?.['socket-name'];
      } catch {
        return false;
      }
      if (!socketPath) return false;
      const answer = await keaCommand(socketPath, { command: 'lease4-del', arguments: { 'ip-address': ip } }).catch(() => null);
      return answer?.result === 0;
    },
    async timeTracking(): Promise<TimeTracking> {
      const config = await configOf('chronyd');
      const socket = /^bindcmdaddress\s+(\/\S+)/m.exec(config)?.[1];
      const running = (await status('chronyd')).running;
      if (!running || !socket) return { synchronized: false, reference: null, stratum: 0, offset_ms: 0, sources: [] };
      const chronyc = findProgram('chronyc') ?? 'chronyc';
      const sources = parseChronySources((await runCommand(chronyc, ['-c', '-n', '-h', socket, 'sources'], { timeoutMs: 5000 })).stdout);
      const tracking = (await runCommand(chronyc, ['-c', '-n', '-h', socket, 'tracking'], { timeoutMs: 5000 })).stdout.split(',');
      const selected = sources.find((s) => s.state === 'selected');
      return {
        synchronized: !!selected,
        reference: selected?.address ?? null,
        stratum: Number(tracking[2]) || 0,
        offset_ms: Math.round(Number(tracking[4] ?? 0) * 1e6) / 1e3,
        sources,
      };
    },
    async closeAll() {
      for (const name of supervised.keys()) await stop(name);
    },
  };
}

/** One JSON command over Kea's unix control socket. */
function keaCommand(socketPath: string, command: object): Promise<{ result: number; text?: string }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let data = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('kea control socket timed out')));
    socket.on('connect', () => socket.write(JSON.stringify(command)));
    socket.on('data', (chunk) => {
      data += chunk.toString();
      try {
        resolve(JSON.parse(data));
        socket.end();
      } catch {
        // wait for the rest
      }
    });
    socket.on('error', reject);
  });
}
