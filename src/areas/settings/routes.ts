import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
import { setEntityTag, strongTagOfValue } from '../../http/conditional.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { badRequest, HttpError, problemOf } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import type { ConfigData } from '../../store/config-store.js';
import { formatSyslog, sendSyslog, type SyslogTarget } from '../../net/syslog.js';
import { SyslogForwarder } from './syslog-forwarder.js';
import { X509Certificate } from 'node:crypto';
import { resolveGuardedHost } from '../../net/guarded-host.js';
import { ADMIN_ALLOW_LIST_KIND, ADMIN_ALLOW_LIST_PATH } from '../../net/admin-allow-list.js';
import { parseCidr } from '../../net/address.js';
import {
  IdsAlerts, LogRotationConfig, OutboundAllowList, LogRotationView, OkMessage, PfTuningBody,
  PfTuningView, SmtpBody, SmtpView, Syslog, SyslogStatusRow,
} from './schema.js';
import { clampIdsAlerts, SECTION_NAME, sectionKind, sectionValues } from './service.js';
import { hostSettingsOf } from '../common/host-settings.js';
import { STATE_TABLE_FIELDS, stateTableTuningOf, type StateTableLive, type StateTableTuning } from '../../platform/host-settings.js';
import { logSizes, writeRotationConfig, type RotationConfig } from './log-rotation.js';
import { LogMaintenance } from './log-maintenance.js';
import { mergeSmtp, normaliseTls, SMTP_DEFAULTS, sendTestMail, validateSmtp } from './smtp.js';

const TAGS = ['settings'];
const READ = 'settings:read' as const;
const WRITE = 'settings:write' as const;
const MIN_STATES = 1000;
const MAX_STATES = 4_000_000;

function routes(context: AppContext, maintenance: LogMaintenance, expose: (forwarder: SyslogForwarder) => void): RouteSpec[] {
  const { store, sealer, config, models } = context;
  const singleton = (kind: string, path: string, schema: typeof IdsAlerts | typeof Syslog | typeof LogRotationConfig | typeof OutboundAllowList, noun: string, validate?: (data: ConfigData) => void) => {
    const model = models.singleton({ kind, noun, writeAccess: WRITE, schema, validate });
    return { model, routes: singletonRoutes(model, { path, access: { read: READ, write: WRITE }, tags: TAGS }) };
  };

  const idsAlerts = singleton('settings_ids_alerts', '/api/v1/settings/ids-alerts', IdsAlerts, 'IDS alert retention');
  const syslog = singleton('settings_syslog', '/api/v1/settings/syslog', Syslog, 'remote syslog', (data) => {
    if (data.enabled && !String(data.host).trim()) throw badRequest('body.host is required when syslog is enabled');
    validateCaPem(String(data.ca_pem ?? ''));
  });
  const outbound = singleton(ADMIN_ALLOW_LIST_KIND, ADMIN_ALLOW_LIST_PATH, OutboundAllowList, 'outbound allow-list', (data) => {
    (data.allowed_addresses as string[]).forEach((entry, index) => {
      if (!parseCidr(entry)) throw badRequest(`body.allowed_addresses.${index} must be an IP address or CIDR`);
    });
  });
  const rotation = singleton('settings_log_rotation', '/api/v1/settings/log-rotation', LogRotationConfig, 'log rotation');
  const forwarder = new SyslogForwarder(context, () => syslog.model.read());
  models.onChanged(['settings_syslog'], () => forwarder.reconfigure());
  expose(forwarder);

  const hostSite = hostSettingsOf(context);
  const pfView = async (warning: string | null = null, read?: StateTableLive) => {
    const stored = (store.getSingleton('settings_pf_tuning') ?? {}) as StateTableTuning;
    const pf = await context.platform.packetFilter.status();
    // simulated: the values are rendered only, so the configured ones are what a host would hold.
    const live = context.platform.simulated ? { ...(await hostSite.host.readStateTable()), ...stored } : read ?? await hostSite.host.readStateTable();
    const timeouts = (source: Partial<StateTableLive>) => Object.fromEntries(STATE_TABLE_FIELDS.filter((f) => f !== 'max_states').map((f) => [f, source[f] ?? null]));
    return {
      configured_max_states: Number(stored.max_states ?? live.max_states ?? 100_000),
      live_max_states: live.max_states,
      current_states: pf.states,
      min_states: MIN_STATES,
      max_states: MAX_STATES,
      configured_timeouts: timeouts(stored),
      live_timeouts: timeouts(live),
      warning: warning ?? (context.platform.simulated ? 'simulated platform: rendered into the data directory; the kernel is not changed' : null),
    };
  };
  const rotationView = () => ({
    config: rotation.model.read(),
    logs: logSizes(config.dataDir),
    conf_path: `${config.dataDir}/logrotate.conf`,
    limits: { min_size_mb: 1, max_size_mb: 500, max_keep: 50 },
  });
  // Hand-kept section: declared so import and restore hold it to the same checks and permission as its PUT.
  store.kinds.declare({
    kind: 'notify_smtp', shape: 'singleton', writeOnly: ['password'], writeAccess: WRITE,
    check: (data) => problemOf(() => validateSmtp(data)),
  });
  const smtpRead = (): ConfigData => ({ ...SMTP_DEFAULTS, ...(store.getSingleton('notify_smtp') ?? {}) });
  const smtpView = () => {
    const { password, ...rest } = smtpRead();
    return { ...rest, has_password: Boolean(password) };
  };
  const SyslogDraft = Type.Optional(Type.Partial(Syslog));

  return [
    {
      method: 'GET', conditional: 'read', path: '/api/v1/settings/pf-tuning', access: READ, tags: TAGS, summary: 'State-table size: configured, live and current',
      schema: { response: { 200: PfTuningView } },
      // tagged by what a PUT changes: the state table filling up between a read and a save is nobody's change
      handler: (_request, reply) => {
        setEntityTag(reply, strongTagOfValue(store.getSingleton('settings_pf_tuning') ?? {}));
        return pfView();
      },
    },
    route({
      method: 'PUT', path: '/api/v1/settings/pf-tuning', access: WRITE, tags: TAGS,
      summary: 'Set the state-table limit (1000..4000000) and timeouts; put in force as sysctls (linux) or pf options (freebsd) and read back; 409 when the kernel refuses a value',
      schema: { body: PfTuningBody, response: { 200: PfTuningView } },
      handler: (request) => hostSite.exclusive(async () => {
        const previous = stateTableTuningOf(store.getSingleton('settings_pf_tuning') ?? {});
        const desired = { ...previous, ...request.body } as StateTableTuning;
        const applied = await hostSite.host.stateTable(desired);
        await hostSite.keep('settings_pf_tuning', () => store.putSingleton('settings_pf_tuning', desired), () => hostSite.host.stateTable(previous));
        return pfView(applied.warning, applied.live);
      }),
    }),
    idsAlerts.routes[0],
    route({
      method: 'PUT', path: '/api/v1/settings/ids-alerts', access: WRITE, tags: TAGS, summary: 'IDS alert ring size and age (clamped to 8..512 MB and 1 h..7 d)',
      schema: { body: { type: 'object', properties: { max_mb: Type.Integer(), max_age_secs: Type.Integer() }, additionalProperties: false }, response: { 200: IdsAlerts } },
      handler: (request) => idsAlerts.model.write(clampIdsAlerts(request.body)),
    }),
    ...syslog.routes,
    ...outbound.routes,
    {
      method: 'POST', path: '/api/v1/settings/syslog/test', access: WRITE, tags: TAGS, summary: 'Send one test message (to a draft configuration when its host is set)',
      schema: { body: SyslogDraft, response: { 200: OkMessage, 502: ErrorAnswer('The test message could not be delivered') } },
      handler: async (request) => {
        const draft = (request.body ?? {}) as ConfigData;
        const target = { ...syslog.model.read(), ...(draft.host ? draft : {}) } as unknown as SyslogTarget & { allowed_addresses: string[] };
        if (!target.host) throw badRequest('syslog is not configured: set host first (or send a draft with a host)');
        validateCaPem(String(target.ca_pem ?? ''));
        const line = formatSyslog(target, { severity: 6, app: 'bulwark', msgid: 'TEST', structured: [], text: 'Bulwark syslog test message', at: new Date(context.clock.now()) });
        const { address } = await resolveGuardedHost(target.host, target.allowed_addresses);
        try {
          await sendSyslog(target, address, line);
        } catch (error) {
          forwarder.countTest({ ok: false, error: (error as Error).message });
          throw new HttpError(502, `syslog test failed: ${(error as Error).message}`);
        }
        forwarder.countTest({ ok: true });
        return { ok: true, message: `test message sent to ${target.host}:${target.port} over ${target.transport}` };
      },
    },
    {
      method: 'GET', path: '/api/v1/settings/syslog/status', access: READ, tags: TAGS, summary: 'Delivery counters per process',
      schema: { response: { 200: Type.Array(SyslogStatusRow) } },
      handler: () => forwarder.status(),
    },
    {
      method: 'GET', conditional: 'read', path: '/api/v1/settings/log-rotation', access: READ, tags: TAGS, summary: 'Rotation policy and the managed logs with their sizes',
      schema: { response: { 200: LogRotationView } },
      // tagged by the policy, not the sizes: a log growing between a read and a save is nobody's change
      handler: (_request, reply) => {
        setEntityTag(reply, strongTagOfValue(rotation.model.read()));
        return rotationView();
      },
    },
    route({
      method: 'PUT', path: '/api/v1/settings/log-rotation', access: WRITE, tags: TAGS, summary: 'Change the policy; regenerates the rotation config and runs one pass',
      schema: { body: { ...Type.Partial(LogRotationConfig), additionalProperties: false }, response: { 200: LogRotationView } },
      handler: async (request) => {
        const stored = rotation.model.write(request.body) as unknown as RotationConfig;
        writeRotationConfig(config.dataDir, stored);
        await maintenance.rotate();
        return rotationView();
      },
    }),
    route({
      method: 'POST', path: '/api/v1/settings/log-rotation/rotate', access: WRITE, tags: TAGS, summary: 'Rotate now: one managed log (path) or a normal pass',
      schema: { body: Type.Optional(Type.Object({ path: Type.Optional(Type.String({ maxLength: 4096 })) }, { additionalProperties: false })), response: { 200: Type.Object({ ok: Type.Boolean(), message: Type.String(), logs: Type.Array(Type.Object({ service: Type.String(), path: Type.String(), size_bytes: Type.Union([Type.Integer(), Type.Null()]), rotated: Type.Integer(), total_bytes: Type.Integer() })) }) } },
      handler: async (request) => {
        const path = request.body?.path;
        const rotated = await maintenance.rotate(path || undefined);
        return { ok: true, message: rotated.length ? `rotated ${rotated.join(', ')}` : 'nothing to rotate', logs: logSizes(config.dataDir) };
      },
    }),
    route({
      method: 'GET', conditional: 'read', path: '/api/v1/settings/{section}', access: READ, tags: TAGS, summary: 'Generic key/value section (values are text; an unknown section is {})',
      schema: { params: Type.Object({ section: Type.String({ pattern: SECTION_NAME }) }), response: { 200: Type.Record(Type.String(), Type.String()) } },
      handler: (request) => store.getSingleton(sectionKind(request.params.section)) ?? {},
    }),
    route({
      method: 'PUT', path: '/api/v1/settings/{section}', access: WRITE, tags: TAGS, summary: 'Set keys of a generic section (api_server.trusted_proxies applies at the next restart)',
      schema: { params: Type.Object({ section: Type.String({ pattern: SECTION_NAME }) }), body: Type.Record(Type.String(), Type.Unknown(), { maxProperties: 64 }), response: { 200: Type.Record(Type.String(), Type.String()) } },
      handler: (request) => {
        const { section } = request.params;
        const values = sectionValues(request.body, section);
        return store.putSingleton(sectionKind(section), { ...(store.getSingleton(sectionKind(section)) ?? {}), ...values });
      },
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/notify/smtp/config', access: READ, tags: ['notifications'], summary: 'SMTP notification settings (the password is never returned)',
      schema: { response: { 200: SmtpView } },
      handler: smtpView,
    },
    route({
      method: 'PUT', path: '/api/v1/notify/smtp/config', access: WRITE, tags: ['notifications'], summary: 'Change SMTP notifications (password: absent or null keeps it, "" clears it)',
      schema: { body: SmtpBody, response: { 200: SmtpView } },
      handler: (request) => {
        const current = smtpRead();
        const next = mergeSmtp(current, request.body);
        if (typeof request.body.password === 'string' && next.password) next.password = sealer.seal(String(next.password));
        store.putSingleton('notify_smtp', next);
        return smtpView();
      },
    }),
    {
      method: 'POST', path: '/api/v1/notify/smtp/test', access: WRITE, tags: ['notifications'], summary: 'Send a test e-mail (to a draft configuration when its host is set)',
      schema: { body: Type.Optional(SmtpBody), response: { 200: OkMessage, 502: ErrorAnswer('The test mail could not be delivered') } },
      handler: async (request) => {
        const draft = (request.body ?? {}) as ConfigData;
        const stored = smtpRead();
        if (!draft.host) return sendTestMail(stored, stored.password ? sealer.open(String(stored.password)) : undefined);
        const settings: ConfigData = { ...stored, ...draft, tls: normaliseTls(draft.tls ?? stored.tls) };
        // The stored password goes only to the stored server: a draft that names another one brings its own.
        const sameServer = String(draft.host).toLowerCase() === String(stored.host).toLowerCase() && Number(settings.port) === Number(stored.port);
        if (typeof draft.password === 'string') return sendTestMail(settings, draft.password);
        if (settings.username && !sameServer) throw badRequest('body.password is required: a draft naming another server than the stored one must carry its own credentials');
        return sendTestMail(settings, sameServer && stored.password ? sealer.open(String(stored.password)) : undefined);
      },
    },
  ];
}

/** A CA certificate for syslog over TLS: empty (the system CAs) or PEM that parses as an X.509 certificate. */
function validateCaPem(pem: string): void {
  if (!pem.trim()) return;
  try {
    new X509Certificate(pem);
  } catch {
    throw badRequest('body.ca_pem must be a PEM-encoded CA certificate');
  }
}

export function createSettingsArea(context: AppContext): Area & { maintenance: LogMaintenance } {
  // Local log files, their rotation and IDS alert retention run on Bulwark's own scheduler (log-maintenance.ts).
  const maintenance = new LogMaintenance(context, context.localLogs);
  let forwarder: SyslogForwarder | undefined;
  return {
    name: 'settings',
    routes: routes(context, maintenance, (created) => (forwarder = created)),
    maintenance,
    start: async () => {
      await maintenance.start();
      forwarder?.start();
    },
    stop: async () => {
      forwarder?.stop();
      await maintenance.stop();
    },
  };
}
