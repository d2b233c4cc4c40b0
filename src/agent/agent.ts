import WebSocket from 'ws';
import type { FastifyBaseLogger } from 'fastify';
import { AGENT_PATHS, CLOSE_REVOKED, type ControllerMessage, type DriftEntry, type Health, type AgentMessage } from './protocol.js';
import { checkAddressIdentity, guardedTarget } from './https-client.js';
import type { AgentState, AgentStateStore, SectionObjects } from './state.js';
import { holdsSealed, openDocument } from './sealed-secrets.js';
import { objectName } from './sections.js';

export interface ApplyOutcome {
  outcome: 'applied' | 'failed';
  reason: string | null;
}

/** What applies a revision: the appliance itself (appliance-applier.ts) or an in-memory stand-in (memory-applier.ts). */
export interface Applier {
  apply(document: SectionObjects, previous: SectionObjects | null): Promise<ApplyOutcome>;
  health(): Promise<Health>;
  drift(applied: SectionObjects): Promise<DriftEntry[]>;
}

export interface AgentOptions {
  version: string;
  /** The outbound guard's allow-list, read at every (re)connect. */
  allowList: () => readonly string[];
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>;
  /** How often health and drift are reported (default 30 s). */
  statusIntervalMs?: number;
  /** Reconnect backoff: doubles from the first delay up to the ceiling, with jitter (default 1 s to 60 s). */
  backoff?: { initialMs: number; maxMs: number };
}

/** Attempts kept; older numbers are below applied_revision and are never applied anyway. */
const ATTEMPTS_KEPT = 50;

/**
 * The appliance's end of the fleet: one outbound WebSocket to the controller, authenticated both ways by
 * certificates, reconnecting with backoff. On a nudge it pulls its desired revision; a revision number it has
 * attempted before is never applied again (its outcome is reported again instead), so a lost message or a
 * controller restart never applies anything twice.
 */
export class FleetAgent {
  private socket: WebSocket | null = null;
  private retry: NodeJS.Timeout | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  private delay: number;
  private stopped = false;
  private applying = false;
  private pullAgain = false;
  private revoked = false;
  private lastError: string | null = null;
  /** Connections opened since start (the reconnect figures of the bench). */
  connections = 0;

  constructor(
    private readonly store: AgentStateStore,
    private readonly applier: Applier,
    private readonly options: AgentOptions,
  ) {
    this.delay = options.backoff?.initialMs ?? 1000;
  }

  get enrolled(): boolean {
    return this.store.load() !== null;
  }

  status() {
    const state = this.store.load();
    return {
      enrolled: state !== null,
      controller_url: state?.controller_url ?? null,
      appliance_id: state?.appliance_id ?? null,
      connected: this.socket?.readyState === WebSocket.OPEN,
      revoked: this.revoked,
      last_error: this.lastError,
      applied_revision: state?.applied_revision ?? 0,
      attempts: Object.entries(state?.attempts ?? {}).map(([revision, attempt]) => ({ revision: Number(revision), ...attempt })),
    };
  }

  start(): void {
    this.stopped = false;
    if (this.store.load()) void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.statusTimer) clearInterval(this.statusTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.terminate();
      });
    }
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const state = this.store.load();
    if (!state) return;
    try {
      const url = new URL(AGENT_PATHS.connect, state.controller_url);
      const target = await guardedTarget(url, this.options.allowList());
      const socket = new WebSocket(`wss://${target.address.includes(':') ? `[${target.address}]` : target.address}:${url.port || 443}${url.pathname}`, {
        ca: state.ca_pem, cert: state.certificate_pem, key: state.private_key_pem, servername: target.servername,
        headers: { host: target.host }, handshakeTimeout: 15_000, maxPayload: 16 * 1024 * 1024,
        checkServerIdentity: target.servername ? undefined : (_host: string, certificate: { subjectaltname?: string }) => checkAddressIdentity(url.hostname.replace(/^\[|\]$/g, ''), certificate.subjectaltname),
      } as WebSocket.ClientOptions);
      this.socket = socket;
      socket.on('open', () => this.opened(socket, state));
      socket.on('message', (data) => this.received(socket, data.toString()));
      socket.on('unexpected-response', (_request, response) => {
        // 403: this appliance is revoked; every further attempt would be refused the same way.
        if (response.statusCode === 403) this.markRevoked();
        this.lastError = `controller answered HTTP ${response.statusCode} to the connection`;
        socket.terminate();
      });
      socket.on('error', (error) => {
        this.lastError = error.message;
      });
      socket.on('close', (code) => this.closed(socket, code));
    } catch (error) {
      this.lastError = (error as Error).message;
      this.scheduleReconnect();
    }
  }

  private opened(socket: WebSocket, state: AgentState): void {
    this.connections += 1;
    this.delay = this.options.backoff?.initialMs ?? 1000;
    this.lastError = null;
    this.send(socket, { type: 'hello', version: this.options.version, applied_revision: state.applied_revision });
    void this.sendStatus(socket);
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = setInterval(() => void this.sendStatus(socket), this.options.statusIntervalMs ?? 30_000);
  }

  private closed(socket: WebSocket, code: number): void {
    if (this.socket === socket) this.socket = null;
    if (this.statusTimer) clearInterval(this.statusTimer);
    if (code === CLOSE_REVOKED) this.markRevoked();
    this.scheduleReconnect();
  }

  private markRevoked(): void {
    this.revoked = true;
    this.options.log.warn('fleet: the controller revoked this appliance; the agent no longer connects (enrol again with a new token)');
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.revoked || this.retry) return;
    const max = this.options.backoff?.maxMs ?? 60_000;
    // Jitter spreads a whole fleet's reconnects after a controller restart.
    const wait = Math.round(this.delay * (0.5 + Math.random() / 2));
    this.delay = Math.min(this.delay * 2, max);
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, wait);
  }

  private received(socket: WebSocket, text: string): void {
    let message: ControllerMessage;
    try {
      message = JSON.parse(text) as ControllerMessage;
    } catch {
      return;
    }
    if (message.type === 'nudge') return this.pull(socket);
    if (message.type === 'revision' && Number.isInteger(message.number)) void this.revision(socket, message.number, message.document);
  }

  private pull(socket: WebSocket): void {
    if (this.applying) {
      this.pullAgain = true;
      return;
    }
    this.send(socket, { type: 'pull' });
  }

  private async revision(socket: WebSocket, number: number, document: SectionObjects | null): Promise<void> {
    const state = this.store.load();
    if (!state || number === 0 || !document || this.applying) return;
    const attempt = state.attempts[number];
    if (attempt) {
      // Attempted before (the report may have been lost): report again, never apply again.
      if (attempt.outcome === 'applying') {
        attempt.outcome = 'failed';
        attempt.reason = 'the agent stopped while applying this revision; it is not applied a second time';
        this.store.save(state);
      }
      this.send(socket, { type: 'report', revision: number, outcome: attempt.outcome, reason: attempt.reason });
      return;
    }
    if (number <= state.applied_revision) return;
    this.applying = true;
    try {
      state.attempts[number] = { outcome: 'applying', reason: null, at: new Date().toISOString() };
      this.store.save(state);
      // Sealed secrets are opened only here, for the write; the sealed document is what is kept.
      const opened = (sealed: SectionObjects) => openDocument(sealed, state.sealing_private_key_pem, state.appliance_id);
      const result = await (async () => this.applier.apply(opened(document), state.applied_document && opened(state.applied_document)))()
        .catch((error: unknown): ApplyOutcome => ({ outcome: 'failed', reason: (error as Error).message }));
      state.attempts[number] = { outcome: result.outcome, reason: result.reason, at: new Date().toISOString() };
      if (result.outcome === 'applied') {
        state.applied_revision = number;
        state.applied_document = document;
      }
      for (const old of Object.keys(state.attempts).map(Number).sort((a, b) => a - b).slice(0, -ATTEMPTS_KEPT)) delete state.attempts[old];
      this.store.save(state);
      this.options.log.info({ revision: number, outcome: result.outcome, reason: result.reason }, 'fleet: revision attempted');
      // The socket may have been replaced meanwhile: the report goes on whichever is open.
      const open = this.socket ?? socket;
      this.send(open, { type: 'report', revision: number, outcome: result.outcome, reason: result.reason });
      void this.sendStatus(open);
    } finally {
      this.applying = false;
    }
    if (this.pullAgain && this.socket) {
      this.pullAgain = false;
      this.pull(this.socket);
    }
  }

  private async sendStatus(socket: WebSocket): Promise<void> {
    const state = this.store.load();
    try {
      const applied = state?.applied_document ?? null;
      const [health, drift] = await Promise.all([this.applier.health(), applied ? this.applier.drift(openDocument(applied, state!.sealing_private_key_pem, state!.appliance_id)) : Promise.resolve([])]);
      this.send(socket, { type: 'status', version: this.options.version, health, drift: applied ? withoutSecretValues(drift, applied) : drift });
    } catch (error) {
      this.options.log.warn({ err: error }, 'fleet: health or drift could not be read');
    }
  }

  private send(socket: WebSocket, message: AgentMessage): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }
}

/** A drifted field that holds a sealed secret in the revision is reported by name only: its local value stays here. */
function withoutSecretValues(drift: DriftEntry[], applied: SectionObjects): DriftEntry[] {
  return drift.map((entry) => {
    if (!entry.values) return entry;
    const owned = (applied.sections[entry.section] ?? []).find((object) => objectName(entry.section, object) === entry.name);
    const values = Object.fromEntries(Object.entries(entry.values).filter(([field]) => !holdsSealed(owned?.[field])));
    return { ...entry, values };
  });
}
