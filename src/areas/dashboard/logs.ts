import type { AppContext } from '../../context.js';

export const LOG_SOURCES = ['packet_filter', 'audit', 'system'] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

export interface LogEntry {
  id: string;
  timestamp: string;
  source: LogSource;
  level: string;
  action: string;
  rule_id: string | null;
  actor: string | null;
  details: string;
}

/** The audit category of the auth trail, which GET /auth/audit serves behind users:read. */
const AUTH_AUDIT_CATEGORY = 'auth';

/**
 * GET /logs: the packet filter's blocked-packet log, the audit log and the system log, merged newest first.
 * Each source contributes at most `limit` entries, so the merge never reads more than it can return. The auth
 * trail (logins, lockouts, account changes) is left out unless the caller may read it where it is kept
 * (`withAuthTrail`: users:read), so logs:view never reveals what users:read guards.
 */
export async function combinedLogs(context: AppContext, limit: number, only: LogSource | undefined, withAuthTrail: boolean): Promise<LogEntry[]> {
  const wanted = (source: LogSource) => only === undefined || only === source;
  const entries: LogEntry[] = [];
  if (wanted('packet_filter')) {
    const blocked = await context.platform.traffic.blocked(limit).catch(() => []);
    blocked.forEach((packet, index) => {
      entries.push({
        id: `packet_filter:${packet.timestamp}:${index}`,
        timestamp: packet.timestamp,
        source: 'packet_filter',
        level: 'info',
        action: packet.action,
        rule_id: packet.rule_id,
        actor: null,
        details: `${packet.protocol || 'ip'} ${packet.src_addr}${packet.src_port ? `:${packet.src_port}` : ''} -> ${packet.dst_addr}${packet.dst_port ? `:${packet.dst_port}` : ''} ${packet.direction} on ${packet.interface || '?'}`,
      });
    });
  }
  if (wanted('audit')) {
    const rows = context.db
      .prepare('SELECT id, at, category, action, actor, outcome, details FROM audit_log WHERE category <> ? OR ? ORDER BY id DESC LIMIT ?')
      .all(AUTH_AUDIT_CATEGORY, withAuthTrail ? 1 : 0, limit) as {
      id: number; at: string; category: string; action: string; actor: string | null; outcome: string; details: string | null;
    }[];
    for (const row of rows) {
      entries.push({
        id: `audit:${row.id}`, timestamp: row.at, source: 'audit', level: row.outcome === 'success' ? 'info' : 'warn',
        action: `${row.category}.${row.action}`, rule_id: null, actor: row.actor, details: `${row.outcome}${row.details ? ` ${row.details}` : ''}`,
      });
    }
  }
  if (wanted('system')) {
    const rows = context.db.prepare('SELECT id, at, source, level, message FROM system_log ORDER BY id DESC LIMIT ?').all(limit) as {
      id: number; at: string; source: string; level: string; message: string;
    }[];
    for (const row of rows) {
      entries.push({ id: `system:${row.id}`, timestamp: row.at, source: 'system', level: row.level, action: row.source, rule_id: null, actor: null, details: row.message });
    }
  }
  const time = (entry: LogEntry) => Date.parse(entry.timestamp) || 0;
  return entries.sort((a, b) => time(b) - time(a)).slice(0, limit);
}
