import type { NewConnection } from '../connections.js';
import { PerSecondBudget } from '../per-second-budget.js';
import { SupervisedProcess } from '../supervised-process.js';
import { parseConntrackLine } from './conntrack.js';

/** A busy box opens thousands of connections a second: at most this many are announced, the rest counted as dropped. */
export const NEW_CONNECTIONS_PER_SECOND = 100;

/**
 * One line of `conntrack -E -e NEW -o extended,id`: `[NEW] ipv4 2 tcp 6 120 SYN_SENT src=… dst=… sport=… dport=…`
 * — the `-L` line behind an event tag. Only the original tuple (who opened it, to where) is kept.
 */
export function parseConntrackNewEvent(line: string): Omit<NewConnection, 'dropped'> | null {
  const tagged = /^\s*\[NEW\]\s+/.exec(line);
  if (!tagged) return null;
  const flow = parseConntrackLine(line.slice(tagged[0].length));
  if (!flow || !flow.protocol || !flow.src_addr || !flow.dst_addr) return null;
  return { id: flow.id, protocol: flow.protocol, src_addr: flow.src_addr, src_port: flow.src_port, dst_addr: flow.dst_addr, dst_port: flow.dst_port };
}

/**
 * Follows the kernel's conntrack NEW events of Bulwark's network namespace through `conntrack -E` (package
 * conntrack), supervised (restarted with backoff when it dies), while anyone listens.
 */
export class ConntrackNewEvents {
  private readonly listeners = new Set<(connection: NewConnection) => void>();
  private readonly budget = new PerSecondBudget(NEW_CONNECTIONS_PER_SECOND);
  private process: SupervisedProcess | null = null;

  listen(listener: (connection: NewConnection) => void): () => void {
    this.listeners.add(listener);
    if (!this.process) this.begin();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) void this.stop();
    };
  }

  private begin(): void {
    this.process = new SupervisedProcess({
      label: 'conntrack events', command: 'conntrack', args: ['-E', '-e', 'NEW', '-o', 'extended,id'],
      ready: async () => true,
      // One line per connection: for the listeners only, never kept as daemon lines nor announced as daemon.log.
      privateLine: () => true,
      onLine: (line) => this.take(line),
    });
    this.process.start().catch(() => undefined);
  }

  private take(line: string): void {
    const connection = parseConntrackNewEvent(line);
    if (!connection || !this.budget.take()) return;
    for (const listener of this.listeners) listener({ ...connection, dropped: this.budget.dropped });
  }

  async stop(): Promise<void> {
    const running = this.process;
    this.process = null;
    await running?.stop();
  }
}
