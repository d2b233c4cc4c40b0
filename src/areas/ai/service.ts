import type { AppContext } from '../../context.js';
import { badRequest, HttpError } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { parseCidr } from '../../net/address.js';
import type { IdsService } from '../ids/service.js';
import { runDetectors, type Detection } from './detectors.js';
import { complete, listModels, parseVerdict, probe, PROVIDERS, type ProviderName, type ProviderTarget } from './providers.js';

const SETTINGS_KIND = 'settings_ai';

interface ProviderSettings {
  enabled: boolean;
  api_key?: string; // sealed
  endpoint: string;
  model: string;
}

interface StoredSettings {
  enabled: boolean;
  active_provider: string;
  providers: Record<ProviderName, ProviderSettings>;
  outbound_allow_list: string[];
}

const SYSTEM_PROMPT = 'You are a network security analyst reviewing IDS alerts on a firewall. Answer only with JSON: {"classification": "false_positive" | "confirmed" | "investigating", "reason": "<one sentence>"}.';

/** AI analysis: local behavioural detectors, optional LLM classification of IDS alerts, and the audit of both. */
export class AiService {
  constructor(
    private readonly context: AppContext,
    private readonly ids: IdsService,
  ) {}

  // ---- settings --------------------------------------------------------------------------------------

  private stored(): StoredSettings {
    const data = (this.context.store.getSingleton(SETTINGS_KIND) ?? {}) as Partial<StoredSettings>;
    const providers = Object.fromEntries(PROVIDERS.map((name) => [name, { enabled: false, endpoint: '', model: '', ...(data.providers?.[name] ?? {}) }])) as Record<ProviderName, ProviderSettings>;
    return { enabled: data.enabled ?? false, active_provider: data.active_provider ?? '', providers, outbound_allow_list: data.outbound_allow_list ?? [] };
  }

  settings() {
    const stored = this.stored();
    return {
      enabled: stored.enabled,
      active_provider: stored.active_provider,
      providers: PROVIDERS.map((name) => {
        const p = stored.providers[name];
        return { provider: name, enabled: p.enabled, api_key_set: typeof p.api_key === 'string' && p.api_key !== '', endpoint: p.endpoint, model: p.model };
      }),
      outbound_allow_list: stored.outbound_allow_list,
    };
  }

  updateSettings(body: { enabled?: boolean; active_provider?: string; provider?: ProviderName; api_key?: string; endpoint?: string; model?: string; provider_enabled?: boolean; outbound_allow_list?: string[] }): void {
    const stored = this.stored();
    const perProvider = ['api_key', 'endpoint', 'model', 'provider_enabled'] as const;
    if (!body.provider && perProvider.some((field) => body[field] !== undefined)) throw badRequest('body.provider is required with api_key, endpoint, model or provider_enabled');
    if (body.enabled !== undefined) stored.enabled = body.enabled;
    if (body.active_provider !== undefined) stored.active_provider = body.active_provider;
    if (body.outbound_allow_list !== undefined) {
      for (const entry of body.outbound_allow_list) if (!parseCidr(entry)) throw badRequest(`body.outbound_allow_list: "${entry}" is not an IP address or CIDR`);
      stored.outbound_allow_list = body.outbound_allow_list;
    }
    if (body.provider) {
      const target = stored.providers[body.provider];
      if (body.endpoint !== undefined) {
        if (body.endpoint !== '') {
          let url: URL;
          try {
            url = new URL(body.endpoint);
          } catch {
            throw badRequest('body.endpoint must be an http(s) URL');
          }
          if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest('body.endpoint must be an http(s) URL');
          if (url.username || url.password) throw badRequest('body.endpoint must not carry credentials; use api_key');
        }
        target.endpoint = body.endpoint;
      }
      if (body.model !== undefined) target.model = body.model;
      if (body.provider_enabled !== undefined) target.enabled = body.provider_enabled;
      if (body.api_key !== undefined) {
        if (body.api_key === '') delete target.api_key;
        else target.api_key = this.context.sealer.seal(body.api_key);
      }
    }
    this.context.store.putSingleton(SETTINGS_KIND, stored as unknown as Record<string, unknown>);
  }

  private target(name: ProviderName, overrides: { endpoint?: string; api_key?: string } = {}): ProviderTarget | null {
    const stored = this.stored();
    const p = stored.providers[name];
    const endpoint = overrides.endpoint ?? p.endpoint;
    if (!endpoint) return null;
    // The stored key goes only to the stored server: a draft endpoint elsewhere must bring its own key.
    const storedKeyMayGo = overrides.endpoint === undefined || sameOrigin(overrides.endpoint, p.endpoint);
    if (overrides.api_key === undefined && p.api_key && !storedKeyMayGo) {
      throw badRequest('body.api_key is required: a draft endpoint on another server than the stored one must carry its own key');
    }
    const apiKey = overrides.api_key ?? (p.api_key && storedKeyMayGo ? this.context.sealer.open(p.api_key) : undefined);
    return { provider: name, endpoint, model: p.model, apiKey, allowList: stored.outbound_allow_list };
  }

  async models(name: ProviderName): Promise<{ models: string[]; error?: string }> {
    const target = this.target(name);
    if (!target) return name === 'claude' ? { models: await listModels({ provider: 'claude', endpoint: '', model: '', allowList: [] }) } : { models: [], error: 'No endpoint configured' };
    try {
      return { models: await listModels(target) };
    } catch (error) {
      return { models: [], error: (error as Error).message };
    }
  }

  async test(body: { provider: ProviderName; endpoint?: string; api_key?: string }) {
    const target = this.target(body.provider, { endpoint: body.endpoint, api_key: body.api_key });
    if (!target) return { success: false, status_code: '000', endpoint: '', model: this.stored().providers[body.provider].model, error: 'No endpoint configured' };
    const result = await probe(target);
    return { ...result, endpoint: target.endpoint, model: target.model };
  }

  // ---- analysis --------------------------------------------------------------------------------------

  private audit(entry: { kind: 'classification' | 'detection'; alert_id?: string | null; signature_id?: number | null; signature_msg: string; provider: string; model: string; prompt: string; response: string; classification: string | null; duration_ms: number | null; actor: string | null }): void {
    this.context.db.prepare(`INSERT INTO ai_audit_log (id, created_at, kind, alert_id, signature_id, signature_msg, provider, model, prompt_preview, response, classification, duration_ms, actor)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(newId(), isoTime(this.context.clock.now()), entry.kind, entry.alert_id ?? null, entry.signature_id ?? null, entry.signature_msg, entry.provider, entry.model,
        entry.prompt.slice(0, 100), entry.response.slice(0, 8000), entry.classification, entry.duration_ms, entry.actor);
  }

  /**
   * Runs the local detectors over the connection table and recent IDS alerts (always), then, when AI is
   * enabled with an active provider, asks it about up to 20 newest unreviewed high-severity alerts without a
   * suggestion yet (one call per SID) and notes its verdict on that one alert as a suggestion. Every detection
   * and every call is written to the audit log.
   */
  async analyze(actor: string | null) {
    const { ids } = this;
    // The detectors judge what they were given: when the connection table cannot be read, the answer says so
    // (connections_unavailable) instead of reporting a clean table.
    let connectionsUnavailable: string | null = null;
    const flows = await this.context.platform.routing.flows(10_000).catch((error: unknown) => {
      connectionsUnavailable = error instanceof Error ? error.message : String(error);
      this.context.log.warn({ reason: connectionsUnavailable }, 'AI analysis: the connection table could not be read; the connection detectors saw nothing');
      return [];
    });
    const recentAlerts = ids.alerts({ limit: 5000, offset: 0 }).alerts;
    const detections: Detection[] = runDetectors(flows, recentAlerts);
    for (const detection of detections) {
      this.audit({
        kind: 'detection', signature_msg: `${detection.threat_type} from ${detection.source}`, provider: 'local', model: 'detectors',
        prompt: `${flows.length} connections, ${recentAlerts.length} alerts`, response: JSON.stringify(detection),
        classification: detection.severity, duration_ms: null, actor,
      });
    }
    const settings = this.stored();
    let classified = 0;
    let calls = 0;
    let failures = 0;
    let lastError = '';
    const active = settings.active_provider as ProviderName;
    const target = settings.enabled && PROVIDERS.includes(active) ? this.target(active) : null;
    if (target) {
      // An alert that already has a suggestion is not asked about again (it stays unreviewed until the operator decides).
      const suggested = new Set((this.context.db.prepare("SELECT alert_id FROM ai_audit_log WHERE kind = 'classification' AND classification IS NOT NULL AND alert_id IS NOT NULL").all() as { alert_id: string }[]).map((row) => row.alert_id));
      const candidates = ids.alerts({ classification: 'unreviewed', limit: 200, offset: 0 }).alerts.filter((a) => a.severity <= 2 && !suggested.has(a.id));
      const seen = new Set<number>();
      for (const alert of candidates) {
        if (calls >= 20) break;
        if (alert.signature_id !== null) {
          if (seen.has(alert.signature_id)) continue;
          seen.add(alert.signature_id);
        }
        const prompt = `IDS alert: signature "${alert.signature_msg}" (SID ${alert.signature_id ?? 'none'}, severity ${alert.severity}), ${alert.protocol} ${alert.src_ip}:${alert.src_port ?? '-'} -> ${alert.dst_ip}:${alert.dst_port ?? '-'}, metadata ${JSON.stringify(alert.metadata ?? {})}${alert.payload_excerpt ? `, payload "${alert.payload_excerpt.slice(0, 200)}"` : ''}. Is this a true threat?`;
        const started = performance.now();
        calls++;
        try {
          const text = await complete(target, SYSTEM_PROMPT, prompt);
          const verdict = parseVerdict(text);
          if (ids.suggest(alert.id, `AI suggestion (${target.provider}): ${verdict.classification}: ${verdict.reason}`.slice(0, 320))) classified++;
          this.audit({ kind: 'classification', alert_id: alert.id, signature_id: alert.signature_id, signature_msg: alert.signature_msg, provider: target.provider, model: target.model, prompt, response: text, classification: verdict.classification, duration_ms: Math.round(performance.now() - started), actor });
        } catch (error) {
          failures++;
          lastError = (error as Error).message;
          this.audit({ kind: 'classification', alert_id: alert.id, signature_id: alert.signature_id, signature_msg: alert.signature_msg, provider: target.provider, model: target.model, prompt, response: `ERROR: ${lastError}`, classification: null, duration_ms: Math.round(performance.now() - started), actor });
        }
      }
    }
    if (calls > 0 && failures === calls) throw new HttpError(502, `AI analysis failed: ${lastError}`);
    return {
      message: `${classified} alerts given an AI suggestion (none closed: classify them to decide), ${detections.length} local detections${connectionsUnavailable ? ' (connection table unavailable)' : ''}`,
      classified,
      provider_calls: calls,
      failed_calls: failures,
      detections,
      connections_examined: flows.length,
      connections_unavailable: connectionsUnavailable,
      alerts_examined: recentAlerts.length,
    };
  }

  auditLog(limit: number) {
    return this.context.db.prepare('SELECT * FROM ai_audit_log ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit);
  }
}

/** Same scheme, host and port: where a stored credential may be sent. */
function sameOrigin(a: string, b: string | undefined): boolean {
  if (!b) return false;
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
