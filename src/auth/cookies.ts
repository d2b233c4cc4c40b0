import { parseCookie, stringifySetCookie, type SetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { forbidden } from '../core/errors.js';

/** The access JWT; sent on every API path. */
export const ACCESS_COOKIE = 'bulwark_at';
/** The refresh token; only the auth endpoints ever see it. */
export const REFRESH_COOKIE = 'bulwark_rt';
const REFRESH_COOKIE_PATH = '/api/v1/auth';

/**
 * CSRF defence for cookie sessions: a state-changing request authenticated by a cookie must carry this
 * header (any non-empty value; the UI sends `1`). A cross-site page cannot add a custom header to a request
 * without a CORS preflight, which this API never grants, and the cookies are SameSite=Lax besides, so a
 * forged form post or image load arrives without it (or without the cookies).
 */
export const CSRF_HEADER = 'x-bulwark-csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  const value = parseCookie(header)[name];
  return value ? value : undefined;
}

/** Throws 403 when a cookie-authenticated request changes state without the CSRF header. */
export function assertCsrfHeader(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const value = request.headers[CSRF_HEADER];
  if (typeof value === 'string' && value.trim() !== '') return;
  throw forbidden(`cookie-authenticated ${request.method} requests need the ${CSRF_HEADER} header (CSRF protection)`);
}

/** The parts of a token pair the cookies carry. */
export interface SessionCookieValues {
  access_token: string;
  expires_in: number;
  refresh_token: string;
  refresh_expires_at: string;
}

/**
 * Cookies are marked Secure when the request came over https (directly, or through a trusted proxy's
 * X-Forwarded-Proto) or when the public URL the browser uses is https (a TLS proxy that is not configured as
 * trusted).
 */
export function cookiesSecure(request: FastifyRequest, publicUrl: string): boolean {
  return request.protocol === 'https' || publicUrl.startsWith('https://');
}

type CookieOptions = Omit<SetCookie, 'name' | 'value'>;
const baseOptions = (secure: boolean): CookieOptions => ({ httpOnly: true, secure, sameSite: 'lax' });
const serialize = (name: string, value: string, options: CookieOptions) => stringifySetCookie({ name, value, ...options });

/**
 * Installs a session as two HttpOnly cookies. SameSite=Lax (not Strict): the single sign-on callback is a
 * top-level navigation that began on the identity provider's site, and the UI page it lands on must be
 * signed in.
 */
export function setSessionCookies(reply: FastifyReply, values: SessionCookieValues, now: number, secure: boolean): void {
  const refreshMaxAge = Math.max(0, Math.floor((Date.parse(values.refresh_expires_at) - now) / 1000));
  appendCookie(reply, serialize(ACCESS_COOKIE, values.access_token, { ...baseOptions(secure), path: '/', maxAge: values.expires_in }));
  appendCookie(reply, serialize(REFRESH_COOKIE, values.refresh_token, { ...baseOptions(secure), path: REFRESH_COOKIE_PATH, maxAge: refreshMaxAge }));
}

export function clearSessionCookies(reply: FastifyReply, secure: boolean): void {
  appendCookie(reply, serialize(ACCESS_COOKIE, '', { ...baseOptions(secure), path: '/', maxAge: 0 }));
  appendCookie(reply, serialize(REFRESH_COOKIE, '', { ...baseOptions(secure), path: REFRESH_COOKIE_PATH, maxAge: 0 }));
}

/** A short-lived HttpOnly cookie on the given path (used to bind an SSO state to the browser that asked). */
export function setScopedCookie(reply: FastifyReply, name: string, value: string, path: string, maxAgeSeconds: number, secure: boolean): void {
  appendCookie(reply, serialize(name, value, { ...baseOptions(secure), path, maxAge: maxAgeSeconds }));
}

/** Fastify appends repeated set-cookie headers rather than replacing them. */
function appendCookie(reply: FastifyReply, cookie: string): void {
  reply.header('set-cookie', cookie);
}
