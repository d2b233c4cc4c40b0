import { ApiError, type ApiClient } from '../api/client';

export interface Connection {
  protocol: string;
  src_addr: string;
  src_port: number | null;
  dst_addr: string;
  dst_port: number | null;
  state: string;
  bytes_in: number;
  bytes_out: number;
}

/** One `status_update` frame of the dashboard socket (the fields the console shows). */
export interface StatusFrame {
  type: 'status_update';
  seq?: number;
  ts: number;
  simulated?: boolean;
  status?: Record<string, number | boolean>;
  system?: { cpu_usage?: number; cpu_cores?: number; memory_total?: number; memory_used?: number; memory_pct?: number; uptime_secs?: number; hostname?: string };
  interfaces?: { name: string; bps_in: number; bps_out: number; bytes_in: number; bytes_out: number }[];
  traffic?: { bps_in?: number; bps_out?: number; pps_in?: number; pps_out?: number };
  top_talkers?: { addr: string; bytes_in: number; bytes_out: number; flows: number; bytes: number }[];
  ids_alerts?: { new_alerts: number; alerts_total: number; recent_alerts: Record<string, unknown>[] };
  /** Assertions whose last result says they do not hold (continuous checking). */
  failing_assertions?: { id: string; name: string; outcome: string; expect: string; decided_by: string; detail: string; checked_at: string }[];
  connection_summary?: { total: number; tcp?: number; udp?: number; icmp?: number; other?: number };
  blocked?: Record<string, unknown>[];
  connections_total?: number;
  connections?: Connection[];
  connections_delta?: { add: Connection[]; update: Connection[]; remove: string[] };
}

export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'refused';

export interface FeedListener {
  history(frames: StatusFrame[]): void;
  frame(frame: StatusFrame, connections: Connection[]): void;
  state(state: FeedState, detail?: string): void;
}

/** The key the server's deltas use: `proto|src:port|dst:port`, IPv6 unbracketed. */
export const connectionKey = (c: Connection) => `${c.protocol}|${c.src_addr}:${c.src_port ?? ''}|${c.dst_addr}:${c.dst_port ?? ''}`;

/** The first retry after a drop, doubled after each failed attempt up to the longest. */
const RECONNECT_MS = 2000;
const LONGEST_RECONNECT_MS = 30_000;

/**
 * The live dashboard: a single-use ticket from POST /auth/ws-ticket (browsers cannot set headers on a
 * WebSocket), then JSON text frames — the history batch, then one status_update per tick whose connection
 * list is either full or a delta against the previous one. A dropped socket reconnects with a new ticket and
 * resyncs from the history batch and the full list the server sends first. A server that cannot be reached (a
 * restart, a dropped network) is tried again, ever more slowly; only a refused session or permission ends it.
 */
export class DashboardFeed {
  private socket: WebSocket | null = null;
  private stopped = false;
  private retry: ReturnType<typeof setTimeout> | null = null;
  private attempts = 0;
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly api: ApiClient,
    private readonly listener: FeedListener,
  ) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.socket?.close(1000, 'page left');
    this.socket = null;
  }

  private async connect(): Promise<void> {
    this.listener.state('connecting');
    let ticket: string;
    try {
      ticket = await this.api.ticket();
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        // signed out or no permission: retrying would not help
        this.listener.state('refused', error.message);
        return;
      }
      this.reconnectLater();
      return;
    }
    if (this.stopped) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(`${scheme}//${location.host}/api/v1/ws?ticket=${encodeURIComponent(ticket)}`);
    this.socket = socket;
    socket.onmessage = (event) => this.receive(event.data);
    socket.onopen = () => {
      this.attempts = 0;
      this.listener.state('live');
    };
    socket.onclose = (event) => {
      if (this.socket !== socket || this.stopped) return;
      this.socket = null;
      // 1008: the server closed the socket because its credential lost the permission; a retry would be refused.
      if (event.code === 1008) {
        this.listener.state('refused', event.reason || 'signed out or no longer permitted');
        return;
      }
      this.reconnectLater();
    };
  }

  private reconnectLater(): void {
    if (this.stopped) return;
    this.listener.state('reconnecting');
    const delay = Math.min(RECONNECT_MS * 2 ** this.attempts, LONGEST_RECONNECT_MS);
    this.attempts++;
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return; // the server sends text frames only
    const message = JSON.parse(data) as { type: string; data?: StatusFrame[] };
    if (message.type === 'history') {
      this.listener.history(message.data ?? []);
      return;
    }
    if (message.type !== 'status_update') return;
    const frame = message as StatusFrame;
    if (frame.connections) {
      this.connections.clear();
      for (const entry of frame.connections) this.connections.set(connectionKey(entry), entry);
    } else if (frame.connections_delta) {
      for (const key of frame.connections_delta.remove) this.connections.delete(key);
      for (const entry of [...frame.connections_delta.add, ...frame.connections_delta.update]) this.connections.set(connectionKey(entry), entry);
    }
    const heaviest = [...this.connections.values()].sort((a, b) => b.bytes_in + b.bytes_out - (a.bytes_in + a.bytes_out));
    this.listener.frame(frame, heaviest);
  }
}
