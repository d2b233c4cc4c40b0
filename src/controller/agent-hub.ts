import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { FastifyBaseLogger } from 'fastify';
import { AGENT_PATHS, CLOSE_REVOKED, parseAgentMessage, type ControllerMessage } from '../agent/protocol.js';
import type { Pool } from './database.js';
import type { Rollouts } from './rollouts.js';
import { adoptDrift } from './drift-adoption.js';

/**
 * The agents' connections held by this controller process. The map is only who is connected here (live
 * sockets, not a record): everything an agent says goes to PostgreSQL at once.
 */
export class AgentHub {
  /** This process, as `appliances.connected_to` names it. */
  readonly instance = randomUUID();
  private readonly sockets = new Map<string, WebSocket>();
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });

  constructor(
    private readonly pool: Pool,
    private readonly rollouts: Rollouts,
    private readonly log: FastifyBaseLogger,
  ) {}

  get connectedCount(): number {
    return this.sockets.size;
  }

  /** Upgrades on the agent path: a verified client certificate of an appliance that is not revoked, or a 403. */
  async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refuse = (status: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (new URL(request.url ?? '/', 'https://controller').pathname !== AGENT_PATHS.connect) return refuse('404 Not Found');
    const tls = request.socket as TLSSocket;
    const serial = tls.authorized ? tls.getPeerCertificate()?.serialNumber?.toUpperCase() : undefined;
    if (!serial) return refuse('401 Unauthorized');
    const row = (await this.pool.query<{ id: string; revoked: boolean }>('SELECT id, revoked_at IS NOT NULL AS revoked FROM appliances WHERE certificate_serial = $1', [serial])).rows[0];
    if (!row || row.revoked) return refuse('403 Forbidden');
    this.server.handleUpgrade(request, socket, head, (ws) => void this.accept(row.id, ws));
  }

  private async accept(applianceId: string, ws: WebSocket): Promise<void> {
    this.sockets.get(applianceId)?.close(1000, 'replaced by a newer connection');
    this.sockets.set(applianceId, ws);
    ws.on('close', () => {
      if (this.sockets.get(applianceId) !== ws) return;
      this.sockets.delete(applianceId);
      void this.pool.query('UPDATE appliances SET connected_to = NULL WHERE id = $1 AND connected_to = $2', [applianceId, this.instance]).catch(() => undefined);
    });
    ws.on('error', () => undefined);
    // Messages of one agent are handled in order.
    let queue = Promise.resolve();
    ws.on('message', (data) => {
      queue = queue.then(() => this.handle(applianceId, ws, data.toString())).catch((error: unknown) => {
        this.log.warn({ err: error, appliance: applianceId }, 'fleet: an agent message failed');
      });
    });
    await this.pool.query('UPDATE appliances SET connected_to = $2, last_seen = now() WHERE id = $1', [applianceId, this.instance]);
    // A (re)connected agent pulls at once: whatever it missed while away reaches it now.
    this.send(ws, { type: 'nudge' });
  }

  private async handle(applianceId: string, ws: WebSocket, text: string): Promise<void> {
    const message = parseAgentMessage(text);
    if (!message) return ws.close(1008, 'not an agent message');
    switch (message.type) {
      case 'hello':
        // Nothing to write: accept() has just marked the connection and the time, and the version comes with the
        // status that follows at once (where a change of it is audited).
        return;
      case 'pull': {
        const desired = await this.rollouts.desiredOf(applianceId);
        return this.send(ws, { type: 'revision', number: desired.number, document: desired.document });
      }
      case 'report':
        await this.rollouts.report(applianceId, message.revision, message.outcome, message.reason);
        return;
      case 'status': {
        // The drift is stored without the local values (they serve adoption only, below).
        const drift = message.drift.map(({ values: _, ...entry }) => entry);
        // One statement: the update, and an audit row for each of version, health and drift that changed. `old`
        // reads the row as the statement's snapshot has it (before the update; no FOR UPDATE, which would skip a row
        // this same statement updates). One agent's messages are handled in order, so no two race here.
        const audited = await this.pool.query<{ action: string }>(
          `WITH old AS (SELECT version, health, drift FROM appliances WHERE id = $1),
                changed AS (UPDATE appliances SET version = $2, health = $3, drift = $4, last_seen = now(), connected_to = $5 WHERE id = $1 RETURNING id)
           INSERT INTO audit_events (actor, appliance_id, action, detail)
           SELECT 'appliance', changed.id, e.action, e.detail FROM old, changed, LATERAL (VALUES
             ('appliance.version_changed', jsonb_build_object('from', old.version, 'to', $2::text), old.version IS DISTINCT FROM $2::text),
             ('appliance.health_changed', jsonb_build_object('from', old.health, 'to', $3::jsonb), old.health IS DISTINCT FROM $3::jsonb),
             ('appliance.drift_changed', jsonb_build_object('from', old.drift, 'to', $4::jsonb), old.drift IS DISTINCT FROM $4::jsonb)
           ) AS e(action, detail, differs) WHERE e.differs RETURNING action`,
          [applianceId, message.version, JSON.stringify(message.health), JSON.stringify(drift), this.instance],
        );
        // Local edits: templates with the adopt policy take them (drift-adoption.ts); the others leave them reported.
        if (drift.length > 0) await adoptDrift(this.pool, applianceId, message.drift, audited.rows.some((row) => row.action === 'appliance.drift_changed'));
      }
    }
  }

  nudge(applianceIds: readonly string[]): void {
    for (const id of applianceIds) {
      const ws = this.sockets.get(id);
      if (ws) this.send(ws, { type: 'nudge' });
    }
  }

  /** Ends a revoked appliance's connection here at once (its reconnects are refused by upgrade()). */
  revoke(applianceId: string): void {
    this.sockets.get(applianceId)?.close(CLOSE_REVOKED, 'revoked');
  }

  closeAll(): void {
    for (const ws of this.sockets.values()) ws.terminate();
    this.sockets.clear();
  }

  private send(ws: WebSocket, message: ControllerMessage): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}
