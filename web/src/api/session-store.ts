/**
 * How this tab is signed in.
 * - `bearer`: a password (or TOTP) login. The tokens live in sessionStorage: they survive a reload of this tab,
 *   die with it, and are never sent by the browser on its own, so another site cannot ride on them.
 * - `cookie`: single sign-on. The server installed the tokens as HttpOnly SameSite=Lax cookies that no script
 *   can read; requests carry them automatically and state changes add the CSRF header.
 */
export type Session = { kind: 'bearer'; accessToken: string; refreshToken: string } | { kind: 'cookie' };

const STORAGE_KEY = 'bulwark.session';

export function loadSession(): Session | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    if (stored?.kind === 'bearer' && typeof stored.accessToken === 'string' && typeof stored.refreshToken === 'string') return stored;
    if (stored?.kind === 'cookie') return stored;
  } catch {
    // unreadable: treat as signed out
  }
  return null;
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
