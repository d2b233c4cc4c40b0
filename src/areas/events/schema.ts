import { Type } from 'typebox';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';
import { SEVERITIES } from '../../core/events.js';

/** The events a notification can be about (GET/PUT /notify/events names them). */
export const NOTIFY_EVENTS = [
  'gateway_down', 'gateway_up', 'ids_alert', 'certificate_expiring', 'certificate_renewal_failed', 'drift_detected', 'drift_repaired',
  'commit_confirm_rolled_back', 'config_applied', 'config_restored', 'account_locked_out', 'daemon_crashed', 'daemon_restarted',
  'update_available', 'disk_nearly_full',
] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

const AllowedAddress = Type.String({ maxLength: 64, pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$' });

export const WebhookStored = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'http(s) URL the JSON body is POSTed to (http only to an allowed private address)' }),
  secret: Type.String({ default: '', maxLength: 1024, description: 'write-only, sealed at rest: the HMAC-SHA256 key of X-Bulwark-Signature' }),
  allowed_addresses: Type.Array(AllowedAddress, { maxItems: 64, default: [], description: 'private or loopback addresses the outbound guard lets this webhook reach' }),
  enabled: Type.Boolean({ default: true }),
});
export const WebhookComputed = { has_secret: Type.Boolean() };

export const NotifyRule = Type.Object({
  event: StringEnum(NOTIFY_EVENTS),
  email: Type.Boolean({ default: false }),
  webhooks: Type.Array(Uuid(), { maxItems: 32, default: [], description: 'ids of /notify/webhooks' }),
  min_severity: Type.Optional(StringEnum(SEVERITIES, { description: 'only events at least this severe (ids_alert: IDS severity 1 is critical, 2 error, 3 warning, 4 notice)' })),
  rate_limit_secs: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, description: 'per event key: one notification, then one summary of what followed at the end of this window (default 300)' })),
}, { additionalProperties: false });

export const NotifyRulesStored = Type.Object({
  rules: Type.Array(NotifyRule, { maxItems: NOTIFY_EVENTS.length * 4, default: [] }),
});

export const WebhookTestAnswer = Type.Object({ ok: Type.Boolean(), message: Type.String(), status: Type.Union([Type.Integer(), Type.Null()]) });
