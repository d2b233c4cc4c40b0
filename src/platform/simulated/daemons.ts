import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import type { DaemonName, DaemonStatus, Daemons, DhcpLease, DnsStats, TimeTracking } from '../daemons.js';
import { daemonVersion, runChecker } from '../daemon-tools.js';
import { ipv4ToNumber, numberToIpv4 } from '../../core/ip.js';
import { unboundEnvironment } from '../unbound-python.js';
import { describeMissing } from '../debian-packages.js';
import { reportDaemonEvent } from '../daemon-events.js';
import { blocklistDataFile, blocklistZones, dnsStatsOf } from '../unbound-state.js';

interface SimulatedDaemon {
  running: boolean;
  startedAt: number | null;
  configFile: string | null;
  starts: number;
  log: string[];
}

const MAX_LOG = 5000;

/** Reads the rendered file the daemon would run with; the simulation's state is derived from it. */
function readConfig(file: string | null): string {
  if (!file) return '';
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Leases a Kea server would hand out for the rendered configuration: every reservation, plus two dynamic leases per pool. */
export function simulatedLeases(keaConfig: string, nowSeconds: number): DhcpLease[] {
  let parsed: { Dhcp4?: { 'valid-lifetime'?: number; subnet4?: Record<string, unknown>[] } };
  try {
    parsed = JSON.parse(keaConfig);
  } catch {
    return [];
  }
  const leases: DhcpLease[] = [];
  const subnets = parsed.Dhcp4?.subnet4 ?? [];
  for (const subnet of subnets) {
    const lifetime = Number(subnet['valid-lifetime'] ?? parsed.Dhcp4?.['valid-lifetime'] ?? 3600);
    const network = String(subnet.subnet);
    const reservations = (subnet.reservations as Record<string, string>[] | undefined) ?? [];
    for (const reservation of reservations) {
      leases.push({
        ip_address: reservation['ip-address'],
        mac_address: reservation['hw-address'] ?? '',
        hostname: reservation.hostname ?? null,
        client_id: reservation['client-id'] ?? null,
        state: 'bound',
        lease_time: lifetime,
        start_time: nowSeconds - 60,
        expire_time: nowSeconds - 60 + lifetime,
        subnet: network,
      });
    }
    const reserved = new Set(reservations.map((r) => r['ip-address']));
    const pools = (subnet.pools as { pool: string }[] | undefined) ?? [];
    pools.forEach((pool, poolIndex) => {
      const [first] = pool.pool.split('-').map((s) => s.trim());
      const start = ipv4ToNumber(first);
      if (start === null) return;
      for (let i = 0, made = 0; made < 2 && i < 16; i++) {
        const ip = numberToIpv4(start + i);
        if (reserved.has(ip)) continue;
        made++;
        const octet = (n: number) => n.toString(16).padStart(2, '0');
        leases.push({
          ip_address: ip,
          mac_address: `02:00:5e:${octet(poolIndex)}:${octet((start + i) >> 8 & 0xff)}:${octet((start + i) & 0xff)}`,
          hostname: `sim-client-${ip.split('.').join('-')}`,
          client_id: null,
          state: 'bound',
          lease_time: lifetime,
          start_time: nowSeconds - 120,
          expire_time: nowSeconds - 120 + lifetime,
          subnet: network,
        });
      }
    });
  }
  return leases;
}

/** Keeps daemon state in memory, derived from the files that were rendered; never starts a process. */
export function createSimulatedDaemons(): Daemons {
  const daemons = new Map<DaemonName, SimulatedDaemon>();
  const released = new Set<string>();
  const lineListeners = new Set<(name: DaemonName, line: string) => void>();
  let dnsQueries = 0;
  const state = (name: DaemonName): SimulatedDaemon => {
    let daemon = daemons.get(name);
    if (!daemon) {
      daemon = { running: false, startedAt: null, configFile: null, starts: 0, log: [] };
      daemons.set(name, daemon);
    }
    return daemon;
  };
  const log = (name: DaemonName, message: string) => {
    const daemon = state(name);
    const line = `${new Date().toISOString()} ${name}[simulated]: ${message}`;
    daemon.log.push(line);
    for (const listener of lineListeners) listener(name, line);
    // Reported like a real supervised process's line (the local log writer and syslog read the bus).
    reportDaemonEvent({ kind: 'log', daemon: name, line });
    if (daemon.log.length > MAX_LOG) daemon.log.splice(0, daemon.log.length - MAX_LOG);
  };
  const status = async (name: DaemonName): Promise<DaemonStatus> => {
    const daemon = state(name);
    return {
      name,
      running: daemon.running,
      pid: null,
      started_at: daemon.startedAt === null ? null : new Date(daemon.startedAt).toISOString(),
      version: `${await daemonVersion(name)} (simulated)`,
      config_file: daemon.configFile,
      starts: daemon.starts,
      simulated: true,
      last_error: null,
      missing: null,
    };
  };
  const start = async (name: DaemonName, configFile: string) => {
    const daemon = state(name);
    if (daemon.configFile !== configFile || !daemon.running) released.clear();
    daemon.configFile = configFile;
    if (!daemon.running) {
      daemon.running = true;
      daemon.startedAt = Date.now();
      daemon.starts++;
      log(name, `started with ${configFile} (no process: simulated platform)`);
    }
    return status(name);
  };
  const stop = async (name: DaemonName) => {
    const daemon = state(name);
    if (daemon.running) log(name, 'stopped');
    daemon.running = false;
    return status(name);
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
      if (name === 'unbound') {
        // The real checker runs when it is installed; a blocklist filter needs python3-unbound as well.
        const environment = unboundEnvironment(readConfig(file));
        if (environment.missing) return { checked: false, ok: true, checker: null, output: `${describeMissing(environment.missing)}; the file was not validated`, line: null };
        return runChecker(name, file, { env: environment.env });
      }
      if (name !== 'kea-dhcp4') return runChecker(name, file);
      // kea-dhcp4 -t insists that the listed interfaces exist on this host; the simulated interfaces do not,
      // so the real checker validates a copy listening on "*" and says so.
      let text: string;
      let config: { Dhcp4?: { 'interfaces-config'?: { interfaces?: string[] } } };
      try {
        text = readFileSync(file, 'utf8');
        config = JSON.parse(text);
      } catch {
        return runChecker(name, file);
      }
      const listed = config.Dhcp4?.['interfaces-config']?.interfaces ?? [];
      if (config.Dhcp4?.['interfaces-config']) config.Dhcp4['interfaces-config'].interfaces = ['*'];
      const copy = `${file}.simulated-check`;
      const copyText = `${JSON.stringify(config, null, 2)}\n`;
      writeFileSync(copy, copyText);
      try {
        const result = await runChecker(name, copy);
        const note = listed.length ? `; interfaces ${listed.join(', ')} are simulated and were checked as "*"` : '';
        const line = result.line ? copyLineToOriginal(result.line, copyText, text) : null;
        const output = result.ok || line === null ? result.output : `${result.output.replace(/ at line \d+$/, '')} at line ${line}`;
        return { ...result, line, checker: result.checker?.replace(copy, file) ?? null, output: `${output}${note}` };
      } finally {
        rmSync(copy, { force: true });
      }
    },
    logs: async (name) => [...state(name).log],
    leaseEventLines: () => () => undefined,
    logLines(listener) {
      lineListeners.add(listener);
      return () => lineListeners.delete(listener);
    },
    dnsEvents: () => () => undefined,
    async dnsStats(): Promise<DnsStats> {
      const daemon = state('unbound');
      const config = daemon.running ? readConfig(daemon.configFile) : '';
      const dataFile = await blocklistDataFile(config);
      const zones = dataFile ? await blocklistZones(dataFile) : [];
      // Queries accumulate while the simulated resolver runs, so consecutive reads show movement.
      if (daemon.running) dnsQueries += 17;
      const hits = Math.floor(dnsQueries * 0.7);
      const stats = dnsStatsOf({ 'total.num.queries': dnsQueries, 'total.num.cachehits': hits, 'total.num.cachemiss': dnsQueries - hits }, zones, new Map());
      return {
        ...stats,
        ts: Date.now(),
        running: daemon.running,
        cache: { ...stats.cache, entries: daemon.running ? Math.min(dnsQueries, 4096) : 0, max_entries: 1_000_000 },
        simulated: true,
      };
    },
    async dhcpLeases() {
      const daemon = state('kea-dhcp4');
      if (!daemon.running) return [];
      return simulatedLeases(readConfig(daemon.configFile), Math.floor(Date.now() / 1000)).filter((l) => !released.has(l.ip_address));
    },
    async dhcpStatistics() {
      const daemon = state('kea-dhcp4');
      if (!daemon.running) return null;
      const leases = await this.dhcpLeases();
      let parsed: { Dhcp4?: { subnet4?: { subnet: string; pools?: { pool: string }[] }[] } } = {};
      try {
        parsed = JSON.parse(readConfig(daemon.configFile));
      } catch {
        return null;
      }
      const subnets = (parsed.Dhcp4?.subnet4 ?? []).map((subnet) => {
        const ranges = (subnet.pools ?? []).map(({ pool }) => pool.split('-').map((s) => ipv4ToNumber(s.trim()) ?? 0));
        const total = ranges.reduce((sum, [first, last]) => sum + last - first + 1, 0);
        // Like Kea's assigned-addresses of a pool: leases of addresses inside the pools.
        const assigned = leases.filter((lease) => {
          const address = ipv4ToNumber(lease.ip_address) ?? -1;
          return ranges.some(([first, last]) => address >= first && address <= last);
        }).length;
        return { subnet: subnet.subnet, total_addresses: total, assigned_addresses: assigned, declined_addresses: 0 };
      });
      return { subnets, counters: {} };
    },
    dhcpHighAvailability: async () => null,
    async releaseDhcpLease(ip) {
      const leases = await this.dhcpLeases();
      if (!leases.some((l) => l.ip_address === ip)) return false;
      released.add(ip);
      log('kea-dhcp4', `lease ${ip} released`);
      return true;
    },
    async timeTracking(): Promise<TimeTracking> {
      const daemon = state('chronyd');
      const config = daemon.running ? readConfig(daemon.configFile) : '';
      const addresses = [...config.matchAll(/^(?:server|pool)\s+(\S+)/gm)].map((m) => m[1]);
      const sources = addresses.map((address, index) => ({
        address,
        state: index === 0 ? ('selected' as const) : ('candidate' as const),
        stratum: 2,
        offset_ms: Math.round((index + 1) * 0.137 * 1000) / 1000,
        reach: 377,
      }));
      return {
        synchronized: sources.length > 0,
        reference: sources[0]?.address ?? null,
        stratum: sources.length > 0 ? 3 : 0,
        offset_ms: sources[0]?.offset_ms ?? 0,
        sources,
      };
    },
  };
}

/**
 * The copy checked for simulated Kea differs from the rendered file only in its interfaces array; a line the
 * checker names in the copy is moved back to the same place in the rendered file.
 */
function copyLineToOriginal(line: number, copyText: string, originalText: string): number {
  const span = (text: string) => {
    const lines = text.split('\n');
    const start = lines.findIndex((l) => /^\s*"interfaces": \[/.test(l));
    if (start < 0) return null;
    const end = /\]\s*,?$/.test(lines[start]) ? start : lines.findIndex((l, i) => i > start && /^\s*\],?$/.test(l));
    return end < 0 ? null : { start: start + 1, end: end + 1 };
  };
  const copy = span(copyText);
  const original = span(originalText);
  if (!copy || !original || line < copy.start) return line;
  if (line <= copy.end) return original.start;
  return line - copy.end + original.end;
}
