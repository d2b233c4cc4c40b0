import * as oauth from 'openid-client';
import type { RequestInit } from 'undici';
import { outboundFetch, type OutboundPolicy } from '../../net/outbound.js';
import type { ResolvedProvider } from './providers.js';

/** Why a sign-in failed, as the sign-in page is told (`oauth_error`); the detail goes to the log and audit only. */
export type SsoErrorCode = 'state' | 'exchange' | 'userinfo' | 'no_account' | 'disabled' | 'denied';

export class SsoFailure extends Error {
  constructor(
    readonly code: SsoErrorCode,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** Who the provider says signed in. */
export interface ProviderProfile {
  subject: string;
  /** The address only when the provider vouches that it is verified; unverified addresses never appear here. */
  verifiedEmail: string | null;
  /** The handle (preset_b `login`, OIDC `preferred_username`), used to name an auto-created account. */
  login: string | null;
}

export interface AuthorizationRequest {
  url: string;
}

/**
 * One identity provider seen through openid-client: the authorization URL, the code exchange (client secret
 * + PKCE verifier, ID token checks when OpenID Connect) and the profile. Every request goes through the
 * outbound guard (https only, blocked addresses refused unless allow-listed, extra CAs when configured).
 */
export class ProviderClient {
  private readonly configuration: oauth.Configuration;

  constructor(
    private readonly provider: ResolvedProvider,
    clientSecret: string,
    policy: OutboundPolicy,
  ) {
    this.configuration = new oauth.Configuration(
      {
        issuer: provider.issuer,
        authorization_endpoint: provider.authUrl,
        token_endpoint: provider.tokenUrl,
        userinfo_endpoint: provider.userinfoUrl,
      },
      provider.clientId,
      clientSecret,
    );
    this.configuration[oauth.customFetch] = (url, options) =>
      outboundFetch(url, options as unknown as RequestInit, policy) as unknown as Promise<Response>;
  }

  /** Whether an ID token (and so a nonce) belongs to this sign-in: OpenID Connect scopes asked for. */
  get usesOpenIdConnect(): boolean {
    return this.provider.profile === 'oidc' && this.provider.scopes.split(/\s+/).includes('openid');
  }

  authorizationUrl(input: { redirectUri: string; state: string; codeChallenge: string; nonce?: string }): string {
    const parameters: Record<string, string> = {
      redirect_uri: input.redirectUri,
      scope: this.provider.scopes,
      state: input.state,
      code_challenge: input.codeChallenge,
      code_challenge_method: 'S256',
    };
    if (input.nonce) parameters.nonce = input.nonce;
    return oauth.buildAuthorizationUrl(this.configuration, parameters).href;
  }

  /** Redeems the code; returns the access token and, with OpenID Connect, the ID token's subject. */
  async exchange(callbackUrl: URL, checks: { state: string; verifier: string; nonce?: string }): Promise<{ accessToken: string; idSubject?: string }> {
    try {
      const tokens = await oauth.authorizationCodeGrant(this.configuration, callbackUrl, {
        expectedState: checks.state,
        pkceCodeVerifier: checks.verifier,
        expectedNonce: checks.nonce,
        idTokenExpected: checks.nonce !== undefined,
      });
      return { accessToken: tokens.access_token, idSubject: tokens.claims()?.sub };
    } catch (error) {
      throw new SsoFailure('exchange', describe(error));
    }
  }

  async profile(accessToken: string, idSubject?: string): Promise<ProviderProfile> {
    try {
      return this.provider.profile === 'oidc' ? await this.oidcProfile(accessToken, idSubject) : await this.profileAndEmails(accessToken);
    } catch (error) {
      if (error instanceof SsoFailure) throw error;
      throw new SsoFailure('userinfo', describe(error));
    }
  }

  private async oidcProfile(accessToken: string, idSubject?: string): Promise<ProviderProfile> {
    // With an ID token, userinfo must describe the same subject (OpenID Connect Core 5.3.2).
    const info = await oauth.fetchUserInfo(this.configuration, accessToken, idSubject ?? oauth.skipSubjectCheck);
    const verified = info.email_verified === true || (info.email_verified as unknown) === 'true';
    return {
      subject: info.sub,
      verifiedEmail: verified && typeof info.email === 'string' && info.email !== '' ? info.email : null,
      login: typeof info.preferred_username === 'string' ? info.preferred_username : null,
    };
  }

  /** preset_b: a profile without a verified email, and a separate list of addresses with their flags. */
  private async profileAndEmails(accessToken: string): Promise<ProviderProfile> {
    const user = (await this.getJson(this.provider.userinfoUrl, accessToken)) as { id?: unknown; login?: unknown };
    if ((typeof user.id !== 'number' && typeof user.id !== 'string') || String(user.id) === '') {
      throw new SsoFailure('userinfo', 'profile has no id');
    }
    const emails = await this.getJson(this.provider.emailsUrl!, accessToken);
    if (!Array.isArray(emails)) throw new SsoFailure('userinfo', 'emails endpoint did not answer a list');
    const primary = (emails as { email?: unknown; primary?: unknown; verified?: unknown }[]).find((entry) => entry.primary === true);
    return {
      subject: String(user.id),
      verifiedEmail: primary && primary.verified === true && typeof primary.email === 'string' ? primary.email : null,
      login: typeof user.login === 'string' ? user.login : null,
    };
  }

  private async getJson(url: string, accessToken: string): Promise<unknown> {
    const headers = new Headers({ accept: 'application/json' });
    const response = await oauth.fetchProtectedResource(this.configuration, accessToken, new URL(url), 'GET', undefined, headers);
    if (!response.ok) throw new SsoFailure('userinfo', `${new URL(url).pathname} answered HTTP ${response.status}`);
    return response.json();
  }
}

/** A one-line description of a failure for the log and audit (never a response). */
export function describe(error: unknown): string {
  if (error instanceof SsoFailure) return error.detail;
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const item = current as { message?: unknown; code?: unknown; error?: unknown; error_description?: unknown; cause?: unknown };
    const text = [item.code, item.error, item.message, item.error_description].filter((v) => typeof v === 'string' && v !== '').join(' ');
    if (text) parts.push(text);
    current = item.cause;
  }
  return (parts.join(' <- ') || String(error)).slice(0, 500);
}
