import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';

/** One entry of the packet filter's audit trail (reloads, drift). */
export function auditPacketFilter(context: AppContext, entry: { action: string; actor: string | null; ip: string | null; outcome: 'success' | 'failure'; details: string }): void {
  context.db
    .prepare('INSERT INTO audit_log (at, category, action, actor, client_ip, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(new Date(context.clock.now()).toISOString(), 'packet_filter', entry.action, entry.actor, entry.ip, entry.outcome, entry.details);
  context.events.emit(EVENT_TOPICS.audit, { category: 'packet_filter', action: entry.action, outcome: entry.outcome, actor: entry.actor, client_ip: entry.ip, details: entry.details });
}
