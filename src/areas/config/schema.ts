import { Type } from 'typebox';

const Nullable = <T extends object>(schema: T) => Type.Union([schema as never, Type.Null()]);

export const VersionRecordSchema = Type.Object({
  version: Type.Integer(),
  hash: Type.String({ description: 'sha256 of the canonical configuration content' }),
  created_at: Type.String(),
  created_by: Type.String(),
  comment: Nullable(Type.String()),
  source: Type.String({ description: 'apply, save, restore, import, rollback, pre-rollback, commit-confirm, objstore-import, thirdparty-import, cluster-sync' }),
  applied: Type.Boolean(),
  applied_at: Nullable(Type.String()),
  rolled_back: Type.Boolean(),
  resource_count: Type.Integer(),
  active: Type.Boolean(),
});

export const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10000, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
}, { additionalProperties: false });

export const VersionQuery = Type.Object({
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'a stored version (with its objects, secrets redacted); default: the active version' })),
}, { additionalProperties: false });

const VersionReference = Type.String({ pattern: '^(\\d{1,15}|active|current)$', description: 'a version number, `active` (running) or `current` (the store now)' });
export const DiffQuery = Type.Object({
  from: Type.Optional(VersionReference),
  to: Type.Optional(VersionReference),
  v1: Type.Optional(VersionReference),
  v2: Type.Optional(VersionReference),
}, { additionalProperties: false });

export const SaveBody = Type.Object({ comment: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false });

export const VersionBody = Type.Object({ version: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

export const RetentionBody = Type.Object({
  max_versions: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 100000 }))),
  max_days: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 36500 }))),
}, { additionalProperties: false });

export const RetentionSchema = Type.Object({
  max_versions: Nullable(Type.Integer()),
  max_days: Nullable(Type.Integer()),
  current_count: Type.Integer(),
  protected_versions: Type.Array(Type.Integer()),
  pruned: Type.Optional(Type.Array(Type.Integer())),
});

export const CommitConfirmBody = Type.Object({
  timeout_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, description: 'default 300' })),
  timeout_secs: Type.Optional(Type.Integer({ minimum: 10, maximum: 86400, description: 'alias of timeout_seconds' })),
  description: Type.Optional(Type.String({ maxLength: 200 })),
  apply: Type.Optional(Type.Boolean({ description: 'apply the stored configuration once the window is open (default false)' })),
  auto_confirm: Type.Optional(Type.Boolean({ description: 'confirm by itself once every enabled assertion holds after the apply and this client has reached the API again; roll back at once when one fails (default false)' })),
  force: Type.Optional(Type.Boolean({ description: 'apply even when enabled transit assertions would break (audited)' })),
}, { additionalProperties: false });
const force = Type.Boolean({ default: false, description: 'apply even when enabled transit assertions would break (recorded in the audit trail)' });
export const ForceQuery = Type.Object({ force }, { additionalProperties: false });
/** Restore and import: assertions may be overridden, and a change cutting the request's own address confirmed. */
export const ReplaceQuery = Type.Object({
  force,
  confirm_management_cut: Type.Boolean({ default: false, description: 'apply a change that removes or downs the address this request reached' }),
}, { additionalProperties: false });

export const PassphraseBody = Type.Object({
  passphrase: Type.String({ minLength: 8, maxLength: 1024 }),
}, { additionalProperties: false });

/** Import bodies are an export document plus options; the document itself is validated by the service. */
export const ImportBody = Type.Object({
  passphrase: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
}, { additionalProperties: true });

export const AnyObject = Type.Object({}, { additionalProperties: true });

/** PUT /backup/objstore/config: any subset of the destination's fields ("" clears a secret). */
export const ObjstoreConfigBody = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  endpoint: Type.Optional(Type.String({ maxLength: 512 })),
  bucket: Type.Optional(Type.String({ maxLength: 63 })),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  prefix: Type.Optional(Type.String({ maxLength: 512 })),
  path_style: Type.Optional(Type.Boolean()),
  access_key_id: Type.Optional(Type.String({ maxLength: 256 })),
  secret_access_key: Type.Optional(Type.String({ maxLength: 256 })),
  backup_passphrase: Type.Optional(Type.String({ maxLength: 1024 })),
  upload_on_save: Type.Optional(Type.Boolean()),
  schedule_hours: Type.Optional(Type.Integer({ minimum: 0, maximum: 8760 })),
  allow_http: Type.Optional(Type.Boolean()),
  allowed_addresses: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
}, { additionalProperties: false });

/** POST /backup/objstore/import: which backup, and its passphrase when not the stored one. */
export const ObjstoreImportBody = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 1024 }),
  passphrase: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
}, { additionalProperties: false });
