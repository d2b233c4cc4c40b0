import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { createHmac } from 'node:crypto';
import { randomBytes } from 'node:crypto';

export const TOTP_ISSUER = 'Bulwark';
const PERIOD_SECONDS = 30;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpFor(secret: string, username: string): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secret) });
}

export function provisioningUri(secret: string, username: string): string {
  return totpFor(secret, username).toString();
}

/** The otpauth URI as an SVG QR code in a data URL, ready for an <img>. */
export async function qrCodeDataUrl(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/**
 * RFC 6238 check with one step of drift either way. Returns the time step the code belongs to, so the
 * caller can refuse any code at or before the last one accepted (no replay), or null.
 */
export function matchTotp(secret: string, username: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpFor(secret, username).validate({ token: code, timestamp: nowMs, window: 1 });
  if (delta === null) return null;
  return Math.floor(nowMs / 1000 / PERIOD_SECONDS) + delta;
}

/** Ten single-use recovery codes, XXXX-XXXX-XXXX of upper-case hex (48 bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: 10 }, () => {
    const hex = randomBytes(6).toString('hex').toUpperCase();
    return `${hex.slice(0, 4)}-${hex.slice(4, 8)}-${hex.slice(8, 12)}`;
  });
}

/** Recovery codes are stored as HMACs under a server-side key, so a database copy alone cannot test guesses. */
export function recoveryCodeHash(key: Buffer, code: string): string {
  return createHmac('sha256', key).update(code.trim().toUpperCase()).digest('hex');
}
