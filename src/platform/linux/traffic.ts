import { readdir, readFile, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import type { BlockedPacket, ConnectionTable, Flow, InterfaceCounters, NewConnection, RuleCounter, TrafficSource } from '../connections.js';
import { NOT_RUNNABLE, runCommand } from '../exec.js';
import { parseConntrack } from './conntrack.js';
import { ConntrackNewEvents } from './conntrack-events.js';
import { parseNftRuleCounters } from './nft-listing.js';
import { UlogdBlockedReader } from './ulogd-reader.js';

const SYSCTL = '/proc/sys/net/netfilter';

async function readNumber(path: string): Promise<number> {
  return readFile(path, 'utf8').then((text) => Number(text.trim()) || 0, () => 0);
}

/** Reads counters from /sys/class/net/<name>/statistics; rx is "in", tx is "out". */
export async function readInterfaceCounters(root = '/sys/class/net'): Promise<InterfaceCounters[]> {
  const names = await readdir(root).catch(() => [] as string[]);
  return Promise.all(
    names.sort().map(async (name) => {
      const stat = (field: string) => readNumber(`${root}/${name}/statistics/${field}`);
      const [bytesIn, bytesOut, packetsIn, packetsOut] = await Promise.all([stat('rx_bytes'), stat('tx_bytes'), stat('rx_packets'), stat('tx_packets')]);
      return { name, bytes_in: bytesIn, bytes_out: bytesOut, packets_in: packetsIn, packets_out: packetsOut };
    }),
  );
}


/**
 * Runs `conntrack -L` and parses its output chunk by chunk as it arrives, so 100,000 states never block the
 * event loop in one piece (the whole parse costs ~150 ms of CPU, spread over hundreds of small turns).
 */
function streamConntrack(timeoutMs = 20_000): Promise<{ flows: Flow[]; code: number; stderr: string }> {
  return new Promise((resolve) => {
    const flows: Flow[] = [];
    let partial = '';
    let stderr = '';
    const child = spawn('conntrack', ['-L', '-o', 'extended,id,ktimestamp'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const text = partial + chunk;
      const cut = text.lastIndexOf('\n');
      if (cut === -1) {
        partial = text;
        return;
      }
      partial = text.slice(cut + 1);
      for (const flow of parseConntrack(text.slice(0, cut))) flows.push(flow);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.once('error', (error) => resolve({ flows, code: NOT_RUNNABLE, stderr: error.message }));
    child.once('close', (code) => {
      if (partial) for (const flow of parseConntrack(partial)) flows.push(flow);
      resolve({ flows, code: code ?? 1, stderr });
    });
  });
}

/** conntrack (with accounting and timestamps switched on), sysfs counters, nftables counters, ulogd2 for NFLOG. */
export class LinuxTraffic implements TrafficSource {
  readonly simulated = false;
  private readonly blockedReader = new UlogdBlockedReader();
  private readonly newConnections = new ConntrackNewEvents();
  private accountingEnabled = false;

  constructor(private readonly table = 'bulwark') {}

  /** Byte and packet counters and flow ages need nf_conntrack_acct and nf_conntrack_timestamp (per namespace). */
  private async enableAccounting(): Promise<void> {
    if (this.accountingEnabled) return;
    this.accountingEnabled = true;
    for (const name of ['nf_conntrack_acct', 'nf_conntrack_timestamp']) {
      if ((await readNumber(`${SYSCTL}/${name}`)) !== 1) await writeFile(`${SYSCTL}/${name}`, '1').catch(() => undefined);
    }
  }

  async connections(): Promise<ConnectionTable> {
    await this.enableAccounting();
    const listed = await streamConntrack();
    const count = await readNumber(`${SYSCTL}/nf_conntrack_count`);
    if (listed.code !== 0) return { flows: listed.flows, total: Math.max(count, listed.flows.length), error: listed.stderr.trim() || `conntrack exited ${listed.code}` };
    return { flows: listed.flows, total: Math.max(count, listed.flows.length) };
  }

  interfaces(): Promise<InterfaceCounters[]> {
    return readInterfaceCounters();
  }

  async ruleCounters(): Promise<RuleCounter[]> {
    const listed = await runCommand('nft', ['-j', 'list', 'table', 'inet', this.table]);
    if (listed.code !== 0) return [];
    return parseNftRuleCounters(listed.stdout, this.table);
  }

  blocked(limit: number) {
    return this.blockedReader.blocked(limit);
  }

  open(options: { dataDir: string }): Promise<void> {
    return this.blockedReader.open(options.dataDir);
  }

  blockedLogStatus() {
    return this.blockedReader.status();
  }

  onBlocked(listener: (packet: BlockedPacket) => void) {
    return this.blockedReader.onBlocked(listener);
  }

  onNewConnection(listener: (connection: NewConnection) => void) {
    return this.newConnections.listen(listener);
  }

  /** The API process stops: ulogd keeps running for the next one to adopt; the conntrack event reader ends with us. */
  async close(): Promise<void> {
    await this.newConnections.stop();
    return this.blockedReader.close();
  }

  /** Stops ulogd (every service stopped on purpose). */
  stopReaders(): Promise<void> {
    return this.blockedReader.stop();
  }
}
