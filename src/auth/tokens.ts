import { SignJWT, jwtVerify, errors } from 'jose';
import { LRUCache } from 'lru-cache';
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

/** Claims of a token whose signature, issuer and audience were verified, with its validity window. */
interface VerifiedToken {
  claims: AccessClaims;
  /** Seconds since the epoch, as in the token. */
  exp: number;
  nbf: number | undefined;
}

/**
 * Tokens whose signature was verified, so a client sending the same token on every request pays for the HMAC
 * (an asynchronous WebCrypto job) once. Only verified tokens enter, the key never changes while the process runs,
 * and the time checks run again on every use; revocation is the session table's job and is checked per request.
 */
const VERIFIED_TOKENS = 10_000;

/** HS256 access tokens under a key kept in the data directory (0600), verified with an algorithm allow-list. */
export class AccessTokens {
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: VERIFIED_TOKENS });

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
    const known = this.verified.get(token);
    if (known) {
      // jose's rules without tolerance: expired when exp <= now, not yet valid when nbf > now.
      const now = Math.floor(this.clock.now() / 1000);
      if (known.exp <= now || (known.nbf !== undefined && known.nbf > now)) return null;
      return known.claims;
    }
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
      const claims = Object.freeze({ sub, username: String(username), role: String(role), perm, sid, gen });
      this.verified.set(token, { claims, exp: payload.exp!, nbf: payload.nbf });
      return claims;
    } catch (error) {
      if (error instanceof errors.JOSEError) return null;
      throw error;
    }
  }
}
