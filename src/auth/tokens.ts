import { SignJWT, jwtVerify, errors } from 'jose';
import type { Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';

export const ISSUER = 'bulwark';
export const AUDIENCE = 'bulwark-api';

export interface AccessClaims {
  sub: string;
  username: string;
  role: string;
  /** Permission bitmask over the 37-permission catalogue (wire-format bit order). */
  perm: number;
  /** Session id: checked against the live session table on every request. */
  sid: string;
  /** Session generation: bumped when the user's permissions change, forcing a refresh. */
  gen: number;
}

/** HS256 access tokens under a key kept in the data directory (0600), verified with an algorithm allow-list. */
export class AccessTokens {
  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
  ) {}

  async sign(claims: AccessClaims, lifetimeSeconds: number): Promise<{ token: string; expiresAt: number }> {
    const issuedAt = Math.floor(this.clock.now() / 1000);
    const expiresAt = issuedAt + lifetimeSeconds;
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .setJti(newId())
      .sign(this.key);
    return { token, expiresAt: expiresAt * 1000 };
  }

  /** Returns the claims, or null for any invalid, expired or foreign token. */
  async verify(token: string): Promise<AccessClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      const { sub, username, role, perm, sid, gen } = payload as Record<string, unknown>;
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof perm !== 'number' || typeof gen !== 'number') return null;
      return { sub, username: String(username), role: String(role), perm, sid, gen };
    } catch (error) {
      if (error instanceof errors.JOSEError) return null;
      throw error;
    }
  }
}
