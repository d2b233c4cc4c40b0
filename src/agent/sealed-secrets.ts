import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets sealed for one appliance: the controller seals a value with the appliance's X25519 public key (sent at
 * enrolment; the private key never leaves the appliance) and keeps only the sealed form, so neither the controller
 * nor its database can read it. ECDH with a fresh ephemeral key, HKDF-SHA256, AES-256-GCM; the appliance id and
 * the secret's name are the associated data, so a value sealed for one appliance or name opens for no other.
 *
 * Form: `bwsealed1:<name>:<base64url of ephemeral public key (32) | iv (12) | tag (16) | ciphertext>`.
 */
export const SEALED_PREFIX = 'bwsealed1:';
const INFO = Buffer.from('bulwark fleet sealed secret v1');
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function newSealingKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return { publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** Whether a PEM is an X25519 public key (what an agent must send at enrolment). */
export function isSealingPublicKey(pem: string): boolean {
  try {
    return createPublicKey(pem).asymmetricKeyType === 'x25519';
  } catch {
    return false;
  }
}

const keyFor = (shared: Buffer, salt: Buffer) => Buffer.from(hkdfSync('sha256', shared, salt, INFO, 32));
const aad = (applianceId: string, name: string) => Buffer.from(`${applianceId}\n${name}`);

export function sealFor(publicKeyPem: string, applianceId: string, name: string, value: string): string {
  if (!SECRET_NAME.test(name)) throw new Error(`secret name "${name}" is not a letter or _ then letters, digits or _`);
  const ephemeral = generateKeyPairSync('x25519');
  const ephemeralRaw = ephemeral.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32);
  const key = keyFor(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: createPublicKey(publicKeyPem) }), ephemeralRaw);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(applianceId, name));
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return `${SEALED_PREFIX}${name}:${Buffer.concat([ephemeralRaw, iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
}

/** The SPKI DER prefix of an X25519 public key, before its 32 raw bytes. */
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

export function openSealed(privateKeyPem: string, applianceId: string, text: string): string {
  const match = /^bwsealed1:([A-Za-z_][A-Za-z0-9_]{0,63}):([A-Za-z0-9_-]+)$/.exec(text);
  if (!match) throw new Error('not a sealed secret');
  const blob = Buffer.from(match[2], 'base64url');
  if (blob.length < 60) throw new Error(`sealed secret "${match[1]}" is truncated`);
  const ephemeralRaw = blob.subarray(0, 32);
  const ephemeral = createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, ephemeralRaw]), format: 'der', type: 'spki' });
  const key = keyFor(diffieHellman({ privateKey: createPrivateKey(privateKeyPem), publicKey: ephemeral }), ephemeralRaw);
  const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(32, 44));
  decipher.setAAD(aad(applianceId, match[1]));
  decipher.setAuthTag(blob.subarray(44, 60));
  try {
    return Buffer.concat([decipher.update(blob.subarray(60)), decipher.final()]).toString('utf8');
  } catch {
    throw new Error(`sealed secret "${match[1]}" does not open with this appliance's key (sealed for another appliance, or altered)`);
  }
}

/** A document with every sealed string opened (what the appliance writes); the sealed document itself is kept. */
export function openDocument<T>(document: T, privateKeyPem: string | undefined, applianceId: string): T {
  const open = (value: unknown): unknown => {
    if (typeof value === 'string' && value.startsWith(SEALED_PREFIX)) {
      if (!privateKeyPem) throw new Error('the revision carries a sealed secret but this appliance has no sealing key: enrol it again');
      return openSealed(privateKeyPem, applianceId, value);
    }
    if (Array.isArray(value)) return value.map(open);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, open(v)]));
    return value;
  };
  return open(document) as T;
}

/** Whether a value holds a sealed secret anywhere (its local value is then never sent back to the controller). */
export const holdsSealed = (value: unknown): boolean => (JSON.stringify(value) ?? '').includes(SEALED_PREFIX);
