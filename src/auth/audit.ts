import type { Db } from '../store/database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import type { EventHub } from '../core/event-hub.js';
import { EVENT_TOPICS } from '../core/events.js';

export interface AuditEvent {
  action: string;
  outcome: 'success' | 'failure';
  actor?: string | null;
  actorId?: string | null;
  targetId?: string | null;
  clientIp?: string | null;
  details?: string | null;
}

export interface AuditRecord {
  id: number;
  created_at: string;
  action: string;
  outcome: string;
  actor: string | null;
  actor_id: string | null;
  user_id: string | null;
  ip_addr: string | null;
  details: string | null;
}

/** The auth audit: every credential event and every change to identities, newest first on read. */
export class AuthAudit {
  private readonly insert;
  private readonly page;
  private readonly count;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly category = 'auth',
    /** Every entry is also announced on the hub (syslog's audit category). */
    private readonly events?: EventHub,
  ) {
    this.insert = db.prepare(
      'INSERT INTO audit_log (at, category, action, actor, client_ip, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.page = db.prepare('SELECT * FROM audit_log WHERE category = ? ORDER BY id DESC LIMIT ? OFFSET ?');
    this.count = db.prepare('SELECT count(*) AS n FROM audit_log WHERE category = ?');
  }

  record(event: AuditEvent): void {
    const details = JSON.stringify({
      actor_id: event.actorId ?? null,
      user_id: event.targetId ?? null,
      details: event.details ?? null,
    });
    this.insert.run(isoTime(this.clock.now()), this.category, event.action, event.actor ?? null, event.clientIp ?? null, event.outcome, details);
    this.events?.emit(EVENT_TOPICS.audit, {
      category: this.category, action: event.action, outcome: event.outcome, actor: event.actor ?? null, client_ip: event.clientIp ?? null,
      object_kind: event.targetId ? 'user' : null, object_id: event.targetId ?? null, details: event.details ?? null,
    });
  }

  list(limit: number, offset: number): { records: AuditRecord[]; total: number } {
    const rows = this.page.all(this.category, limit, offset) as {
      id: number; at: string; action: string; actor: string | null; client_ip: string | null; outcome: string; details: string | null;
    }[];
    const records = rows.map((row) => {
      const extra = row.details ? (JSON.parse(row.details) as Record<string, string | null>) : {};
      return {
        id: row.id,
        created_at: row.at,
        action: row.action,
        outcome: row.outcome,
        actor: row.actor,
        actor_id: extra.actor_id ?? null,
        user_id: extra.user_id ?? null,
        ip_addr: row.client_ip,
        details: extra.details ?? null,
      };
    });
    return { records, total: (this.count.get(this.category) as { n: number }).n };
  }
}
