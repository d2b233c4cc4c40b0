import type { HubEvent } from '../../core/event-hub.js';
import { EVENT_TOPICS } from '../../core/events.js';
import { SD_ENTERPRISE, type SdElement, type SyslogMessage } from '../../net/syslog.js';

/** The syslog categories, each switched on by its own flag of /settings/syslog. */
export const SYSLOG_CATEGORIES = ['pf', 'ids', 'audit', 'app', 'daemon'] as const;
export type SyslogCategory = (typeof SYSLOG_CATEGORIES)[number];

/** pino's numeric levels as names, and the syslog severity each maps to. */
const APP_LEVELS: Record<number, { name: 'error' | 'warn' | 'info' | 'debug'; severity: number }> = {
  60: { name: 'error', severity: 2 }, 50: { name: 'error', severity: 3 }, 40: { name: 'warn', severity: 4 },
  30: { name: 'info', severity: 6 }, 20: { name: 'debug', severity: 7 }, 10: { name: 'debug', severity: 7 },
};
const LEVEL_RANK = { error: 3, warn: 2, info: 1, debug: 0 } as const;

/** An app log line passes when its level is at or above app_min_level. */
export function appLevelPasses(level: number, minimum: keyof typeof LEVEL_RANK): boolean {
  const name = APP_LEVELS[level]?.name ?? (level >= 50 ? 'error' : 'debug');
  return LEVEL_RANK[name] >= LEVEL_RANK[minimum];
}

const sd = (name: string, params: SdElement['params']): SdElement => ({ id: `${name}@${SD_ENTERPRISE}`, params });
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));
const endpoint = (address: unknown, port: unknown) => (port ? `${text(address)}:${text(port)}` : text(address));

/** Which category an event belongs to (undefined: not a syslog event; state changes are notifications' business). */
export function categoryOf(event: HubEvent): SyslogCategory | undefined {
  switch (event.topic) {
    case EVENT_TOPICS.packetLog: return 'pf';
    case EVENT_TOPICS.idsAlert: return 'ids';
    case EVENT_TOPICS.audit: return 'audit';
    case EVENT_TOPICS.appLog: return 'app';
    case EVENT_TOPICS.daemonLog: return 'daemon';
    default: return undefined;
  }
}

/** The one syslog message of an event: its fields as structured data, a readable line as MSG. */
export function syslogMessageOf(event: HubEvent, category: SyslogCategory): SyslogMessage {
  const p = event.payload;
  const at = new Date(event.at);
  switch (category) {
    case 'pf': {
      const rule = p.rule_id ? ` (rule ${text(p.rule_id)})` : '';
      return {
        severity: p.action === 'pass' ? 6 : 5, app: 'bulwark-pf', msgid: 'PF', at,
        structured: [sd('pf', [['action', text(p.action)], ['rule_id', text(p.rule_id)], ['interface', text(p.interface)], ['direction', text(p.direction)],
          ['protocol', text(p.protocol)], ['src', text(p.src_addr)], ['src_port', p.src_port ? text(p.src_port) : ''], ['dst', text(p.dst_addr)], ['dst_port', p.dst_port ? text(p.dst_port) : '']])],
        text: `${text(p.action)} ${text(p.protocol)} ${endpoint(p.src_addr, p.src_port)} -> ${endpoint(p.dst_addr, p.dst_port)} on ${text(p.interface) || '?'}${rule}`,
      };
    }
    case 'ids': {
      const severity = Number(p.severity) || 3;
      return {
        severity: Math.min(5, severity + 1), app: 'bulwark-ids', msgid: 'IDS', at,
        structured: [sd('ids', [['sid', text(p.signature_id)], ['signature', text(p.signature)], ['severity', String(severity)], ['action', text(p.action)],
          ['protocol', text(p.protocol)], ['src', text(p.src_ip)], ['src_port', text(p.src_port)], ['dst', text(p.dst_ip)], ['dst_port', text(p.dst_port)]])],
        text: `IDS ${text(p.action) || 'alert'} [sid ${text(p.signature_id) || '-'}] ${text(p.signature)}: ${text(p.protocol)} ${endpoint(p.src_ip, p.src_port)} -> ${endpoint(p.dst_ip, p.dst_port)}`,
      };
    }
    case 'audit': {
      const object = p.object_kind ? ` ${text(p.object_kind)}${p.object_id ? ` ${text(p.object_id)}` : ''}` : '';
      return {
        severity: p.outcome === 'failure' ? 4 : 5, app: 'bulwark-audit', msgid: 'AUDIT', at,
        structured: [sd('audit', [['category', text(p.category)], ['action', text(p.action)], ['outcome', text(p.outcome)], ['actor', text(p.actor)],
          ['client_ip', text(p.client_ip)], ['object_kind', text(p.object_kind)], ['object_id', text(p.object_id)], ['details', text(p.details)]])],
        text: `${text(p.category)} ${text(p.action)}${object} ${text(p.outcome)} by ${text(p.actor) || 'the appliance'}${p.client_ip ? ` from ${text(p.client_ip)}` : ''}${p.details ? `: ${text(p.details)}` : ''}`,
      };
    }
    case 'app': {
      const level = APP_LEVELS[Number(p.level)] ?? { name: 'info', severity: 6 };
      return {
        severity: level.severity, app: 'bulwark', msgid: 'APP', at,
        structured: [sd('app', [['level', level.name], ['req_id', text(p.reqId)], ['method', text(p.method)], ['path', text(p.path)], ['status', text(p.status)],
          ['error', p.err && typeof p.err === 'object' ? text((p.err as { message?: unknown }).message) : text(p.err)]])],
        text: text(p.msg) || '-',
      };
    }
    case 'daemon':
      return {
        severity: 6, app: text(p.daemon) || 'daemon', msgid: 'DAEMON', at,
        structured: [sd('daemon', [['name', text(p.daemon)]])],
        text: text(p.line),
      };
  }
}
