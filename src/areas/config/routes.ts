import type { Static } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { ConfigService } from './service.js';
import { actorOfRequest, IMPORT_BODY_LIMIT } from './request.js';
import { CommitConfirm } from './commit-confirm.js';
import { ObjectStorageBackups } from './objstore.js';
import { thirdPartyRoutes } from './thirdparty/routes.js';
import * as A from './answers.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
// The management-cut confirmation of PUT /interfaces/config/{name}: an object-storage import is held to the same rule.
import { InterfaceConfigQuery } from '../networking/schema.js';
import {
  CommitConfirmBody, DiffQuery, ForceQuery, ReplaceQuery, HistoryQuery, ImportBody, PassphraseBody, RetentionBody, RetentionSchema, SaveBody, VersionBody,
  VersionQuery, VersionRecordSchema, ObjstoreConfigBody, ObjstoreImportBody,
} from './schema.js';

export interface ConfigServices {
  service: ConfigService;
  commitConfirm: CommitConfirm;
  objstore: ObjectStorageBackups;
}

/**
 * The configuration lifecycle: versions, diff, check, restore, commit-confirm, export and import, off-box
 * backups and third-party import. Wired last: its start-up commit-confirm rollback applies through every other
 * area's applier. Tests reach its services to drive the commit-confirm clock deterministically.
 */
export function createConfigArea(context: AppContext): Area & ConfigServices {
  const service = new ConfigService(context);
  const commitConfirm = new CommitConfirm(context, service);
  const objstore = new ObjectStorageBackups(context, service);
  return {
    name: 'config',
    service,
    commitConfirm,
    objstore,
    routes: [...lifecycleRoutes(service, commitConfirm), ...objstoreRoutes(objstore), ...thirdPartyRoutes(context, service)],
    async start() {
      // A window that expired while the service was down is reverted now, through every area's applier.
      await commitConfirm.expireIfDue();
      commitConfirm.startTimer();
      objstore.startSchedule();
    },
    async stop() {
      await commitConfirm.stopTimer();
      await objstore.stopSchedule();
    },
  };
}

const tags = ['config'];

function lifecycleRoutes(service: ConfigService, commitConfirm: CommitConfirm): RouteSpec[] {
  return [
    route({
      method: 'GET', path: '/api/v1/config/history', access: 'backup:read', tags, summary: 'Configuration versions, newest first (X-Total-Count)',
      schema: { querystring: HistoryQuery, response: { 200: { type: 'array', items: VersionRecordSchema } } },
      handler: (request, reply) => {
        const { limit, offset } = request.query;
        const { records, total } = service.versions.list(limit, offset);
        reply.header('x-total-count', String(total));
        return records.map((r) => service.withActive(r));
      },
    }),
    route({
      method: 'GET', path: '/api/v1/config/version', access: 'backup:read', tags,
      summary: 'The active (running) version and whether changes are pending; with ?version=N that version and its objects (secrets redacted)',
      schema: { querystring: VersionQuery, response: { 200: A.ActiveVersion, 404: A.NoSuchVersion } },
      handler: async (request) => {
        const { version } = request.query;
        if (version === undefined) return { ...service.activeSummary(), commit_confirm: await commitConfirm.status() };
        const record = service.requireVersion(version);
        return { ...service.withActive(record), objects: service.redacted(service.contentOf(version)) };
      },
    }),
    route({
      method: 'GET', path: '/api/v1/config/diff', access: 'backup:read', tags,
      summary: 'Difference between two versions (default: active → current): per kind added, removed, changed fields; plus a unified text diff',
      schema: { querystring: DiffQuery, response: { 200: A.ConfigDiff, 404: A.NoSuchVersion } },
      handler: (request) => {
        const query = request.query;
        return service.diff(query.from ?? query.v1 ?? 'active', query.to ?? query.v2 ?? 'current');
      },
    }),
    {
      method: 'GET', path: '/api/v1/config/check', access: 'backup:read', tags,
      summary: 'Validates the stored configuration: schemas, unique fields, references, invariants, and each applier\'s offline compile check',
      schema: { response: { 200: A.ConfigCheck } },
      handler: () => service.check(),
    },
    route({
      method: 'POST', path: '/api/v1/config/save', access: 'backup:write', tags, summary: 'Records the current configuration as a version (and uploads it when object storage is on)',
      schema: { body: SaveBody, response: { 200: A.VersionOutcome } },
      handler: (request) => {
        const body: Static<typeof SaveBody> = request.body ?? {}; // the body may be left out
        const record = service.save(actorOfRequest(request), body.comment ?? null);
        return { message: `Configuration saved as version ${record.version}`, ...service.withActive(record) };
      },
    }),
    route({
      method: 'POST', path: '/api/v1/config/restore', access: 'backup:write', tags, summary: 'Makes a stored version the configuration and applies it',
      schema: { body: VersionBody, querystring: ReplaceQuery, response: { 200: A.RestoreOutcome, 404: A.NoSuchVersion } },
      handler: async (request) => {
        const { version } = request.body;
        const { record, appliers } = await service.restore(version, actorOfRequest(request), request.query.force);
        return { message: `Restored to version ${version}`, restored_from: version, appliers, ...service.withActive(record) };
      },
    }),
    route({
      method: 'POST', path: '/api/v1/config/restore-preview', access: 'backup:read', tags, summary: 'What restoring a version would change, and whether it validates; writes nothing',
      schema: { body: VersionBody, response: { 200: A.RestorePreview, 404: A.NoSuchVersion } },
      handler: (request) => service.restorePreview(request.body.version, actorOfRequest(request)),
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/config/retention', access: 'backup:read', tags, summary: 'Version retention: at most N versions and/or N days',
      schema: { response: { 200: RetentionSchema } },
      handler: () => service.retention(),
    },
    route({
      method: 'PUT', path: '/api/v1/config/retention', access: 'backup:write', tags,
      summary: 'Changes retention and prunes at once (never the active version or a commit-confirm rollback target); null lifts a limit',
      schema: { body: RetentionBody, response: { 200: RetentionSchema } },
      handler: (request) => service.setRetention(request.body, actorOfRequest(request)),
    }),
    route({
      method: 'POST', path: '/api/v1/config/commit-confirm', access: 'backup:write', tags,
      summary: 'Opens a commit-confirm window: unless confirmed in time, the running version is restored and re-applied (409 while one is open)',
      schema: { body: CommitConfirmBody, response: { 200: A.CommitConfirmStarted } },
      handler: async (request) => {
        const body: Static<typeof CommitConfirmBody> = request.body ?? {}; // the body may be left out
        const timeout = body.timeout_seconds ?? body.timeout_secs ?? 300;
        const status = await commitConfirm.start(actorOfRequest(request), { timeout_seconds: timeout, description: body.description, apply: body.apply, auto_confirm: body.auto_confirm, force: body.force });
        return {
          message: `Commit-confirm window open: confirm within ${timeout} seconds (before ${status.expires_at}) or version ${status.rollback_version} is restored and re-applied automatically`,
          ...status,
        };
      },
    }),
    {
      method: 'POST', path: '/api/v1/config/commit-confirm/confirm', access: 'backup:write', tags, summary: 'Confirms the open window: the changes are kept (409 when none is open)',
      schema: { response: { 200: A.CommitConfirmConfirmed } },
      handler: (request) => commitConfirm.confirm(actorOfRequest(request)),
    },
    {
      method: 'GET', path: '/api/v1/config/commit-confirm/status', access: 'backup:read', tags, summary: 'Whether a window is open, time remaining, rollback target, and how the last one ended',
      schema: { response: { 200: A.CommitConfirmStatus } },
      handler: () => commitConfirm.status(),
    },
    {
      method: 'GET', path: '/api/v1/config/export', access: 'backup:read', tags, summary: 'The whole configuration as a versioned JSON document, every secret redacted',
      schema: { response: { 200: A.ExportDocument } },
      handler: () => service.exportDocument(),
    },
    route({
      method: 'POST', path: '/api/v1/config/export', access: 'backup:write', tags,
      summary: 'The whole configuration with secrets wrapped under a passphrase (scrypt + AES-256-GCM; portable to another appliance)',
      schema: { body: PassphraseBody, response: { 200: A.ExportDocument } },
      handler: (request) => service.exportDocument(request.body.passphrase, actorOfRequest(request)),
    }),
    route({
      method: 'POST', path: '/api/v1/config/import-preview', access: 'backup:read', tags, bodyLimit: IMPORT_BODY_LIMIT,
      summary: 'Dry run of an import: authenticity, secrets, validation problems and the difference; writes nothing',
      schema: { body: ImportBody, response: { 200: A.ImportPreview } },
      handler: (request) => service.importPreview(request.body, actorOfRequest(request)),
    }),
    route({
      method: 'POST', path: '/api/v1/config/import', access: 'backup:write', tags, bodyLimit: IMPORT_BODY_LIMIT,
      summary: 'Imports an export document (passphrase for portable exports): all or nothing, then applied',
      schema: { body: ImportBody, querystring: ReplaceQuery, response: { 200: A.ImportOutcome } },
      handler: async (request) => {
        const { record, objects, appliers } = await service.importDocument(request.body, actorOfRequest(request), 'import', 'import', request.query.force);
        return { message: `Imported ${objects} objects as version ${record.version}`, objects, appliers, ...service.withActive(record) };
      },
    }),
  ];
}

const backupTags = ['config', 'backup'];

function objstoreRoutes(objstore: ObjectStorageBackups): RouteSpec[] {
  return [
    {
      method: 'GET', conditional: 'read', path: '/api/v1/backup/objstore/config', access: 'backup:read', tags: backupTags, summary: 'Object-storage backup destination (secrets never returned) and the last upload',
      schema: { response: { 200: A.ObjstoreView } },
      handler: () => objstore.settingsView(),
    },
    route({
      method: 'PUT', path: '/api/v1/backup/objstore/config', access: 'backup:write', tags: backupTags, summary: 'Changes the destination (fields not sent are kept; "" clears a secret)',
      schema: { body: ObjstoreConfigBody, response: { 200: A.ObjstoreView } },
      handler: (request) => objstore.writeSettings(request.body, actorOfRequest(request).permissions),
    }),
    {
      method: 'POST', path: '/api/v1/backup/objstore/test', access: 'backup:write', tags: backupTags,
      summary: 'Checks credentials and connectivity: the bucket is reachable and a probe object can be written, read and deleted',
      schema: { response: { 200: A.ObjstoreTest } },
      handler: () => objstore.test(),
    },
    {
      method: 'GET', path: '/api/v1/backup/objstore/list', access: 'backup:read', tags: backupTags, summary: 'Backups under the prefix, newest first (X-Total-Count)',
      schema: { response: { 200: A.ObjstoreListing, 502: ErrorAnswer('The object storage refused or failed the listing'), 409: ErrorAnswer('No destination is configured yet: the message names what to set') } },
      handler: async (_request, reply) => {
        const items = await objstore.list();
        reply.header('x-total-count', String(items.length));
        return items;
      },
    },
    route({
      method: 'POST', path: '/api/v1/backup/objstore/import', access: 'backup:write', tags: backupTags, bodyLimit: IMPORT_BODY_LIMIT,
      summary: 'Downloads one backup and restores it (validated and applied like POST /config/import)',
      schema: { body: ObjstoreImportBody, querystring: InterfaceConfigQuery, response: { 200: A.ObjstoreImportOutcome, 404: ErrorAnswer('No backup is stored under the key'), 502: ErrorAnswer('The object storage refused or failed the download') } },
      handler: (request) => {
        const { key, passphrase } = request.body;
        return objstore.importBackup(key, passphrase, actorOfRequest(request));
      },
    }),
  ];
}
