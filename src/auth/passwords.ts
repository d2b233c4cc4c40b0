import argon2 from 'argon2';
import { availableParallelism } from 'node:os';
import { badRequest } from '../core/errors.js';
import { Semaphore } from '../core/semaphore.js';

/**
 * argon2id with the OWASP-recommended minimum (19 MiB, 2 passes, 1 lane): about a tenth of the library
 * default's cost here, still far beyond what makes offline guessing practical. The argon2 package hashes in
 * libuv's thread pool, so verification never blocks the event loop.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most (cores - 1) hashes run at once, so a login flood queues here instead of taking every core from
 * the event loop that serves everything else.
 */
const hashing = new Semaphore(Math.max(1, availableParallelism() - 1));

export const hashPassword = (password: string): Promise<string> => hashing.run(() => argon2.hash(password, OPTIONS));
const verifyHash = (hash: string, password: string): Promise<boolean> =>
  hashing.run(() => argon2.verify(hash, password)).catch(() => false);

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password. For an unknown user (hash undefined or unusable) the same work is done against a
 * dummy hash, so response time does not reveal which usernames exist.
 */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash || !hash.startsWith('$argon2')) {
    dummyHash ??= hashPassword('bulwark-timing-equaliser');
    await verifyHash(await dummyHash, password);
    return false;
  }
  return verifyHash(hash, password);
}

/** Length of at least max(8, configured minimum), and upper case, lower case and a digit. */
export function assertPasswordPolicy(password: string, minimumLength: number, field = 'body.password'): void {
  const minimum = Math.max(8, minimumLength);
  if (password.length < minimum) throw badRequest(`${field} must be at least ${minimum} characters`);
  if (password.length > 1024) throw badRequest(`${field} must be at most 1024 characters`);
  if (!/[A-Z]/.test(password) || !/[a-z]/.test(password) || !/[0-9]/.test(password)) {
    throw badRequest(`${field} must contain an upper-case letter, a lower-case letter and a digit`);
  }
}
