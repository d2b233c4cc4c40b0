import type { Clock } from '../core/clock.js';
import type { Permission } from '../core/permissions.js';
import type { ConnectionTable } from '../platform/connections.js';
import { ConnectionsDiffer, topFlows, FRAME_FLOW_LIMIT } from './flow-frames.js';

/** What a socket must offer: `ws`'s WebSocket fits; tests may use their own. */
export interface FrameSocket {
  send(data: Buffer, callback: (error?: Error) => void): void;
  terminate(): void;
  /** Whether the account behind the socket holds a permission (event frames that need one go only where it does). */
  holds?(permission: Permission): boolean;
}

export interface TickInput {
  table: ConnectionTable;
  /** Every other frame field (status, traffic, top talkers, alerts, summary...), serialised as is. */
  fields: Record<string, unknown>;
}

export interface BroadcasterOptions {
  clock: Clock;
  collect: () => Promise<TickInput>;
  /** The `{"type":"history",...}` batch a new socket receives first. */
  history: () => Promise<Buffer>;
  maxSockets?: number;
  tickMs?: number;
  busyTickMs?: number;
  /** Above this many states the tick slows down. */
  busyStates?: number;
  slowConsumerMs?: number;
  onError?: (error: unknown) => void;
}

interface Client {
  socket: FrameSocket;
  /** Holds the connections list of the last broadcast frame, so a delta applies to it. */
  synced: boolean;
  /** Frames handed to the socket whose write has not completed. */
  pending: number;
  /** When the oldest of those was handed over. */
  pendingSince: number;
  closed: boolean;
}

export interface FrameStats {
  seq: number;
  fullBytes: number;
  deltaBytes: number | null;
  sentFull: number;
  sentDelta: number;
  skipped: number;
  closedSlow: number;
  states: number;
}

/**
 * The dashboard broadcaster: per tick it computes ONE frame (two serialisations at most: the full
 * `connections` array and the delta against the previous tick), and hands the same bytes to every socket.
 * A socket still busy with an earlier frame is skipped (and gets a full frame once it drains); one that has
 * not taken a frame within 5 s is closed. The tick is driven by the injected clock: `poll()` ticks when due,
 * `start()` adds a timer that calls it.
 */
export class DashboardBroadcaster {
  readonly maxSockets: number;
  private readonly tickMs: number;
  private readonly busyTickMs: number;
  private readonly busyStates: number;
  private readonly slowConsumerMs: number;
  private readonly clients = new Set<Client>();
  private readonly bySocket = new Map<FrameSocket, Client>();
  private readonly differ = new ConnectionsDiffer();
  private reserved = 0;
  private seq = 0;
  private last: { seq: number; full: Buffer; delta: Buffer } | null = null;
  private ticking: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** When the next tick is due (clock milliseconds). */
  nextTickAt = 0;
  intervalMs: number;
  lastStats: FrameStats | null = null;
  closedSlowTotal = 0;

  constructor(private readonly options: BroadcasterOptions) {
    this.maxSockets = options.maxSockets ?? 64;
    this.tickMs = options.tickMs ?? 1000;
    this.busyTickMs = options.busyTickMs ?? 5000;
    this.busyStates = options.busyStates ?? 5000;
    this.slowConsumerMs = options.slowConsumerMs ?? 5000;
    this.intervalMs = this.tickMs;
  }

  get socketCount(): number {
    return this.clients.size;
  }

  /** Claims a slot before the upgrade, so the 65th connection is refused while the others are mid-handshake. */
  tryReserve(): boolean {
    if (this.stopped || this.clients.size + this.reserved >= this.maxSockets) return false;
    this.reserved++;
    return true;
  }

  release(): void {
    if (this.reserved > 0) this.reserved--;
  }

  /** Turns a reservation into a live socket: history batch first, then the latest full frame. */
  async attach(socket: FrameSocket): Promise<void> {
    this.release();
    const client: Client = { socket, synced: false, pending: 0, pendingSince: 0, closed: false };
    this.clients.add(client);
    this.bySocket.set(socket, client);
    let history: Buffer;
    try {
      history = await this.options.history();
    } catch (error) {
      this.options.onError?.(error);
      history = Buffer.from('{"type":"history","data":[]}');
    }
    if (client.closed) return;
    this.deliver(client, history);
    if (this.last) {
      this.deliver(client, this.last.full);
      client.synced = true;
    }
  }

  detach(socket: FrameSocket): void {
    const client = this.bySocket.get(socket);
    if (!client) return;
    client.closed = true;
    this.clients.delete(client);
    this.bySocket.delete(socket);
  }

  private deliver(client: Client, data: Buffer): void {
    if (client.pending === 0) client.pendingSince = this.options.clock.now();
    client.pending++;
    client.socket.send(data, () => {
      client.pending--;
      if (client.pending === 0) client.pendingSince = 0;
    });
  }

  /**
   * Hands an event frame (a cluster role change, say: `{"channel":"cluster","event":{...}}`) now, between the
   * ticks' frames, to every socket whose account holds `permission`; the frames' order per socket is kept.
   */
  broadcastEvent(frame: Record<string, unknown>, permission: Permission): void {
    const data = Buffer.from(JSON.stringify(frame));
    for (const client of this.clients) if (client.socket.holds?.(permission)) this.deliver(client, data);
  }

  /** Ticks when the clock says one is due; returns whether it ticked. */
  async poll(): Promise<boolean> {
    if (this.options.clock.now() < this.nextTickAt) return false;
    await this.tick();
    return true;
  }

  /** Computes and broadcasts one frame now (overlapping calls share the tick in flight). */
  tick(): Promise<void> {
    this.ticking ??= this.runTick().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async runTick(): Promise<void> {
    const { clock } = this.options;
    const startedAt = clock.now();
    const input = await this.options.collect();
    const seq = ++this.seq;
    const top = topFlows(input.table.flows, FRAME_FLOW_LIMIT);
    const connections = this.differ.next(top);
    const head = JSON.stringify({ type: 'status_update', seq, ts: startedAt, ...input.fields, connections_total: input.table.total });
    const base = head.slice(0, -1);
    const full = Buffer.from(`${base},"connections":${connections.full}}`);
    const delta = connections.delta === null ? full : Buffer.from(`${base},"connections_delta":${connections.delta}}`);
    this.last = { seq, full, delta };
    this.intervalMs = input.table.total > this.busyStates ? this.busyTickMs : this.tickMs;
    this.nextTickAt = startedAt + this.intervalMs;

    const stats: FrameStats = {
      seq, fullBytes: full.length, deltaBytes: connections.delta === null ? null : delta.length,
      sentFull: 0, sentDelta: 0, skipped: 0, closedSlow: 0, states: input.table.total,
    };
    const now = clock.now();
    for (const client of this.clients) {
      if (client.pending > 0) {
        if (now - client.pendingSince >= this.slowConsumerMs) {
          stats.closedSlow++;
          this.closedSlowTotal++;
          this.detach(client.socket);
          client.socket.terminate();
        } else {
          // fell behind: skip this frame; its next frame carries the full list
          client.synced = false;
          stats.skipped++;
        }
        continue;
      }
      if (client.synced) stats.sentDelta++;
      else stats.sentFull++;
      this.deliver(client, client.synced ? delta : full);
      client.synced = true;
    }
    this.lastStats = stats;
  }

  /** Schedules ticks on a real timer (production); tests drive `poll()`/`tick()` with a manual clock instead. */
  start(): void {
    this.stopped = false;
    const loop = () => {
      if (this.stopped) return;
      this.poll()
        .catch((error: unknown) => {
          this.options.onError?.(error);
          this.nextTickAt = this.options.clock.now() + this.intervalMs;
        })
        .finally(() => {
          if (this.stopped) return;
          const wait = Math.max(20, Math.min(this.nextTickAt - this.options.clock.now(), this.busyTickMs));
          this.timer = setTimeout(loop, wait);
          this.timer.unref();
        });
    };
    loop();
  }

  /** Stops ticking and closes every socket (1001: going away). */
  async stop(closeSocket: (socket: FrameSocket) => void = (s) => s.terminate()): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
    for (const client of [...this.clients]) {
      this.detach(client.socket);
      closeSocket(client.socket);
    }
  }
}
