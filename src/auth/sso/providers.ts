import { Type } from 'typebox';
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ModelRegistry } from '../../model/registry.js';
import { StringEnum } from '../../model/schema-helpers.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { isHttpsUrl, OIDC_DEFAULT_SCOPES, PRESET_DEFAULTS, PROVIDER_TYPES, type PresetName, type PresetOverrides, type ProviderType } from './presets.js';

export const PROVIDER_KIND = 'oauth_provider';
const URL_FIELDS = ['auth_url', 'token_url', 'userinfo_url'] as const;

const HttpsUrl = (description: string) => Type.Optional(Type.String({ maxLength: 2048, description }));

export const ProviderSchema = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]*$',
    description: 'used in the callback path; letters, digits, space, `_`, `.`, `-`; unique regardless of case',
  }),
  provider_type: StringEnum(PROVIDER_TYPES, { description: '`preset_a` and `preset_b` come with their URLs; `oidc` needs all three' }),
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  client_secret: Type.String({ minLength: 1, maxLength: 4096, writeOnly: true, description: 'write-only; sealed at rest; never returned' }),
  // Optional with a default: filled on create, and not listed as required in the OpenAPI document.
  scopes: Type.Optional(Type.String({ maxLength: 1024, default: '', description: 'space-separated; empty: the type\'s default' })),
  auth_url: HttpsUrl('authorization endpoint (https); required for oidc, overrides the preset\'s otherwise'),
  token_url: HttpsUrl('token endpoint (https); required for oidc, overrides the preset\'s otherwise'),
  userinfo_url: HttpsUrl('userinfo endpoint (https); required for oidc, overrides the preset\'s otherwise'),
  issuer: HttpsUrl('expected `iss` of ID tokens; default: the preset\'s, or the origin of auth_url'),
  enabled: Type.Optional(Type.Boolean({ default: true, description: 'disabled providers are not offered and refuse sign-ins' })),
});

/** A provider with every URL worked out: what the OAuth client needs. */
export interface ResolvedProvider {
  id: string;
  name: string;
  type: ProviderType;
  enabled: boolean;
  clientId: string;
  scopes: string;
  authUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
  /** preset_b: where the verified primary email is read. */
  emailsUrl?: string;
  issuer: string;
  profile: 'oidc' | 'profile_and_emails';
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

function validateProvider(data: ConfigData): void {
  for (const field of [...URL_FIELDS, 'issuer'] as const) {
    const value = nonEmpty(data[field]);
    if (value !== undefined && !isHttpsUrl(value)) throw badRequest(`body.${field} must be an https:// URL`);
  }
  if (data.provider_type === 'oidc') {
    for (const field of URL_FIELDS) if (nonEmpty(data[field]) === undefined) throw badRequest(`body.${field} is required for provider_type oidc`);
  }
}

/** The provider collection: names are unique regardless of case; the client secret is write-only. */
export function declareProviders(models: ModelRegistry): CollectionModel {
  return models.collection({
    kind: PROVIDER_KIND,
    noun: 'oauth provider',
    schema: ProviderSchema,
    writeAccess: 'settings:write',
    unique: [{ field: 'name', caseInsensitive: true }],
    writeOnly: ['client_secret'],
    validate: validateProvider,
  });
}

/**
 * Works out a provider's endpoints: its own URL fields first, then the startup overrides of its preset, then
 * the preset's built-in URLs. A preset whose URLs were overridden on the provider gets issuer and emails
 * endpoint derived from those URLs rather than from the built-in ones.
 */
export function resolveProvider(object: ConfigObject, overrides: PresetOverrides): ResolvedProvider {
  const data = object.data;
  const type = data.provider_type as ProviderType;
  const own = (field: string) => nonEmpty(data[field]);
  const base = {
    id: object.id,
    name: String(data.name),
    type,
    enabled: data.enabled !== false,
    clientId: String(data.client_id),
  };
  if (type === 'oidc') {
    const authUrl = own('auth_url')!;
    return {
      ...base,
      scopes: own('scopes') ?? OIDC_DEFAULT_SCOPES,
      authUrl,
      tokenUrl: own('token_url')!,
      userinfoUrl: own('userinfo_url')!,
      issuer: own('issuer') ?? new URL(authUrl).origin,
      profile: 'oidc',
    };
  }
  const preset = PRESET_DEFAULTS[type as PresetName];
  const configured = { ...preset, ...overrides[type as PresetName] };
  const authUrl = own('auth_url') ?? configured.auth_url;
  const userinfoUrl = own('userinfo_url') ?? configured.userinfo_url;
  const customised = URL_FIELDS.some((field) => own(field) !== undefined);
  return {
    ...base,
    scopes: own('scopes') ?? preset.scopes,
    authUrl,
    tokenUrl: own('token_url') ?? configured.token_url,
    userinfoUrl,
    emailsUrl:
      preset.profile === 'profile_and_emails'
        ? (own('userinfo_url') ? `${userinfoUrl.replace(/\/+$/, '')}/emails` : (configured.emails_url ?? `${userinfoUrl.replace(/\/+$/, '')}/emails`))
        : undefined,
    issuer: own('issuer') ?? (customised ? new URL(authUrl).origin : (configured.issuer ?? new URL(authUrl).origin)),
    profile: preset.profile,
  };
}
