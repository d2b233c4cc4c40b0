import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';

/** Random bytes as lowercase hex: 32 bytes = 256 bits. */
export const randomHex = (bytes = 32): string => randomBytes(bytes).toString('hex');

export const sha256Hex = (value: string | Buffer): string => createHash('sha256').update(value).digest('hex');

/** Constant-time comparison of two strings (false on length mismatch without leaking where they differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** Reads a key file, creating it (mode 0600) with fresh random bytes on first use. */
export function loadOrCreateKeyFile(path: string, bytes = 32): Buffer {
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
    if (key.length !== bytes) throw new Error(`key file ${path} is not ${bytes} bytes of hex`);
    chmodSync(path, 0o600);
    return key;
  }
  const key = randomBytes(bytes);
  writeFileSync(path, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

const SEALED_PREFIX = 'sealed:v1:';

/** AES-256-GCM sealing of secrets at rest. The key lives in the data directory, never in the database. */
export class Sealer {
  constructor(private readonly key: Buffer) {}

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    if (!Sealer.isSealed(sealed)) throw new Error('value is not sealed');
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
  }
}
