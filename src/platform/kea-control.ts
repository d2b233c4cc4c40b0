/**
 * Kea's control channel: one JSON command over the unix socket named in the running configuration
 * (`control-socket`), and the readers of its answers: leases (`lease4-get-all`, from the lease_cmds hook),
 * statistics (`statistic-get-all`, built in).
 */
import { createConnection } from 'node:net';
import type { DhcpHaState, DhcpLease, DhcpStatistics } from './daemons.js';

export interface KeaAnswer {
  /** 0 success, 1 error, 2 unsupported command, 3 empty (nothing found). */
  result: number;
  text?: string;
  arguments?: Record<string, unknown>;
}

/** The parts of a rendered kea-dhcp4.conf the readers need. */
export interface KeaRunningConfig {
  socket: string | null;
  subnets: Map<number, string>;
}

export function readKeaConfig(text: string): KeaRunningConfig {
  try {
    type Server = { 'control-socket'?: { 'socket-name'?: string } };
    const parsed = JSON.parse(text) as { Dhcp4?: Server & { subnet4?: { id: number; subnet: string }[] }; DhcpDdns?: Server };
    return {
      socket: (parsed.Dhcp4 ?? parsed.DhcpDdns)?.['control-socket']?.['socket-name'] ?? null,
      subnets: new Map((parsed.Dhcp4?.subnet4 ?? []).map((s) => [s.id, s.subnet])),
    };
  } catch {
    return { socket: null, subnets: new Map() };
  }
}

/** Sends one command and resolves with Kea's answer (Kea closes the connection after answering). */
export function keaCommand(socketPath: string, command: string, args?: Record<string, unknown>, timeoutMs = 5000): Promise<KeaAnswer> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (error) return reject(error);
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const parsed = JSON.parse(text) as KeaAnswer | KeaAnswer[];
        resolve(Array.isArray(parsed) ? parsed[0] : parsed);
      } catch {
        reject(new Error(`kea answered ${command} with text that is not JSON`));
      }
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`kea did not answer ${command} within ${timeoutMs} ms`)));
    socket.on('connect', () => socket.write(JSON.stringify(args ? { command, arguments: args } : { command })));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish(null));
    socket.on('error', (error) => finish(error));
  });
}

interface KeaLease {
  'ip-address': string;
  'hw-address'?: string;
  hostname?: string;
  'client-id'?: string;
  state?: number;
  'valid-lft'?: number;
  cltt?: number;
  'subnet-id'?: number;
}

const LEASE_STATES: Record<number, string> = { 0: 'bound', 1: 'declined', 2: 'expired' };

/** The leases of a `lease4-get-all` answer (result 3, "no leases", is an empty list); expired ones are left out. */
export function leasesOf(answer: KeaAnswer, subnets: Map<number, string>): DhcpLease[] {
  if (answer.result === 3) return [];
  if (answer.result !== 0) throw new Error(`kea refused lease4-get-all (result ${answer.result})`);
  const leases = ((answer.arguments?.leases as KeaLease[] | undefined) ?? []).filter((lease) => lease.state !== 2);
  return leases.map((lease) => {
    const lifetime = lease['valid-lft'] ?? 0;
    const start = lease.cltt ?? 0;
    return {
      ip_address: lease['ip-address'],
      mac_address: (lease['hw-address'] ?? '').toLowerCase(),
      hostname: lease.hostname || null,
      client_id: lease['client-id'] || null,
      state: LEASE_STATES[lease.state ?? 0] ?? 'unknown',
      lease_time: lifetime,
      start_time: start,
      expire_time: start + lifetime,
      subnet: subnets.get(lease['subnet-id'] ?? -1) ?? '',
    };
  });
}

/** The high-availability part of a `status-get` answer, or null when the HA hook is not loaded. */
export function highAvailabilityOf(answer: KeaAnswer): DhcpHaState | null {
  if (answer.result !== 0) return null;
  type Servers = { local?: { role?: string; state?: string }; remote?: { 'last-state'?: string; 'in-touch'?: boolean } };
  const relationship = (answer.arguments?.['high-availability'] as { 'ha-mode'?: string; 'ha-servers'?: Servers }[] | undefined)?.[0];
  if (!relationship) return null;
  const servers = relationship['ha-servers'] ?? {};
  return {
    mode: relationship['ha-mode'] ?? 'unknown',
    role: servers.local?.role ?? 'unknown',
    state: servers.local?.state ?? 'unknown',
    peer_state: servers.remote?.['last-state'] || null,
    in_touch: servers.remote?.['in-touch'] === true,
  };
}

/** The newest value of each statistic of a `statistic-get-all` answer (each is a list of [value, time] samples). */
export function statisticsOf(answer: KeaAnswer, subnets: Map<number, string>): DhcpStatistics {
  if (answer.result !== 0) throw new Error(`kea refused statistic-get-all (result ${answer.result})`);
  const latest = new Map<string, number>();
  for (const [name, samples] of Object.entries(answer.arguments ?? {})) {
    const value = Array.isArray(samples) && Array.isArray(samples[0]) ? Number(samples[0][0]) : NaN;
    if (Number.isFinite(value)) latest.set(name, value);
  }
  const counters: Record<string, number> = {};
  const bySubnet = new Map<number, { total: number; assigned: number; declined: number }>();
  for (const [name, value] of latest) {
    const match = /^subnet\[(\d+)\]\.(total-addresses|assigned-addresses|declined-addresses)$/.exec(name);
    if (!match) {
      if (!name.startsWith('subnet[')) counters[name] = value;
      continue;
    }
    const entry = bySubnet.get(Number(match[1])) ?? { total: 0, assigned: 0, declined: 0 };
    if (match[2] === 'total-addresses') entry.total = value;
    else if (match[2] === 'assigned-addresses') entry.assigned = value;
    else entry.declined = value;
    bySubnet.set(Number(match[1]), entry);
  }
  return {
    subnets: [...bySubnet.entries()]
      .filter(([id]) => subnets.has(id))
      .map(([id, s]) => ({ subnet: subnets.get(id)!, total_addresses: s.total, assigned_addresses: s.assigned, declined_addresses: s.declined })),
    counters,
  };
}
