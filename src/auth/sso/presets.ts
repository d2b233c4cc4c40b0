export const PROVIDER_TYPES = ['preset_a', 'preset_b', 'oidc'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];
export type PresetName = Exclude<ProviderType, 'oidc'>;

export interface PresetEndpoints {
  auth_url: string;
  token_url: string;
  userinfo_url: string;
  /** preset_b: the endpoint listing the account's addresses with their verified and primary flags. */
  emails_url?: string;
  /** Expected `iss` of ID tokens and of the authorization response; presets without OpenID Connect have none. */
  issuer?: string;
}

export interface Preset extends PresetEndpoints {
  scopes: string;
  /** How the profile is read: an OpenID Connect userinfo endpoint, or a profile plus a separate emails list. */
  profile: 'oidc' | 'profile_and_emails';
}

/**
 * The two pre-configured kinds. preset_a is a mainstream OpenID Connect provider; preset_b a code-hosting
 * provider whose profile has no verified email, so the verified primary address comes from its emails
 * endpoint. Every URL can be overridden at startup (BULWARK_OAUTH_PRESET_A_AUTH_URL and friends, see
 * PRESET_ENV) and per provider (auth_url, token_url, userinfo_url, issuer fields).
 */
export const PRESET_DEFAULTS: Record<PresetName, Preset> = {
  preset_a: {
    auth_url: 'https://accounts.google.com/o/oauth2/v2/auth',
    token_url: 'https://oauth2.googleapis.com/token',
    userinfo_url: 'https://openidconnect.googleapis.com/v1/userinfo',
    issuer: 'https://accounts.google.com',
    scopes: 'openid email profile',
    profile: 'oidc',
  },
  preset_b: {
    auth_url: 'https://github.com/login/oauth/authorize',
    token_url: 'https://github.com/login/oauth/access_token',
    userinfo_url: 'https://api.github.com/user',
    emails_url: 'https://api.github.com/user/emails',
    scopes: 'read:user user:email',
    profile: 'profile_and_emails',
  },
};

export const OIDC_DEFAULT_SCOPES = 'openid email profile';

export type PresetOverrides = Partial<Record<PresetName, Partial<PresetEndpoints>>>;

const ENDPOINT_FIELDS = ['auth_url', 'token_url', 'userinfo_url', 'emails_url', 'issuer'] as const;

/** Environment variable of one preset URL, e.g. BULWARK_OAUTH_PRESET_B_EMAILS_URL. */
export const presetEnvName = (preset: PresetName, field: (typeof ENDPOINT_FIELDS)[number]) =>
  `BULWARK_OAUTH_${preset.toUpperCase()}_${field.toUpperCase()}`;

/** Reads the preset URL overrides from the environment; each must be an https URL. */
export function presetOverridesFromEnv(env: NodeJS.ProcessEnv, fail: (message: string) => Error): PresetOverrides {
  const overrides: PresetOverrides = {};
  for (const preset of Object.keys(PRESET_DEFAULTS) as PresetName[]) {
    for (const field of ENDPOINT_FIELDS) {
      const name = presetEnvName(preset, field);
      const value = env[name]?.trim();
      if (!value) continue;
      if (!isHttpsUrl(value)) throw fail(`${name} must be an https:// URL, got "${value}"`);
      (overrides[preset] ??= {})[field] = value;
    }
  }
  return overrides;
}

export function isHttpsUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}
