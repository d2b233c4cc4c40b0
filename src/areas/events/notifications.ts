import type { HubEvent } from '../../core/event-hub.js';
import { EVENT_TOPICS, type Severity } from '../../core/events.js';
import type { NotifyEventName } from './schema.js';

/** One thing worth telling someone about, derived from a hub event. */
export interface Notification {
  event: NotifyEventName;
  /** What deduplication and the rate limit count per: a gateway's down and up share one key, so flapping is one story. */
  key: string;
  severity: Severity;
  /** One line: the e-mail subject and the webhook's `summary`. */
  summary: string;
  at: string;
  payload: Record<string, unknown>;
}

const IDS_SEVERITY: Record<number, Severity> = { 1: 'critical', 2: 'error', 3: 'warning', 4: 'notice' };
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

/** The notification an event stands for, or undefined when it is none (a log line, an audit entry). */
export function notificationOf(event: HubEvent): Notification | undefined {
  const p = event.payload;
  const make = (name: NotifyEventName, key: string, severity: Severity, summary: string): Notification => ({ event: name, key, severity, summary, at: event.at, payload: p });
  switch (event.topic) {
    case EVENT_TOPICS.gatewayState:
      if (p.to === 'down') return make('gateway_down', `gateway:${text(p.gateway_id)}`, 'error', `gateway ${text(p.name)} is down${p.reason ? `: ${text(p.reason)}` : ''}`);
      if (p.to === 'up' && p.from === 'down') return make('gateway_up', `gateway:${text(p.gateway_id)}`, 'notice', `gateway ${text(p.name)} is up again`);
      return undefined;
    case EVENT_TOPICS.idsAlert: {
      const severity = IDS_SEVERITY[Number(p.severity)] ?? 'warning';
      return make('ids_alert', `ids:${text(p.signature_id)}:${text(p.src_ip)}`, severity, `IDS alert (severity ${text(p.severity)}): ${text(p.signature)} from ${text(p.src_ip)} to ${text(p.dst_ip)}`);
    }
    case EVENT_TOPICS.certificateExpiring:
      return make('certificate_expiring', `certificate:${text(p.certificate_id)}:expiring`, Number(p.days_left) <= 3 ? 'error' : 'warning', `certificate ${text(p.certificate)} expires in ${text(p.days_left)} day(s) (${text(p.expires_at)})`);
    case EVENT_TOPICS.certificateRenewalFailed:
      return make('certificate_renewal_failed', `certificate:${text(p.certificate_id)}:renewal`, 'error', `renewal of certificate ${text(p.certificate)} failed: ${text(p.error)}`);
    case 'config.drift':
      return p.drift ? make('drift_detected', 'drift', 'warning', `the kernel ruleset differs from the applied one: ${[p.differences].flat().slice(0, 3).join('; ')}`) : undefined;
    case EVENT_TOPICS.driftRepaired:
      return make('drift_repaired', 'drift', 'notice', `the kernel ruleset matches the applied one again (${text(p.how)})`);
    case 'config.commit_confirm':
      if (p.event !== 'rolled_back' && p.event !== 'rollback_failed') return undefined;
      return make('commit_confirm_rolled_back', 'commit_confirm', p.event === 'rollback_failed' ? 'critical' : 'warning', `commit-confirm ${p.event === 'rollback_failed' ? 'rollback FAILED' : 'rolled back'} to version ${text(p.rollback_version)}: ${text(p.reason)}`);
    case 'config.applied':
      if (p.source === 'rollback') return undefined;
      if (p.source === 'restore') return make('config_restored', 'config:restored', 'notice', `configuration restored as version ${text(p.version)} by ${text(p.actor)}${p.comment ? ` (${text(p.comment)})` : ''}`);
      return make('config_applied', 'config:applied', 'info', `configuration version ${text(p.version)} applied by ${text(p.actor)}${p.comment ? ` (${text(p.comment)})` : ''}`);
    case EVENT_TOPICS.accountLockedOut:
      return make('account_locked_out', `lockout:${text(p.key)}`, 'warning', `${p.actor ? `${text(p.actor)} ` : ''}locked out after too many failed logins (${text(p.key)}${p.client_ip ? ` from ${text(p.client_ip)}` : ''})`);
    case EVENT_TOPICS.daemonCrashed:
      return make('daemon_crashed', `daemon:${text(p.daemon)}`, 'error', `${text(p.daemon)} crashed: ${text(p.reason)}`);
    case EVENT_TOPICS.daemonRestarted:
      return make('daemon_restarted', `daemon:${text(p.daemon)}:restart`, 'notice', `${text(p.daemon)} was restarted (restart ${text(p.restarts)})`);
    case EVENT_TOPICS.updateAvailable:
      return make('update_available', `update:${text(p.latest)}`, 'info', `Bulwark ${text(p.latest)} is available (running ${text(p.current)})`);
    case EVENT_TOPICS.diskNearlyFull:
      return make('disk_nearly_full', `disk:${text(p.path)}`, 'warning', `${text(p.path)} is ${text(p.used_pct)} % full (threshold ${text(p.threshold_pct)} %)`);
    default:
      return undefined;
  }
}
