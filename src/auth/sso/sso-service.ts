import type { FastifyReply, FastifyRequest } from 'fastify';
import * as oauth from 'openid-client';
import type { AppContext } from '../../context.js';
import { randomHex, sha256Hex, safeEqual } from '../../core/crypto.js';
import { badRequest, notFound, unauthorized } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import type { ConfigData } from '../../store/config-store.js';
import type { ConfigObject } from '../../store/config-store.js';
import { cookiesSecure, readCookie, setScopedCookie, setSessionCookies } from '../cookies.js';
import { actorOf, type TokenPair } from '../identity-service.js';
import { OneShotStore } from '../one-shot-store.js';
import { builtinRoleId } from '../roles.js';
import { SYSTEM_PROVIDER, type UserRow } from '../users.js';
import { IdentityLinks } from './identity-links.js';
import { ProviderClient, SsoFailure, describe, type ProviderProfile, type SsoErrorCode } from './provider-client.js';
import { declareProviders, resolveProvider, type ResolvedProvider } from './providers.js';
import { normalisePublicUrl, pemCertificates, SSO_SETTINGS_KIND, SsoSettingsSchema, validateSsoSettings, type SsoSettings } from './sso-settings.js';

/** Where the browser is sent. Relative, so they resolve against the host the browser used for the callback. */
export const UI_HOME = '/';
export const SIGN_IN_PAGE = '/login';

/** Binds a state nonce to the browser that asked for it (login CSRF defence), scoped to the SSO paths. */
export const BROWSER_COOKIE = 'bulwark_sso';
const BROWSER_COOKIE_PATH = '/api/v1/auth/oauth';

const STATE_TTL_MS = 10 * 60_000;
const TOTP_TICKET_TTL_MS = 5 * 60_000;

interface PendingSignIn {
  providerId: string;
  verifier: string;
  redirectUri: string;
  nonce?: string;
  /** SHA-256 of the browser-binding cookie. */
  browser: string;
}

interface TotpHandOff {
  userId: string;
  provider: string;
}

export interface SsoSettingsView extends SsoSettings {
  auto_create_oauth_users: boolean;
  require_totp_for_oauth: boolean;
}

/** A session installed as cookies: its lifetimes, never the tokens themselves (they are HttpOnly for a reason). */
export interface CookieSession {
  username: string;
  token_type: 'Bearer';
  expires_in: number;
  access_expires_at: string;
  refresh_expires_at: string;
}

/**
 * Single sign-on: providers, the authorization-code flow with state and PKCE, account resolution, the TOTP
 * hand-off and the session cookies. Routes translate HTTP; everything that decides lives here.
 */
export class SsoService {
  readonly providers: CollectionModel;
  readonly settingsSection: SingletonModel<SsoSettings & ConfigData>;
  readonly links: IdentityLinks;
  /** State nonces: 10 minutes, single use, bound to provider, redirect URI, PKCE verifier and browser. */
  readonly states: OneShotStore<PendingSignIn>;
  /** TOTP hand-off tickets: 5 minutes, single use. */
  readonly totpTickets: OneShotStore<TotpHandOff>;

  constructor(private readonly context: AppContext) {
    this.providers = declareProviders(context.models);
    this.settingsSection = context.models.singleton({
      kind: SSO_SETTINGS_KIND, noun: 'SSO settings', writeAccess: 'settings:write', schema: SsoSettingsSchema, validate: validateSsoSettings,
    });
    this.links = new IdentityLinks(context.db, context.clock);
    this.states = new OneShotStore(context.clock, STATE_TTL_MS);
    this.totpTickets = new OneShotStore(context.clock, TOTP_TICKET_TTL_MS);
  }

  // ---------------------------------------------------------------- settings and login options

  settings(): SsoSettingsView {
    const auth = this.context.identity.settings();
    return {
      ...(this.settingsSection.read()),
      auto_create_oauth_users: auth.auto_create_oauth_users,
      require_totp_for_oauth: auth.require_totp_for_oauth,
    };
  }

  /** The two switches live with the auth settings (one source of truth); the rest in this section. */
  updateSettings(patch: Partial<SsoSettingsView>, request: FastifyRequest): SsoSettingsView {
    const { auto_create_oauth_users, require_totp_for_oauth, ...own } = patch;
    if (typeof own.public_url === 'string') own.public_url = normalisePublicUrl(own.public_url);
    const switches = Object.fromEntries(
      Object.entries({ auto_create_oauth_users, require_totp_for_oauth }).filter(([, value]) => value !== undefined),
    );
    this.context.store.transaction(() => {
      if (Object.keys(own).length > 0) this.settingsSection.write(own as Record<string, unknown>);
      if (Object.keys(switches).length > 0) this.context.identity.updateSettings(switches, actorOf(request));
    });
    const identity = request.identity;
    this.context.identity.audit.record({
      action: 'oauth_settings_updated', outcome: 'success', actor: identity?.username ?? null, actorId: identity?.userId ?? null,
      clientIp: request.ip, details: Object.keys(patch).join(', '),
    });
    return this.settings();
  }

  loginOptions(): { name: string; provider_type: string }[] {
    return this.providers
      .objects()
      .filter((object) => object.data.enabled !== false)
      .map((object) => ({ name: String(object.data.name), provider_type: String(object.data.provider_type) }));
  }

  // ---------------------------------------------------------------- authorize

  authorize(request: FastifyRequest, reply: FastifyReply, name: string): { authorize_url: string; state: string; redirect_uri: string } {
    const object = this.providerNamed(name);
    if (!object || object.data.enabled === false) throw notFound(`no enabled single sign-on provider named "${name}"`);
    const provider = this.resolve(object);
    const redirectUri = `${this.baseUrl(request)}/api/v1/auth/oauth/${encodeURIComponent(provider.name)}/callback`;
    const client = this.client(provider, object);

    // One binding value per browser, reused across tabs so parallel sign-ins do not cancel each other.
    const existing = readCookie(request, BROWSER_COOKIE);
    const browser = existing && /^[0-9a-f]{64}$/.test(existing) ? existing : randomHex(32);
    setScopedCookie(reply, BROWSER_COOKIE, browser, BROWSER_COOKIE_PATH, STATE_TTL_MS / 1000, cookiesSecure(request, this.publicUrl()));

    const verifier = oauth.randomPKCECodeVerifier();
    const nonce = client.usesOpenIdConnect ? oauth.randomNonce() : undefined;
    const state = this.states.issue({ providerId: provider.id, verifier, redirectUri, nonce, browser: sha256Hex(browser) });
    const authorizeUrl = client.authorizationUrl({ redirectUri, state, codeChallenge: pkceChallenge(verifier), nonce });
    return { authorize_url: authorizeUrl, state, redirect_uri: redirectUri };
  }

  // ---------------------------------------------------------------- callback

  /** Handles the provider's redirect; always answers with where the browser goes next. */
  async callback(request: FastifyRequest, reply: FastifyReply, name: string): Promise<string> {
    const query = request.query as Record<string, string | undefined>;
    let provider: ResolvedProvider | undefined;
    let secret: string | undefined;
    try {
      const pending = this.states.take(query.state);
      if (!pending) throw new SsoFailure('state', query.state ? 'state is unknown, already used or expired' : 'callback without state');
      const browser = readCookie(request, BROWSER_COOKIE);
      if (!browser || !safeEqual(sha256Hex(browser), pending.browser)) throw new SsoFailure('state', 'state was issued to another browser');
      const object = this.providers.objects().find((candidate) => candidate.id === pending.providerId);
      if (!object) throw new SsoFailure('disabled', 'provider was deleted during the sign-in');
      provider = this.resolve(object);
      if (provider.name.toLowerCase() !== name.toLowerCase()) throw new SsoFailure('state', `state belongs to provider "${provider.name}", not "${name}"`);
      if (!provider.enabled) throw new SsoFailure('disabled', 'provider is disabled');
      if (query.error) throw new SsoFailure('denied', `provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`);
      if (!query.code) throw new SsoFailure('exchange', 'callback without code');

      secret = this.providers.secret(object, 'client_secret');
      const client = this.client(provider, object);
      const callbackUrl = new URL(pending.redirectUri);
      for (const [key, value] of Object.entries(query)) if (typeof value === 'string') callbackUrl.searchParams.set(key, value);
      const tokens = await client.exchange(callbackUrl, { state: query.state!, verifier: pending.verifier, nonce: pending.nonce });
      const profile = await client.profile(tokens.accessToken, tokens.idSubject);
      const user = this.resolveAccount(provider, profile, request.ip);
      if (!user.enabled) throw new SsoFailure('disabled', `account ${user.username} is disabled`);

      if (this.context.identity.settings().require_totp_for_oauth && user.totp_enabled) {
        const ticket = this.totpTickets.issue({ userId: user.id, provider: provider.name });
        this.audit('oauth_totp_required', 'success', user.username, user.id, request.ip, `via ${provider.name}`);
        return `${SIGN_IN_PAGE}?oauth_totp=${ticket}`;
      }
      const pair = await this.context.identity.signIn.openSession(user, request.ip);
      this.installCookies(request, reply, pair);
      this.audit('oauth_login_success', 'success', user.username, user.id, request.ip, `via ${provider.name}`);
      return UI_HOME;
    } catch (error) {
      if (!(error instanceof SsoFailure)) throw error;
      this.reportFailure(error.code, scrub(describe(error), secret), provider?.name ?? name, request.ip);
      return `${SIGN_IN_PAGE}?oauth_error=${error.code}`;
    }
  }

  /** (provider, subject) link, else a verified email equal to a username, else auto-create, else no_account. */
  private resolveAccount(provider: ResolvedProvider, profile: ProviderProfile, clientIp: string): UserRow {
    const { users } = this.context.identity;
    // Synchronous SQLite transaction: two callbacks for the same new subject cannot both create an account.
    return this.context.db.transaction((): UserRow => {
      const link = this.links.find(provider.id, profile.subject);
      const linked = link && users.byId(link.user_id);
      if (linked) {
        this.links.touch(provider.id, profile.subject, profile.verifiedEmail);
        return linked;
      }
      if (profile.verifiedEmail) {
        const owner = users.byUsername(profile.verifiedEmail);
        if (owner && owner.auth_provider !== SYSTEM_PROVIDER) {
          this.links.link(provider.id, profile.subject, owner.id, profile.verifiedEmail);
          this.audit('oauth_identity_linked', 'success', owner.username, owner.id, clientIp, `${provider.name} subject ${profile.subject} by verified email`);
          return owner;
        }
      }
      if (!this.context.identity.settings().auto_create_oauth_users) {
        throw new SsoFailure('no_account', `no account for ${provider.name} subject ${profile.subject} (verified email: ${profile.verifiedEmail ?? 'none'}) and auto-create is off`);
      }
      const username = this.freeUsername(provider, profile);
      // No password hash: the account cannot log in with a password until an administrator sets one.
      const user = users.insert({ username, passwordHash: null, email: profile.verifiedEmail, roleId: builtinRoleId('viewer'), authProvider: provider.name });
      this.links.link(provider.id, profile.subject, user.id, profile.verifiedEmail);
      this.audit('oauth_user_provisioned', 'success', user.username, user.id, clientIp, `${provider.name} subject ${profile.subject} as viewer`);
      return user;
    })();
  }

  /** The verified email, else `<provider>:<login>`, else `<provider>:<subject>`; `-1`, `-2`… when taken. */
  private freeUsername(provider: ResolvedProvider, profile: ProviderProfile): string {
    const prefix = usernamePart(provider.name.toLowerCase());
    const candidates = [profile.verifiedEmail, profile.login ? `${prefix}:${usernamePart(profile.login)}` : null, `${prefix}:${usernamePart(profile.subject)}`]
      .filter((candidate): candidate is string => !!candidate && /^[^\s\p{C}]{1,120}$/u.test(candidate));
    // Room is left for a `-N` suffix within the 128-character limit; an unusable subject still gets a name.
    const base = candidates[0] ?? `${prefix}:${sha256Hex(profile.subject).slice(0, 16)}`;
    const { users } = this.context.identity;
    for (let suffix = 0; ; suffix++) {
      const username = suffix === 0 ? base : `${base}-${suffix}`;
      if (!users.byUsername(username)) return username;
    }
  }

  // ---------------------------------------------------------------- TOTP after single sign-on

  async completeTotp(request: FastifyRequest, reply: FastifyReply, ticket: string, code: string): Promise<CookieSession> {
    // The ticket is spent by this call whatever the outcome: a wrong code means signing in again.
    const handOff = this.totpTickets.take(ticket);
    const { identity } = this.context;
    const user = handOff ? identity.users.byId(handOff.userId) : undefined;
    if (!handOff || !user || !user.enabled || !user.totp_enabled) {
      this.audit('oauth_totp_failed', 'failure', user?.username ?? null, user?.id ?? null, request.ip, 'unknown, used or expired ticket');
      throw unauthorized('ticket is unknown, used or expired: sign in again');
    }
    if (!identity.secondFactor.acceptSecondFactor(user, code)) {
      this.audit('oauth_totp_failed', 'failure', user.username, user.id, request.ip, 'wrong code');
      throw unauthorized('invalid TOTP or recovery code: sign in again');
    }
    const pair = await identity.signIn.openSession(user, request.ip);
    this.installCookies(request, reply, pair);
    this.audit('oauth_login_success', 'success', user.username, user.id, request.ip, `via ${handOff.provider} with TOTP`);
    return cookieSession(user.username, pair);
  }

  // ---------------------------------------------------------------- helpers

  installCookies(request: FastifyRequest, reply: FastifyReply, pair: TokenPair): void {
    setSessionCookies(reply, pair, this.context.clock.now(), cookiesSecure(request, this.publicUrl()));
  }

  private publicUrl(): string {
    return (this.settingsSection.read()).public_url;
  }

  /** `public_url` when set; else scheme and Host of the request (X-Forwarded-* only from trusted proxies). */
  private baseUrl(request: FastifyRequest): string {
    const pinned = this.publicUrl();
    if (pinned) return pinned;
    const host = request.host;
    if (!host || !/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host)) {
      throw badRequest('cannot build the redirect URI: the request has no valid Host header and public_url is not set');
    }
    return `${request.protocol}://${host}`;
  }

  private providerNamed(name: string): ConfigObject | undefined {
    const wanted = name.toLowerCase();
    return this.providers.objects().find((object) => String(object.data.name).toLowerCase() === wanted);
  }

  private resolve(object: ConfigObject): ResolvedProvider {
    return resolveProvider(object, this.context.config.oauthPresets ?? {});
  }

  private client(provider: ResolvedProvider, object: ConfigObject): ProviderClient {
    const settings = this.settingsSection.read();
    return new ProviderClient(provider, this.providers.secret(object, 'client_secret') ?? '', {
      allowList: settings.allowed_networks,
      extraCa: pemCertificates(settings.trusted_ca_pem),
    });
  }

  private reportFailure(code: SsoErrorCode, detail: string, provider: string, clientIp: string): void {
    this.context.log.warn({ provider, oauth_error: code, detail }, 'single sign-on failed');
    this.audit('oauth_login_failed', 'failure', null, null, clientIp, `${provider}: ${code}: ${detail}`);
  }

  private audit(action: string, outcome: 'success' | 'failure', actor: string | null, actorId: string | null, clientIp: string, details: string): void {
    this.context.identity.audit.record({ action, outcome, actor, actorId, targetId: actorId, clientIp, details });
  }
}

export function cookieSession(username: string, pair: TokenPair): CookieSession {
  return {
    username,
    token_type: 'Bearer',
    expires_in: pair.expires_in,
    access_expires_at: pair.access_expires_at,
    refresh_expires_at: pair.refresh_expires_at,
  };
}

/** S256: base64url(SHA-256(verifier)), as openid-client computes it but synchronously. */
function pkceChallenge(verifier: string): string {
  return Buffer.from(sha256Hex(verifier), 'hex').toString('base64url');
}

/** Keeps a provider-supplied name fragment usable as part of a username (no spaces or control characters). */
function usernamePart(value: string): string {
  return value.replace(/[\s\p{C}]+/gu, '_').slice(0, 55);
}

/** A failure detail never carries the client secret, even if a provider echoed it back. */
function scrub(detail: string, secret: string | undefined): string {
  return secret && secret.length >= 4 ? detail.split(secret).join('[redacted]') : detail;
}
