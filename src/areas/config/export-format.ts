import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { Type } from 'typebox';
import { badRequest } from '../../core/errors.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { assertValid, compileBodyValidator } from '../../model/validation.js';
import type { ConfigObject } from '../../store/config-store.js';

export const EXPORT_FORMAT = 'bulwark-config';
export const EXPORT_FORMAT_VERSION = 1;

/** scrypt cost used for new exports: 64 MiB of memory, about a quarter second here. */
export const EXPORT_KDF = { N: 2 ** 16, r: 8, p: 1 };
/** Limits on the cost an imported file may ask for, so a crafted file cannot exhaust memory or time. */
const KDF_LIMITS = { maxN: 2 ** 20, maxR: 16, maxP: 4, maxMemory: 1024 * 1024 * 1024 };

export interface ExportKdf {
  name: 'scrypt';
  salt: string;
  N: number;
  r: number;
  p: number;
  /** HMAC of a fixed label under the derived MAC key: tells a wrong passphrase from a modified file. */
  key_check: string;
}

export interface ExportDocument {
  format: typeof EXPORT_FORMAT;
  format_version: number;
  app_version: string;
  exported_at: string;
  /** The active version when exported (null before the first apply). */
  source_version: number | null;
  /** Content hash of the exported configuration as stored on the exporting appliance. */
  config_hash: string;
  secrets: 'redacted' | 'passphrase';
  secret_count: number;
  kdf?: ExportKdf;
  objects: ConfigObject[];
  /** sha256 (redacted exports) or HMAC-SHA256 under the passphrase (portable exports) of everything above. */
  integrity: { algorithm: 'sha256' | 'hmac-sha256'; value: string };
}

const ExportObjectSchema = Type.Object({
  kind: Type.String({ minLength: 1, maxLength: 128 }),
  id: Type.String({ minLength: 1, maxLength: 256 }),
  position: Type.Integer(),
  data: Type.Object({}, { additionalProperties: true }),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
}, { additionalProperties: false });

/** The JSON Schema of an export document (import bodies add `passphrase` and options). */
export const ExportDocumentProperties = {
  format: Type.Literal(EXPORT_FORMAT),
  format_version: Type.Integer({ minimum: 1 }),
  app_version: Type.String(),
  exported_at: Type.String(),
  source_version: Type.Union([Type.Integer(), Type.Null()]),
  config_hash: Type.String(),
  secrets: Type.Union([Type.Literal('redacted'), Type.Literal('passphrase')]),
  secret_count: Type.Integer({ minimum: 0 }),
  kdf: Type.Optional(Type.Object({
    name: Type.Literal('scrypt'),
    salt: Type.String({ minLength: 1 }),
    N: Type.Integer({ minimum: 2 }),
    r: Type.Integer({ minimum: 1 }),
    p: Type.Integer({ minimum: 1 }),
    key_check: Type.String({ minLength: 1 }),
  }, { additionalProperties: false })),
  objects: Type.Array(ExportObjectSchema, { maxItems: 200_000 }),
  integrity: Type.Object({
    algorithm: Type.Union([Type.Literal('sha256'), Type.Literal('hmac-sha256')]),
    value: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  }, { additionalProperties: false }),
};
const RequiredFields = ['format', 'format_version', 'objects', 'secrets', 'integrity'];
const validateDocument = compileBodyValidator({ type: 'object', properties: ExportDocumentProperties, required: RequiredFields, additionalProperties: true });

/** The keys derived from an export passphrase: one encrypts secrets, one authenticates the whole file. */
export interface ExportKeys {
  encryption: Buffer;
  mac: Buffer;
}

function deriveKeys(passphrase: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<ExportKeys> {
  const maxmem = 256 * cost.N * cost.r * cost.p + 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    // scrypt runs on libuv's thread pool: the event loop stays free while it works.
    scrypt(passphrase.normalize('NFC'), salt, 64, { ...cost, maxmem }, (error, key) => {
      if (error) reject(error);
      else resolve({ encryption: key.subarray(0, 32), mac: key.subarray(32) });
    });
  });
}

const KEY_CHECK_LABEL = 'bulwark-export-key-check-v1';

export async function newExportKeys(passphrase: string): Promise<{ keys: ExportKeys; kdf: ExportKdf }> {
  const salt = randomBytes(16);
  const keys = await deriveKeys(passphrase, salt, EXPORT_KDF);
  const key_check = createHmac('sha256', keys.mac).update(KEY_CHECK_LABEL).digest('base64');
  return { keys, kdf: { name: 'scrypt', salt: salt.toString('base64'), ...EXPORT_KDF, key_check } };
}

/** Derives the keys of an imported file; a wrong passphrase is a 400 that says so, before anything else is read. */
export async function openExportKeys(passphrase: string, kdf: ExportKdf): Promise<ExportKeys> {
  const { N, r, p } = kdf;
  if (N > KDF_LIMITS.maxN || (N & (N - 1)) !== 0 || r > KDF_LIMITS.maxR || p > KDF_LIMITS.maxP || 128 * N * r * p > KDF_LIMITS.maxMemory) {
    throw badRequest('body.kdf: key-derivation parameters are out of the accepted range');
  }
  const keys = await deriveKeys(passphrase, Buffer.from(kdf.salt, 'base64'), { N, r, p });
  const expected = createHmac('sha256', keys.mac).update(KEY_CHECK_LABEL).digest();
  const given = Buffer.from(kdf.key_check, 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw badRequest('body.passphrase: wrong passphrase for this export');
  return keys;
}

const aadOf = (kind: string, id: string, path: string) => Buffer.from(`${kind}\n${id}\n${path}`, 'utf8');

/** AES-256-GCM under the export key; the object's kind, id and field path are bound in as associated data. */
export function wrapSecret(keys: ExportKeys, plaintext: string, kind: string, id: string, path: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.encryption, nonce);
  cipher.setAAD(aadOf(kind, id, path));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return 'pw:v1:' + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

export function unwrapSecret(keys: ExportKeys, wrapped: string, kind: string, id: string, path: string): string {
  const raw = Buffer.from(wrapped.slice('pw:v1:'.length), 'base64');
  if (raw.length < 28) throw badRequest(`objects: ${kind} ${id} ${path}: wrapped secret is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.encryption, raw.subarray(0, 12));
    decipher.setAAD(aadOf(kind, id, path));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw badRequest(`objects: ${kind} ${id} ${path}: wrapped secret does not open (file modified)`);
  }
}

/** The integrity value of a document: everything but the integrity field, in canonical JSON. */
export function integrityOf(document: Omit<ExportDocument, 'integrity'>, keys?: ExportKeys): ExportDocument['integrity'] {
  const text = canonicalJson(document);
  return keys
    ? { algorithm: 'hmac-sha256', value: createHmac('sha256', keys.mac).update(text).digest('hex') }
    : { algorithm: 'sha256', value: createHash('sha256').update(text).digest('hex') };
}

/** Checks shape and integrity. A redacted file carries a checksum (catches corruption and careless edits); a
 * passphrase file an HMAC (catches any modification by someone without the passphrase). */
export function verifyIntegrity(document: ExportDocument, keys?: ExportKeys): void {
  const { integrity, ...rest } = document;
  const wanted = document.secrets === 'passphrase' ? 'hmac-sha256' : 'sha256';
  if (integrity.algorithm !== wanted) throw badRequest(`body.integrity: a ${document.secrets} export must carry ${wanted}`);
  const expected = integrityOf(rest, keys);
  if (!timingSafeEqual(Buffer.from(expected.value, 'hex'), Buffer.from(integrity.value, 'hex'))) {
    throw badRequest('body.integrity: the file was modified after export (integrity check failed)');
  }
}

/** Separates an import body into the document and its options, validating the document's shape. */
export function readExportDocument(body: Record<string, unknown>): ExportDocument {
  const { passphrase: _p, apply: _a, ...document } = body;
  assertValid(validateDocument, document);
  const typed = document as unknown as ExportDocument;
  if (typed.format_version > EXPORT_FORMAT_VERSION) throw badRequest(`body.format_version: version ${typed.format_version} is newer than this appliance reads (${EXPORT_FORMAT_VERSION})`);
  if (typed.secrets === 'passphrase' && !typed.kdf) throw badRequest('body.kdf is required for a passphrase export');
  const seen = new Set<string>();
  // ids are unique across the whole configuration store, whatever the kind
  for (const object of typed.objects) {
    if (seen.has(object.id)) throw badRequest(`body.objects: id ${object.id} appears twice`);
    seen.add(object.id);
  }
  return typed;
}
