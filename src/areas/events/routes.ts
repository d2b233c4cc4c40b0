import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
import { IdParams } from '../../model/schema-helpers.js';
import { badGateway, badRequest, conflict, HttpError } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { SMTP_DEFAULTS } from '../settings/smtp.js';
import { NotifyRule, NotifyRulesStored, WebhookComputed, WebhookStored, WebhookTestAnswer } from './schema.js';
import { Notifier, type NotifyRule as Rule } from './notifier.js';
import { startProducers } from './producers.js';
import { DiskSpaceWatch } from './disk-space.js';

const TAGS = ['notifications'];
const READ = 'settings:read' as const;
const WRITE = 'settings:write' as const;

/**
 * The event bus's subscribers that are not an area's own: the producers with no single owner (producers.ts) and
 * notifications — webhooks (/notify/webhooks), which events reach which channel (/notify/events), and the
 * notifier that delivers them by e-mail (the /notify/smtp settings) and webhook.
 */
export function createEventsArea(context: AppContext): Area & { notifier: Notifier; disk: DiskSpaceWatch } {
  const { models, store, sealer } = context;
  const rulesOf = (data: ConfigData) => ((data.rules ?? []) as Rule[]);
  const webhooks = models.collection({
    kind: 'notify_webhook', noun: 'webhook', writeAccess: WRITE,
    schema: WebhookStored,
    unique: [{ field: 'name', caseInsensitive: true }],
    writeOnly: ['secret'],
    computed: { schema: WebhookComputed, add: (object) => ({ has_secret: typeof object.data.secret === 'string' && object.data.secret !== '' }) },
    validate: (data) => {
      let url: URL;
      try {
        url = new URL(String(data.url));
      } catch {
        throw badRequest('body.url must be an absolute http(s) URL');
      }
      if (url.username || url.password) throw badRequest('body.url must not carry credentials (use secret for the signature)');
    },
    beforeRemove: (object) => {
      const using = rulesOf(rules.read()).filter((rule) => rule.webhooks.includes(object.id)).map((rule) => rule.event);
      if (using.length > 0) throw conflict(`webhook ${object.id} is used by /notify/events for ${using.join(', ')}`);
    },
  });
  const rules = models.singleton({
    kind: 'notify_events', noun: 'notification events', writeAccess: WRITE, schema: NotifyRulesStored,
    validate: (data) => {
      for (const [index, rule] of rulesOf(data).entries()) {
        for (const id of rule.webhooks) {
          if (!store.get('notify_webhook', id)) throw badRequest(`body[${index}].webhooks: webhook ${id} does not exist`);
        }
      }
    },
  });

  const notifier = new Notifier(context, {
    rules: () => rulesOf(rules.read()),
    webhook: (id) => store.get('notify_webhook', id) ?? undefined,
    webhookSecret: (object: ConfigObject) => webhooks.secret(object, 'secret') ?? '',
    smtp: () => {
      const settings: ConfigData = { ...SMTP_DEFAULTS, ...(store.getSingleton('notify_smtp') ?? {}) };
      return { settings, password: settings.password ? sealer.open(String(settings.password)) : undefined };
    },
  });

  const routes: RouteSpec[] = [
    ...collectionRoutes(webhooks, { path: '/api/v1/notify/webhooks', access: { read: READ, write: WRITE }, tags: TAGS }),
    route({
      method: 'POST', path: '/api/v1/notify/webhooks/{id}/test', access: WRITE, tags: TAGS, summary: 'POST a signed test notification to the webhook now (no retries)',
      schema: { params: IdParams(), response: { 200: WebhookTestAnswer, 502: ErrorAnswer('The webhook could not be reached or did not answer 2xx') } },
      handler: async (request) => {
        const webhook = webhooks.find(request.params.id);
        let status: number;
        try {
          status = await notifier.test(webhook);
        } catch (error) {
          if (error instanceof HttpError) throw error;
          throw badGateway(`webhook test failed: ${(error as Error).message}`);
        }
        if (status < 200 || status >= 300) throw badGateway(`webhook test failed: ${String(webhook.data.url)} answered ${status}`);
        return { ok: true, message: `test notification delivered (HTTP ${status})`, status };
      },
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/notify/events', access: READ, tags: TAGS, summary: 'Which events reach which channel',
      schema: { response: { 200: Type.Array(NotifyRule) } },
      handler: () => rulesOf(rules.read()),
    },
    route({
      method: 'PUT', path: '/api/v1/notify/events', access: WRITE, tags: TAGS, summary: 'Replace the list of {event, email, webhooks, min_severity?, rate_limit_secs?}',
      schema: { body: Type.Array(NotifyRule, { maxItems: 60 }), response: { 200: Type.Array(NotifyRule) } },
      handler: (request) => rulesOf(rules.write({ rules: request.body })),
    }),
  ];

  let stopProducers: (() => void) | null = null;
  let unsubscribe: (() => void) | null = null;
  const disk = new DiskSpaceWatch(context);
  return {
    name: 'events',
    notifier,
    disk,
    routes,
    start() {
      unsubscribe = context.events.on('*', (event) => notifier.handle(event));
      notifier.start();
      stopProducers = startProducers(context);
      disk.start();
    },
    stop() {
      disk.stop();
      stopProducers?.();
      unsubscribe?.();
      notifier.stop();
    },
  };
}
