import type { AppContext } from '../context.js';
import { pause } from '../core/clock.js';
import { tooManyRequests } from '../core/errors.js';
import { EVENT_TOPICS } from '../core/events.js';
import type { AuthAudit } from './audit.js';
import { FailureLimiter } from './rate-limit.js';
import type { AuthSettings } from './settings.js';
import type { Users } from './users.js';

/**
 * Login failures are counted per (client address, username) with the configured maximum, so one person's typos
 * lock only themselves out; the address as a whole may fail ten times as often (many people behind one NAT).
 * One username, from anywhere, may fail four times as often before every attempt on it is slowed: that counter
 * never blocks, because anyone can drive it up and would otherwise lock the owner out from everywhere.
 */
const LIMIT_CEILINGS: Record<string, number> = { 'ip:': 10, 'user:': 4 };
const SLOWING_PREFIXES = new Set(['user:']);
/** The wait of every login attempt on a username past its ceiling (see slowIfTargeted). */
export const TARGETED_LOGIN_DELAY_MS = 2000;

export interface FailureEvent {
  action: string;
  actor: string | null;
  actorId?: string;
  clientIp: string;
  details?: string;
}

/** Lockout and slowing of repeated failures (passwords, TOTP codes, refresh tokens), and their audit entries. */
export class LoginGuard {
  private readonly limiter: FailureLimiter;

  constructor(
    private readonly context: AppContext,
    private readonly users: Users,
    private readonly audit: AuthAudit,
    settings: () => AuthSettings,
  ) {
    this.limiter = new FailureLimiter(context.clock, (key) => {
      const current = settings();
      return { maxAttempts: current.max_login_attempts * ceilingFactor(key), windowSeconds: current.lockout_duration_secs, onLimit: onLimitOf(key) };
    });
  }

  assertNotLimited(keys: string[], username: string | null, clientIp: string, what: string): void {
    const wait = this.limiter.blockedFor(keys);
    if (wait > 0) {
      const known = username !== null && this.users.byUsername(username) !== undefined;
      this.audit.record({ action: `${what}_rate_limited`, outcome: 'failure', actor: known ? username : null, clientIp });
      throw tooManyRequests(wait, 'too many failed attempts: try again later');
    }
  }

  /**
   * A username guessed from many addresses is slowed, never refused: every attempt on it waits before the
   * password is checked, the right one from a clean address included, so an outsider cannot lock the owner out.
   */
  async slowIfTargeted(keys: string[]): Promise<void> {
    if (this.limiter.slowed(keys).length > 0) await pause(this.context.clock, TARGETED_LOGIN_DELAY_MS);
  }

  recordFailure(keys: string[], event: FailureEvent): void {
    this.audit.record({ ...event, outcome: 'failure' });
    for (const key of this.limiter.fail(keys)) {
      const action = onLimitOf(key) === 'slow' ? 'login_slowed' : 'lockout';
      this.audit.record({ action, outcome: 'failure', actor: event.actor, clientIp: event.clientIp, details: event.actor === null ? withoutName(key) : key });
      if (action === 'lockout') this.context.events.emit(EVENT_TOPICS.accountLockedOut, { key: event.actor === null ? withoutName(key) : key, actor: event.actor, client_ip: event.clientIp });
    }
  }

  /** Forgives the failures counted under these keys. */
  succeed(keys: string[]): void {
    this.limiter.succeed(keys);
  }
}

const prefixOf = (key: string): string => key.slice(0, key.indexOf(':') + 1);

function ceilingFactor(key: string): number {
  return LIMIT_CEILINGS[prefixOf(key)] ?? 1;
}

/** A limiter key without the attempted username it carries (for names that are no account). */
function withoutName(key: string): string {
  if (key.startsWith('ipuser:')) return key.slice(0, key.lastIndexOf('|'));
  if (key.startsWith('user:')) return 'user:';
  return key;
}

function onLimitOf(key: string): 'block' | 'slow' {
  return SLOWING_PREFIXES.has(prefixOf(key)) ? 'slow' : 'block';
}

export function loginLimitKeys(clientIp: string, username: string): string[] {
  const name = username.toLowerCase();
  return [`ip:${clientIp}`, `ipuser:${clientIp}|${name}`, `user:${name}`];
}
