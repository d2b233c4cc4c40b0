import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { badRequest, conflict } from '../../core/errors.js';

/** The detached signature file beside a release archive (`bulwark-<version>.tar.gz.sig`): JSON, one line. */
export interface ReleaseSignature {
  format: 'bulwark-release-signature/1';
  algorithm: 'ed25519';
  key_id: string;
  sha256: string;
  signature: string;
}

const FORMAT = 'bulwark-release-signature/1';

/** A public key's id: the first 16 hex digits of the SHA-256 of its DER (SubjectPublicKeyInfo) encoding. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

/** Signs an archive with an Ed25519 private key (PEM, PKCS#8): the text of its `.sig` file. */
export function signRelease(archive: Buffer, privateKeyPem: string | Buffer): string {
  const privateKey = createPrivateKey(privateKeyPem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the signing key is ${privateKey.asymmetricKeyType}, not ed25519`);
  const signature: ReleaseSignature = {
    format: FORMAT,
    algorithm: 'ed25519',
    key_id: keyIdOf(createPublicKey(privateKey)),
    sha256: createHash('sha256').update(archive).digest('hex'),
    signature: sign(null, archive, privateKey).toString('base64'),
  };
  return `${JSON.stringify(signature)}\n`;
}

/** The Ed25519 public keys (`*.pem`, `*.pub`) in the trusted-keys directory, by key id; others are skipped. */
export function trustedKeys(directory: string): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  let names: string[] = [];
  try {
    names = readdirSync(directory);
  } catch {
    return keys;
  }
  for (const name of names.filter((n) => /\.(pem|pub)$/.test(n)).sort()) {
    try {
      const key = createPublicKey(readFileSync(join(directory, name)));
      if (key.asymmetricKeyType === 'ed25519') keys.set(keyIdOf(key), key);
    } catch {
      // not a public key: it trusts nothing
    }
  }
  return keys;
}

function parseSignature(text: string): ReleaseSignature {
  let parsed: Partial<ReleaseSignature>;
  try {
    parsed = JSON.parse(text) as Partial<ReleaseSignature>;
  } catch {
    throw badRequest('bad signature: the signature file is not JSON (a bulwark-release-signature/1 file from `npm run release`)');
  }
  const valid = parsed && parsed.format === FORMAT && parsed.algorithm === 'ed25519'
    && typeof parsed.key_id === 'string' && /^[0-9a-f]{16}$/.test(parsed.key_id)
    && typeof parsed.signature === 'string' && /^[A-Za-z0-9+/]{86}==$/.test(parsed.signature);
  if (!valid) throw badRequest('bad signature: the signature file is not a bulwark-release-signature/1 Ed25519 signature');
  return parsed as ReleaseSignature;
}

/**
 * Checks a release archive against its detached signature and the trusted keys, before anything is unpacked.
 * The three refusals are told apart: no signature (400), a key that is not trusted (409: trusting it would change
 * the answer), a signature that does not match the archive (400: tampered or corrupt). Answers the signer's key id.
 */
export function verifyRelease(archive: Buffer, signatureText: string | null | undefined, trustedKeysDir: string): { keyId: string } {
  if (!signatureText || !signatureText.trim()) throw badRequest(`missing signature: a release is installed only with its detached Ed25519 signature (the .sig file \`npm run release\` writes)`);
  const signature = parseSignature(signatureText.trim());
  const key = trustedKeys(trustedKeysDir).get(signature.key_id);
  if (!key) throw conflict(`unknown key: the release is signed by key ${signature.key_id}, which is not among the trusted keys in ${trustedKeysDir}`);
  if (!verify(null, archive, key, Buffer.from(signature.signature, 'base64'))) {
    throw badRequest(`bad signature: the archive does not match the signature of key ${signature.key_id} (tampered or corrupt)`);
  }
  return { keyId: signature.key_id };
}
