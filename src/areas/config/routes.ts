import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { RouteSpec } from '../../http/route.js';
import { ConfigService } from './service.js';
import { actorOfRequest, IMPORT_BODY_LIMIT } from './request.js';
import { CommitConfirm } from './commit-confirm.js';
import { ObjectStorageBackups } from './objstore.js';
import { thirdPartyRoutes } from './thirdparty/routes.js';
import {
  AnyObject, CommitConfirmBody, DiffQuery, HistoryQuery, ImportBody, PassphraseBody, RetentionBody, RetentionSchema, SaveBody, VersionBody,
  VersionQuery, VersionRecordSchema,
} from './schema.js';

export interface ConfigServices {
  service: ConfigService;
  commitConfirm: CommitConfirm;
  objstore: ObjectStorageBackups;
}

const instances = new WeakMap<AppContext, ConfigServices>();

/** The services of one app (tests reach them to drive the commit-confirm clock deterministically). */
export function configServices(context: AppContext): ConfigServices {
  let services = instances.get(context);
  if (!services) {
    const service = new ConfigService(context);
    services = { service, commitConfirm: new CommitConfirm(context, service), objstore: new ObjectStorageBackups(context, service) };
    instances.set(context, services);
  }
  return services;
}

const tags = ['config'];

function lifecycleRoutes(context: AppContext, { service, commitConfirm }: ConfigServices): RouteSpec[] {
  return [
    {
      method: 'GET', path: '/api/v1/config/history', access: 'backup:read', tags, summary: 'Configuration versions, newest first (X-Total-Count)',
      schema: { querystring: HistoryQuery, response: { 200: { type: 'array', items: VersionRecordSchema } } },
      handler: (request, reply) => {
        const { limit, offset } = request.query as { limit: number; offset: number };
        const { records, total } = service.versions.list(limit, offset);
        reply.header('x-total-count', String(total));
        return records.map((r) => service.withActive(r));
      },
    },
    {
      method: 'GET', path: '/api/v1/config/version', access: 'backup:read', tags,
      summary: 'The active (running) version and whether changes are pending; with ?version=N that version and its objects (secrets redacted)',
      schema: { querystring: VersionQuery },
      handler: async (request) => {
        const { version } = request.query as { version?: number };
        if (version === undefined) return { ...service.activeSummary(), commit_confirm: await commitConfirm.status() };
        const record = service.requireVersion(version);
        return { ...service.withActive(record), objects: service.redacted(service.contentOf(version)) };
      },
    },
    {
      method: 'GET', path: '/api/v1/config/diff', access: 'backup:read', tags,
      summary: 'Difference between two versions (default: active → current): per kind added, removed, changed fields; plus a unified text diff',
      schema: { querystring: DiffQuery },
      handler: (request) => {
        const query = request.query as { from?: string; to?: string; v1?: string; v2?: string };
        return service.diff(query.from ?? query.v1 ?? 'active', query.to ?? query.v2 ?? 'current');
      },
    },
    {
      method: 'GET', path: '/api/v1/config/check', access: 'backup:read', tags,
      summary: 'Validates the stored configuration: schemas, unique fields, references, invariants, and each applier\'s offline compile check',
      handler: () => service.check(),
    },
    {
      method: 'POST', path: '/api/v1/config/save', access: 'backup:write', tags, summary: 'Records the current configuration as a version (and uploads it when object storage is on)',
      schema: { body: SaveBody },
      handler: (request) => {
        const body = (request.body ?? {}) as { comment?: string };
        const record = service.save(actorOfRequest(request), body.comment ?? null);
        return { message: `Configuration saved as version ${record.version}`, ...service.withActive(record) };
      },
    },
    {
      method: 'POST', path: '/api/v1/config/restore', access: 'backup:write', tags, summary: 'Makes a stored version the configuration and applies it',
      schema: { body: VersionBody },
      handler: async (request) => {
        const { version } = request.body as { version: number };
        const record = await service.restore(version, actorOfRequest(request));
        return { message: `Restored to version ${version}`, restored_from: version, ...service.withActive(record) };
      },
    },
    {
      method: 'POST', path: '/api/v1/config/restore-preview', access: 'backup:read', tags, summary: 'What restoring a version would change, and whether it validates; writes nothing',
      schema: { body: VersionBody },
      handler: (request) => service.restorePreview((request.body as { version: number }).version, actorOfRequest(request)),
    },
    {
      method: 'GET', conditional: 'read', path: '/api/v1/config/retention', access: 'backup:read', tags, summary: 'Version retention: at most N versions and/or N days',
      schema: { response: { 200: RetentionSchema } },
      handler: () => service.retention(),
    },
    {
      method: 'PUT', path: '/api/v1/config/retention', access: 'backup:write', tags,
      summary: 'Changes retention and prunes at once (never the active version or a commit-confirm rollback target); null lifts a limit',
      schema: { body: RetentionBody, response: { 200: RetentionSchema } },
      handler: (request) => service.setRetention(request.body as { max_versions?: number | null; max_days?: number | null }, actorOfRequest(request)),
    },
    {
      method: 'POST', path: '/api/v1/config/commit-confirm', access: 'backup:write', tags,
      summary: 'Opens a commit-confirm window: unless confirmed in time, the running version is restored and re-applied (409 while one is open)',
      schema: { body: CommitConfirmBody },
      handler: async (request) => {
        const body = (request.body ?? {}) as { timeout_seconds?: number; timeout_secs?: number; description?: string; apply?: boolean };
        const timeout = body.timeout_seconds ?? body.timeout_secs ?? 300;
        const status = await commitConfirm.start(actorOfRequest(request), { timeout_seconds: timeout, description: body.description, apply: body.apply });
        return {
          message: `Commit-confirm window open: confirm within ${timeout} seconds (before ${status.expires_at}) or version ${status.rollback_version} is restored and re-applied automatically`,
          ...status,
        };
      },
    },
    {
      method: 'POST', path: '/api/v1/config/commit-confirm/confirm', access: 'backup:write', tags, summary: 'Confirms the open window: the changes are kept (409 when none is open)',
      handler: (request) => commitConfirm.confirm(actorOfRequest(request)),
    },
    {
      method: 'GET', path: '/api/v1/config/commit-confirm/status', access: 'backup:read', tags, summary: 'Whether a window is open, time remaining, rollback target, and how the last one ended',
      handler: () => commitConfirm.status(),
    },
    {
      method: 'GET', path: '/api/v1/config/export', access: 'backup:read', tags, summary: 'The whole configuration as a versioned JSON document, every secret redacted',
      handler: () => service.exportDocument(),
    },
    {
      method: 'POST', path: '/api/v1/config/export', access: 'backup:write', tags,
      summary: 'The whole configuration with secrets wrapped under a passphrase (scrypt + AES-256-GCM; portable to another appliance)',
      schema: { body: PassphraseBody },
      handler: (request) => service.exportDocument((request.body as { passphrase: string }).passphrase, actorOfRequest(request)),
    },
    {
      method: 'POST', path: '/api/v1/config/import-preview', access: 'backup:read', tags, bodyLimit: IMPORT_BODY_LIMIT,
      summary: 'Dry run of an import: authenticity, secrets, validation problems and the difference; writes nothing',
      schema: { body: ImportBody },
      handler: (request) => service.importPreview(request.body as Record<string, unknown>, actorOfRequest(request)),
    },
    {
      method: 'POST', path: '/api/v1/config/import', access: 'backup:write', tags, bodyLimit: IMPORT_BODY_LIMIT,
      summary: 'Imports an export document (passphrase for portable exports): all or nothing, then applied',
      schema: { body: ImportBody, response: { 200: AnyObject } },
      handler: async (request) => {
        const { record, objects } = await service.importDocument(request.body as Record<string, unknown>, actorOfRequest(request));
        return { message: `Imported ${objects} objects as version ${record.version}`, objects, ...service.withActive(record) };
      },
    },
  ];
}

export const configArea: Area = {
  name: 'config',
  routes(context) {
    const services = configServices(context);
    return [...lifecycleRoutes(context, services), ...services.objstore.routes(), ...thirdPartyRoutes(context, services)];
  },
  async start(context) {
    const { commitConfirm, objstore } = configServices(context);
    // A window that expired while the service was down is reverted now. This area is registered last, so every
    // other area's applier is registered before this rollback applies.
    await commitConfirm.expireIfDue();
    commitConfirm.startTimer();
    objstore.startSchedule();
  },
  async stop(context) {
    const { commitConfirm, objstore } = configServices(context);
    await commitConfirm.stopTimer();
    await objstore.stopSchedule();
  },
};
