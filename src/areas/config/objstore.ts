import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { sha256Hex } from '../../core/crypto.js';
import type { Permission } from '../../core/permissions.js';
import { badGateway, badRequest, conflict, notFound } from '../../core/errors.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import type { ConfigData } from '../../store/config-store.js';
import type { VersionRecord } from '../../store/config-versions.js';
import { OutboundAwsHandler } from '../../net/aws-http-handler.js';
import { adminAllowList, adminDestinationProblem, entryNotCoveredByAdmin, notCoveredMessage } from '../../net/admin-allow-list.js';
import type { Actor, ConfigService } from './service.js';

const ObjstoreSchema = Type.Object({
  enabled: Type.Boolean({ default: false }),
  endpoint: Type.String({ default: '', maxLength: 512, description: 'https://host[:port]; empty for AWS itself' }),
  bucket: Type.String({ default: '', maxLength: 63 }),
  region: Type.String({ default: 'us-east-1', minLength: 1, maxLength: 64 }),
  prefix: Type.String({ default: 'bulwark/', maxLength: 512, pattern: '^[^\\\\]*$' }),
  path_style: Type.Boolean({ default: true, description: 'bucket in the path (MinIO and most self-hosted servers) instead of the host name' }),
  access_key_id: Type.String({ default: '', maxLength: 256 }),
  secret_access_key: Type.String({ maxLength: 256, description: 'write-only; sealed at rest' }),
  backup_passphrase: Type.String({ maxLength: 1024, description: 'write-only; when set, uploads are passphrase-wrapped exports (portable), else redacted exports' }),
  upload_on_save: Type.Boolean({ default: true }),
  schedule_hours: Type.Integer({ default: 0, minimum: 0, maximum: 8760, description: 'upload the configuration every N hours when it changed; 0 = off' }),
  allow_http: Type.Boolean({ default: false, description: 'allow a plain-http endpoint (a server on the local network)' }),
  allowed_addresses: Type.Array(Type.String({ maxLength: 64 }), { default: [], maxItems: 32, description: 'IPs/CIDRs the endpoint may resolve to although private or loopback' }),
});

export const OBJSTORE_KIND = 'backup_objstore';

interface ObjstoreSettings {
  enabled: boolean;
  endpoint: string;
  bucket: string;
  region: string;
  prefix: string;
  path_style: boolean;
  access_key_id: string;
  upload_on_save: boolean;
  schedule_hours: number;
  allow_http: boolean;
  allowed_addresses: string[];
}

interface UploadStatus {
  last_upload_at: string | null;
  last_upload_key: string | null;
  last_upload_hash: string | null;
  last_upload_error: string | null;
  last_attempt_at: string | null;
}

const STATUS_KEY = 'objstore_status';
/** Who set the destination: the permissions whose secrets uploads may carry, with a digest of what they wrote. */
const SECRET_SCOPE_KEY = 'objstore_secret_scope';
const EMPTY_STATUS: UploadStatus = { last_upload_at: null, last_upload_key: null, last_upload_hash: null, last_upload_error: null, last_attempt_at: null };


/**
 * Off-box backups to any S3-compatible object storage: the destination is a settings section (secret key and
 * backup passphrase sealed, write-only); every save uploads an export of that version, and a schedule can
 * upload a changed configuration every N hours. The S3 client is the AWS SDK's, its traffic routed through
 * the appliance's outbound guard.
 */
export class ObjectStorageBackups {
  readonly settings: SingletonModel;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly context: AppContext,
    private readonly service: ConfigService,
  ) {
    this.settings = context.models.singleton({
      kind: OBJSTORE_KIND, noun: 'object-storage backup settings', writeAccess: 'backup:write', schema: ObjstoreSchema, writeOnly: ['secret_access_key', 'backup_passphrase'],
      validate: (data) => {
        if (data.endpoint && !/^https?:\/\/[^/\s]+\/?$/.test(String(data.endpoint))) throw badRequest('body.endpoint must be http(s)://host[:port] without a path');
        if (data.enabled) {
          for (const field of ['bucket', 'access_key_id'] as const) if (!data[field]) throw badRequest(`body.${field} is required when enabled`);
        }
        for (const entry of (data.allowed_addresses as string[]) ?? []) {
          if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)) throw badRequest(`body.allowed_addresses: "${entry}" is not an IP address or CIDR`);
        }
        // The administrator's list (settings:write) decides; this one, kept for compatibility, may only repeat it.
        const uncovered = entryNotCoveredByAdmin((data.allowed_addresses as string[]) ?? [], context.store);
        if (uncovered !== null) throw badRequest(notCoveredMessage('body.allowed_addresses', uncovered));
        const host = data.endpoint ? new URL(String(data.endpoint)).hostname : undefined;
        const refused = host ? adminDestinationProblem(host, context.store) : null;
        if (refused) throw badRequest(`body.endpoint: ${refused}`);
      },
    });
    service.onSaved((record) => {
      if (this.current().enabled && this.current().upload_on_save) this.queueUpload(record);
    });
  }

  /**
   * Uploads leave the appliance for wherever this section points, so they carry only the secrets the person who
   * set the destination could have set: their permissions are kept with a digest of the section they wrote, and a
   * section changed any other way (import, restore) carries none until someone writes it directly again.
   */
  private recordSecretScope(stored: ConfigData, permissions: ReadonlySet<Permission> | undefined): void {
    this.service.versions.setMeta(SECRET_SCOPE_KEY, { digest: sha256Hex(canonicalJson(stored)), permissions: [...(permissions ?? [])] });
  }

  private secretScope(): ReadonlySet<Permission> {
    const scope = this.service.versions.getMeta<{ digest: string; permissions: Permission[] }>(SECRET_SCOPE_KEY);
    const current = this.context.store.getSingleton(OBJSTORE_KIND) ?? {};
    return scope && scope.digest === sha256Hex(canonicalJson(current)) ? new Set(scope.permissions) : new Set();
  }

  current(): ObjstoreSettings {
    return this.settings.read() as unknown as ObjstoreSettings;
  }

  status(): UploadStatus {
    return { ...EMPTY_STATUS, ...(this.service.versions.getMeta<UploadStatus>(STATUS_KEY) ?? {}) };
  }

  /** Resolves when every upload queued so far has finished (tests, shutdown). */
  idle(): Promise<void> {
    return this.inFlight;
  }

  private view(data: ConfigData) {
    return {
      ...this.settings.visible(data),
      has_secret_access_key: typeof data.secret_access_key === 'string' && data.secret_access_key !== '',
      has_backup_passphrase: typeof data.backup_passphrase === 'string' && data.backup_passphrase !== '',
      ...this.status(),
    };
  }

  private client(settings: ObjstoreSettings): S3Client {
    const secret = this.settings.secret('secret_access_key');
    // Nothing in the request is wrong: the destination is missing, so the answer says what to configure.
    if (!settings.bucket) throw conflict('object storage is not configured: set bucket (PUT /api/v1/backup/objstore/config)');
    if (!settings.access_key_id || !secret) {
      throw conflict('object storage is not configured: set access_key_id and secret_access_key (PUT /api/v1/backup/objstore/config)');
    }
    return new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint.replace(/\/$/, '') } : {}),
      forcePathStyle: settings.path_style,
      credentials: { accessKeyId: settings.access_key_id, secretAccessKey: secret },
      requestHandler: new OutboundAwsHandler({ allowHttp: settings.allow_http, allowList: adminAllowList(this.context.store), timeoutMs: 30_000 }) as never,
      maxAttempts: 2,
    });
  }

  /** The export uploaded for a version: passphrase-wrapped when a backup passphrase is set, else redacted. */
  private async upload(record: VersionRecord | null): Promise<string> {
    const settings = this.current();
    const client = this.client(settings);
    try {
      const document = await this.service.exportDocument(this.settings.secret('backup_passphrase'), { name: 'objstore', permissions: this.secretScope() });
      const stamp = isoTime(this.context.clock.now()).replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
      // the stamp leads, so names sort by time even where the server's modification times tie
      const key = `${settings.prefix}bulwark-config-${stamp}${record ? `-v${record.version}` : ''}.json`;
      await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: Buffer.from(JSON.stringify(document)), ContentType: 'application/json' }));
      this.service.versions.setMeta(STATUS_KEY, {
        ...this.status(), last_upload_at: isoTime(this.context.clock.now()), last_attempt_at: isoTime(this.context.clock.now()),
        last_upload_key: key, last_upload_hash: document.config_hash, last_upload_error: null,
      });
      this.service.audit.record({ action: 'config.objstore.upload', outcome: 'success', actor: 'objstore', details: key });
      return key;
    } catch (error) {
      const message = describeS3Error(error);
      this.service.versions.setMeta(STATUS_KEY, { ...this.status(), last_attempt_at: isoTime(this.context.clock.now()), last_upload_error: message });
      this.service.audit.record({ action: 'config.objstore.upload', outcome: 'failure', actor: 'objstore', details: message });
      throw error;
    } finally {
      client.destroy();
    }
  }

  /** Uploads run one after another in the background; a failure is recorded in the status, never lost silently. */
  private queueUpload(record: VersionRecord | null): void {
    this.inFlight = this.inFlight.then(() => this.upload(record).then(() => undefined, (error) => {
      this.context.log.warn({ error: describeS3Error(error) }, 'object-storage upload failed');
    }));
  }

  /** Every interval, uploads the configuration when the schedule is due and the configuration changed. */
  startSchedule(intervalMs = 60_000): void {
    this.timer = setInterval(() => this.scheduledTick(), intervalMs);
    this.timer.unref();
  }

  async stopSchedule(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /** One schedule check (the timer calls it; tests call it after moving the clock). */
  scheduledTick(): Promise<void> {
    const settings = this.current();
    if (!settings.enabled || settings.schedule_hours <= 0) return this.inFlight;
    const status = this.status();
    const last = status.last_attempt_at ? Date.parse(status.last_attempt_at) : 0;
    if (this.context.clock.now() - last < settings.schedule_hours * 3_600_000) return this.inFlight;
    if (status.last_upload_hash === this.service.versions.currentHash() && !status.last_upload_error) return this.inFlight;
    this.queueUpload(null);
    return this.inFlight;
  }

  /** The destination as GET shows it: no secret, whether each is set, and the last upload. */
  settingsView() {
    return this.view(this.settings.read());
  }

  /** Changes the destination; the writer's permissions bound which secrets later uploads may carry. */
  writeSettings(patch: ConfigData, permissions: ReadonlySet<Permission> | undefined) {
    const stored = this.settings.write(patch);
    this.recordSecretScope(stored, permissions);
    return this.view(stored);
  }

  /** Checks credentials and connectivity: the bucket is reachable and a probe object can be written, read and deleted. */
  async test() {
    const started = performance.now();
    const settings = this.current();
    let client: S3Client | undefined;
    const steps: string[] = [];
    try {
      client = this.client(settings);
      await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
      steps.push('bucket reachable');
      const key = `${settings.prefix}.bulwark-probe-${Date.now()}`;
      await client.send(new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: 'probe' }));
      steps.push('write');
      const read = await client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }));
      if ((await read.Body?.transformToString()) !== 'probe') throw new Error('the probe object read back differs');
      steps.push('read');
      await client.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key: key }));
      steps.push('delete');
      return { ok: true, message: `object storage works: ${steps.join(', ')}`, steps, latency_ms: Math.round(performance.now() - started) };
    } catch (error) {
      return { ok: false, message: describeS3Error(error), steps, latency_ms: Math.round(performance.now() - started) };
    } finally {
      client?.destroy();
    }
  }

  /** Backups under the prefix, newest first. */
  async list(): Promise<{ key: string; size: number; last_modified: string | null }[]> {
    const settings = this.current();
    const client = this.client(settings);
    try {
      const items: { key: string; size: number; last_modified: string | null }[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: settings.bucket, Prefix: settings.prefix, ContinuationToken: token }));
        for (const item of page.Contents ?? []) {
          if (!item.Key || !item.Key.endsWith('.json')) continue;
          items.push({ key: item.Key, size: item.Size ?? 0, last_modified: item.LastModified ? item.LastModified.toISOString() : null });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token && items.length < 100_000);
      items.sort((a, b) => (b.last_modified ?? '').localeCompare(a.last_modified ?? '') || b.key.localeCompare(a.key));
      return items;
    } catch (error) {
      throw badGateway(`object storage: ${describeS3Error(error)}`);
    } finally {
      client.destroy();
    }
  }

  /** Downloads one backup and restores it, validated and applied like an import. */
  async importBackup(key: string, passphrase: string | undefined, actor: Actor) {
    const settings = this.current();
    // An unconfigured destination (409) comes before judging the key against its prefix.
    const client = this.client(settings);
    if (!key.startsWith(settings.prefix)) {
      client.destroy();
      throw badRequest(`body.key must be under the configured prefix "${settings.prefix}"`);
    }
    let text: string;
    try {
      const object = await client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }));
      text = (await object.Body?.transformToString()) ?? '';
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') throw notFound(`backup ${key} not found`);
      throw badGateway(`object storage: ${describeS3Error(error)}`);
    } finally {
      client.destroy();
    }
    let document: Record<string, unknown>;
    try {
      document = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw badRequest(`backup ${key} is not JSON`);
    }
    const secret = passphrase ?? this.settings.secret('backup_passphrase');
    const { record, objects, appliers } = await this.service.importDocument({ ...document, ...(secret ? { passphrase: secret } : {}) }, actor, 'objstore-import', 'objstore.import');
    return { message: `Restored ${key} as version ${record.version}`, key, objects, appliers, ...this.service.withActive(record) };
  }
}

/** S3 errors name themselves (AccessDenied, NoSuchBucket, InvalidAccessKeyId, ...); never include credentials. */
export function describeS3Error(error: unknown): string {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode ? ` (HTTP ${e.$metadata.httpStatusCode})` : '';
  const name = e.name && e.name !== 'Error' ? `${e.name}: ` : '';
  return `${name}${e.message ?? String(error)}${status}`.slice(0, 500);
}
