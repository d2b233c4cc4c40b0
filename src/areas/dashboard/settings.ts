import { Type, type Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { badRequest } from '../../core/errors.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { StringEnum } from '../../model/schema-helpers.js';
import type { ConfigData } from '../../store/config-store.js';
import type { Retention } from '../../metrics/tiers.js';
import type { StoreStatus } from '../../metrics/redis-store.js';

const MIB = 1024 * 1024;

// ------------------------------------------------------------------ /settings/dashboard-history

/** Bounds of the 1 s history (wire-format A3 §7.5, newer reference: 5 minutes to 24 hours). */
export const HISTORY_SECONDS = { min: 300, max: 86_400, default: 1800 };
export const RAM_LIMIT_MB = { min: 1, max: 256 };
/** Bytes one second of history costs across the dashboard's series (about 30 series × 32-byte points). */
export const HISTORY_ENTRY_BYTES = 1024;

const HistorySchema = Type.Object({
  mode: StringEnum(['duration', 'ram'], { default: 'duration', description: '`duration`: keep history_seconds; `ram`: derive it from ram_limit_mb' }),
  history_seconds: Type.Integer({ default: HISTORY_SECONDS.default, description: 'seconds of 1 s samples kept (clamped to 300..86400)' }),
  ram_limit_mb: Type.Number({ default: 16, description: 'memory budget in ram mode (clamped to 1..256)' }),
  minute_retention_hours: Type.Integer({ minimum: 1, maximum: 8760, default: 48, description: 'hours of 1 min points kept' }),
  hour_retention_days: Type.Integer({ minimum: 1, maximum: 3650, default: 30, description: 'days of 1 h points kept' }),
  day_retention_days: Type.Integer({ minimum: 1, maximum: 3650, default: 730, description: 'days of 1 day points kept' }),
});

export const HistoryView = Type.Object({
  mode: Type.String(),
  history_seconds: Type.Integer(),
  ram_limit_mb: Type.Number(),
  minute_retention_hours: Type.Integer(),
  hour_retention_days: Type.Integer(),
  day_retention_days: Type.Integer(),
  current_entries: Type.Integer({ description: 'entries now held at 1 s resolution' }),
  estimated_ram_mb: Type.Number({ description: 'memory the rings are sized for, MB, one decimal' }),
});

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

export type HistorySettingsValues = Static<typeof HistorySchema>;

export const retentionOf = (values: HistorySettingsValues): Retention => ({
  second: values.history_seconds,
  minute: values.minute_retention_hours * 60,
  hour: values.hour_retention_days * 24,
  day: values.day_retention_days,
});

export class DashboardHistorySettings {
  readonly section: SingletonModel<HistorySettingsValues & ConfigData>;

  constructor(
    context: AppContext,
    private readonly observe: () => { currentEntries: number; capacityBytes: number },
    private readonly apply: (retention: Retention) => void,
  ) {
    this.section = context.models.singleton({ kind: 'settings.dashboard_history', noun: 'dashboard history settings', writeAccess: 'settings:write', schema: HistorySchema });
  }

  values(): HistorySettingsValues {
    return this.section.read();
  }

  view() {
    const { currentEntries, capacityBytes } = this.observe();
    return { ...this.values(), current_entries: currentEntries, estimated_ram_mb: Math.round((capacityBytes / MIB) * 10) / 10 };
  }

  /** `{mode: "ram", ram_limit_mb}` or `{mode: "duration", history_seconds}`; the number the mode needs is required. */
  update(body: Record<string, unknown>): void {
    const patch = { ...body };
    const mode = (patch.mode as string | undefined) ?? (patch.history_seconds !== undefined ? 'duration' : patch.ram_limit_mb !== undefined ? 'ram' : undefined);
    if (mode === 'ram') {
      if (typeof patch.ram_limit_mb !== 'number') throw badRequest('body.ram_limit_mb is required when mode is ram');
      patch.ram_limit_mb = clamp(patch.ram_limit_mb, RAM_LIMIT_MB.min, RAM_LIMIT_MB.max);
      patch.history_seconds = clamp(Math.floor((patch.ram_limit_mb as number) * MIB / HISTORY_ENTRY_BYTES), HISTORY_SECONDS.min, HISTORY_SECONDS.max);
      patch.mode = 'ram';
    } else if (mode === 'duration') {
      if (typeof patch.history_seconds !== 'number') throw badRequest('body.history_seconds is required when mode is duration');
      patch.history_seconds = clamp(patch.history_seconds, HISTORY_SECONDS.min, HISTORY_SECONDS.max);
      patch.mode = 'duration';
    }
    this.section.write(patch);
    this.apply(retentionOf(this.values()));
  }
}

// ------------------------------------------------------------------ /settings/metrics-store

const StoreSchema = Type.Object({
  enabled: Type.Boolean({ default: false, description: 'write metrics to the Redis-protocol store and serve history from it' }),
  url: Type.String({ default: 'redis://127.0.0.1:6379', maxLength: 2048, description: 'redis:// or rediss:// URL; a password in it is sealed and never returned' }),
  retention_minutes: Type.Integer({ minimum: 1, maximum: 525_600, default: 30 }),
  password: Type.String({ default: '', maxLength: 1024, writeOnly: true, description: 'write-only; "" removes it' }),
});

export const StoreView = Type.Object({
  enabled: Type.Boolean(),
  url: Type.String({ description: 'without any password' }),
  retention_minutes: Type.Integer(),
  has_password: Type.Boolean(),
  status: StringEnum(['connected', 'disconnected', 'disabled']),
  error: Type.Optional(Type.String()),
});

export interface StoreSettingsValues {
  enabled: boolean;
  url: string;
  retention_minutes: number;
}

/** Splits a password out of a redis URL: the URL is stored without it, the password sealed on its own. */
export function splitRedisUrl(raw: string): { url: string; password?: string } {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw badRequest('body.url must be a redis:// or rediss:// URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw badRequest('body.url must be a redis:// or rediss:// URL');
  if (!parsed.hostname) throw badRequest('body.url must name a host');
  if (parsed.search || parsed.hash) throw badRequest('body.url must not carry a query or fragment');
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  parsed.password = '';
  return { url: parsed.toString().replace(/\/$/, ''), ...(password !== undefined ? { password } : {}) };
}

export class MetricsStoreSettings {
  readonly section: SingletonModel;

  constructor(
    context: AppContext,
    private readonly state: () => { status: StoreStatus; error?: string },
    private readonly apply: () => Promise<void>,
  ) {
    this.section = context.models.singleton({ kind: 'settings.metrics_store', noun: 'metrics store settings', writeAccess: 'settings:write', schema: StoreSchema, writeOnly: ['password'] });
  }

  values(): StoreSettingsValues {
    return this.section.visible(this.section.read()) as unknown as StoreSettingsValues;
  }

  password(): string | undefined {
    return this.section.secret('password');
  }

  view() {
    const { status, error } = this.state();
    return { ...this.values(), has_password: this.password() !== undefined, status, ...(error && status === 'disconnected' ? { error } : {}) };
  }

  /** A redis URL's password is split off and sealed; the store reconnects at once. */
  async update(body: Record<string, unknown>): Promise<void> {
    const patch = { ...body };
    if (typeof patch.url === 'string') {
      const { url, password } = splitRedisUrl(patch.url);
      patch.url = url;
      // a URL without a password keeps the stored one (GET never shows it, so a round trip must not wipe it)
      if (password !== undefined && patch.password === undefined) patch.password = password;
    }
    this.section.write(patch);
    await this.apply();
  }
}
