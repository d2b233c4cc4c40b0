import { Type, type TProperties } from 'typebox';
import { ExportDocumentProperties } from './export-format.js';
import { VersionRecordSchema } from './schema.js';
import { ErrorAnswer } from '../../http/documented-responses.js';

/**
 * Response schemas of the configuration-lifecycle routes. These answers nest whole configurations (objects,
 * diffs per kind) whose fields belong to every other area, so each object lists the fields this area writes and
 * stays open (`additionalProperties: true`): documented without the serialiser dropping anything it does not list.
 */
const Open = <T extends TProperties>(properties: T, description?: string) =>
  Type.Object(properties, { additionalProperties: true, ...(description ? { description } : {}) });
const Nullable = <T extends object>(schema: T) => Type.Union([schema as never, Type.Null()]);
const Strings = Type.Array(Type.String());

const VersionFields = VersionRecordSchema.properties;

/** Sections the caller could not write, each with the permission it lacks. */
const RefusedSections = Type.Array(Type.Object({ kind: Type.String(), permission: Type.String() }));

export const NoSuchVersion = ErrorAnswer('The configuration version named is not stored');

/** A version record plus a message: what save, restore and import answer. */
export const VersionOutcome = Open({ message: Type.String(), ...VersionFields });

/** Bulwark extension: which appliers the apply ran, in order (a failed one makes the whole answer an error). */
const Appliers = Type.Array(Type.Object({ name: Type.String(), ok: Type.Boolean(), ms: Type.Integer() }), {
  description: 'the appliers this apply ran, in order: networking (interface addresses, VLANs, static routes), the packet filter, daemons, tunnels, multi-WAN, …',
});

export const RestoreOutcome = Open({ message: Type.String(), restored_from: Type.Integer(), appliers: Appliers, ...VersionFields });

export const ImportOutcome = Open({ message: Type.String(), objects: Type.Integer(), appliers: Appliers, ...VersionFields });

export const ObjstoreImportOutcome = Open({ message: Type.String(), key: Type.String(), objects: Type.Integer(), appliers: Appliers, ...VersionFields });

const CommitConfirmLast = Open({
  outcome: Type.String({ enum: ['confirmed', 'rolled_back', 'rollback_failed', 'apply_failed'] }),
  at: Type.String(),
  rollback_version: Type.Integer(),
  new_version: Type.Optional(Type.Integer()),
  discarded_version: Type.Optional(Type.Integer()),
  error: Type.Optional(Type.String()),
  appliers: Type.Optional(Appliers),
});

const CommitConfirmFields = {
  active: Type.Boolean(),
  revert_pending: Type.Boolean(),
  started_at: Nullable(Type.String()),
  started_by: Nullable(Type.String()),
  expires_at: Nullable(Type.String()),
  seconds_remaining: Type.Integer(),
  timeout_seconds: Nullable(Type.Integer()),
  description: Type.String(),
  rollback_version: Nullable(Type.Integer()),
  last: Nullable(CommitConfirmLast),
};

export const CommitConfirmStatus = Open(CommitConfirmFields);

export const CommitConfirmStarted = Open({ message: Type.String(), ...CommitConfirmFields });

export const CommitConfirmConfirmed = Open({ message: Type.String(), confirmed: Type.Boolean(), active_version: Nullable(Type.Integer()) });

/** GET /config/version: the active version's summary, or one stored version with its objects. */
export const ActiveVersion = Open({
  version: Nullable(Type.Integer()),
  hash: Nullable(Type.String()),
  created_at: Nullable(Type.String()),
  created_by: Nullable(Type.String()),
  comment: Nullable(Type.String()),
  source: Nullable(Type.String()),
  applied_at: Nullable(Type.String()),
  resource_count: Nullable(Type.Integer()),
  current_hash: Type.Optional(Type.String()),
  current_resource_count: Type.Optional(Type.Integer()),
  pending: Type.Optional(Type.Boolean()),
  commit_confirm: Type.Optional(CommitConfirmStatus),
  objects: Type.Optional(Type.Array(Open({ kind: Type.String(), id: Type.String() }), { description: 'with ?version=N: its objects, secrets redacted' })),
}, 'Without ?version: the active version, the current hash and whether changes are pending; with ?version=N that version and its objects');

const KindDiff = Open({
  added: Type.Array(Open({ id: Type.String(), position: Type.Integer() })),
  removed: Type.Array(Open({ id: Type.String(), position: Type.Integer() })),
  changed: Type.Array(Open({ id: Type.String(), changes: Type.Array(Open({ field: Type.String(), secret: Type.Optional(Type.Boolean()) })) })),
});

const DiffFields = {
  identical: Type.Boolean(),
  summary: Type.Object({ added: Type.Integer(), removed: Type.Integer(), changed: Type.Integer() }),
  kinds: Type.Record(Type.String(), KindDiff, { description: 'per kind: objects added, removed and changed (field by field)' }),
  unified: Type.String({ description: 'a unified text diff of the objects that differ, secrets redacted' }),
};

export const ConfigDiff = Open({
  from: Type.String(),
  to: Type.String(),
  from_version: Nullable(Type.Integer()),
  to_version: Nullable(Type.Integer()),
  ...DiffFields,
});

export const ConfigCheck = Open({
  valid: Type.Boolean(),
  errors: Strings,
  warnings: Strings,
  info: Strings,
  checked: Open({
    objects: Type.Integer(),
    kinds: Type.Array(Open({ kind: Type.String(), objects: Type.Integer(), schema: Type.String(), references_checked: Type.Integer() })),
    appliers: Type.Array(Open({ name: Type.String(), compiled: Type.Boolean(), errors: Type.Integer(), warnings: Type.Integer() })),
  }),
});

export const RestorePreview = Open({
  version: Open(VersionFields),
  valid: Type.Boolean(),
  errors: Strings,
  warnings: Strings,
  refused_sections: RefusedSections,
  diff: Open(DiffFields),
});

export const ImportPreview = Open({
  valid: Type.Boolean(),
  refused_sections: RefusedSections,
  format_version: Type.Integer(),
  app_version: Type.String(),
  exported_at: Type.String(),
  source_version: Nullable(Type.Integer()),
  objects: Type.Integer(),
  secrets: Type.Object({ state: Type.String({ enum: ['redacted', 'passphrase'] }), count: Type.Integer() }, { description: 'how the document carries its secrets' }),
  unresolved_secrets: Strings,
  errors: Strings,
  warnings: Strings,
  diff: Open(DiffFields),
});

export const ExportDocument = Open({
  ...ExportDocumentProperties,
  objects: Type.Array(Open({ kind: Type.String(), id: Type.String(), position: Type.Integer() })),
});

const ObjstoreFields = {
  enabled: Type.Boolean(),
  endpoint: Type.String(),
  bucket: Type.String(),
  region: Type.String(),
  prefix: Type.String(),
  path_style: Type.Boolean(),
  access_key_id: Type.String(),
  upload_on_save: Type.Boolean(),
  schedule_hours: Type.Integer(),
  allow_http: Type.Boolean(),
  allowed_addresses: Strings,
  has_secret_access_key: Type.Boolean(),
  has_backup_passphrase: Type.Boolean(),
  last_upload_at: Nullable(Type.String()),
  last_upload_key: Nullable(Type.String()),
  last_upload_hash: Nullable(Type.String()),
  last_upload_error: Nullable(Type.String()),
  last_attempt_at: Nullable(Type.String()),
};

/** The destination without its secrets (whether each is set instead), and the last upload. */
export const ObjstoreView = Open(ObjstoreFields);

export const ObjstoreTest = Type.Object({ ok: Type.Boolean(), message: Type.String(), steps: Strings, latency_ms: Type.Integer() });

export const ObjstoreListing = Type.Array(Type.Object({ key: Type.String(), size: Type.Integer(), last_modified: Nullable(Type.String()) }));

/** What a foreign config.xml maps to: per-kind counts, mapped objects and skipped elements with reasons. */
export const ThirdPartyPreview = Open({
  valid: Type.Boolean(),
  kind: Type.String({ description: 'opnsense, pfsense, or unknown when the file cannot be read' }),
  version: Nullable(Type.String()),
  system: Nullable(Open({ hostname: Nullable(Type.String()), domain: Nullable(Type.String()), dns_servers: Strings, timezone: Nullable(Type.String()) })),
  interfaces_found: Strings,
  interfaces_need_mapping: Strings,
  counts: Type.Record(Type.String(), Type.Integer()),
  objects: Type.Array(Open({ kind: Type.String(), stored_as: Type.Unknown(), source: Type.Unknown(), data: Type.Unknown(), notes: Type.Unknown() })),
  skipped: Type.Array(Type.Unknown()),
  error: Nullable(Type.String()),
});

export const ThirdPartyImport = Open({
  message: Type.String(),
  kind: Type.String(),
  imported: Type.Record(Type.String(), Type.Integer(), { description: 'objects written per kind' }),
  stored_as: Type.Record(Type.String(), Type.Unknown()),
  objects: Type.Integer(),
  skipped: Type.Array(Type.Unknown()),
  pre_import_version: Nullable(Type.Integer()),
  pending: Type.Boolean(),
});
