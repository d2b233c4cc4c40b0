import { Type } from 'typebox';
import { SsoSettingsSchema } from '../../auth/sso/sso-settings.js';
import { withoutDefaults } from '../../model/schema-helpers.js';

const Switches = {
  auto_create_oauth_users: Type.Boolean({ description: 'Auto-create accounts (also in /auth/settings)' }),
  require_totp_for_oauth: Type.Boolean({ description: 'Require TOTP after single sign-on (also in /auth/settings)' }),
};

export const SsoSettingsView = Type.Object({ ...SsoSettingsSchema.properties, ...Switches }, { additionalProperties: false });

export const SsoSettingsPatch = Type.Object(
  {
    ...Object.fromEntries(Object.entries(withoutDefaults(SsoSettingsSchema.properties)).map(([key, schema]) => [key, Type.Optional(schema as never)])),
    auto_create_oauth_users: Type.Optional(Switches.auto_create_oauth_users),
    require_totp_for_oauth: Type.Optional(Switches.require_totp_for_oauth),
  },
  { additionalProperties: false, description: 'fields not sent are kept' },
);

export const LoginOption = Type.Object({ name: Type.String(), provider_type: Type.String() });

export const ProviderParams = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) });

export const Authorization = Type.Object({
  authorize_url: Type.String({ description: 'send the browser here' }),
  state: Type.String({ description: 'single-use state nonce, valid 10 minutes' }),
  redirect_uri: Type.String({ description: 'the callback URI to register at the provider' }),
});

/** The provider's redirect: any of these may be present; unknown parameters are passed on to the checks. */
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
});

export const TotpBody = Type.Object(
  {
    ticket: Type.String({ minLength: 1, maxLength: 128 }),
    totp_code: Type.String({ minLength: 6, maxLength: 32, description: '6-digit TOTP code or a recovery code' }),
  },
  { additionalProperties: false },
);

export const CookieSession = Type.Object({
  username: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  access_expires_at: Type.String(),
  refresh_expires_at: Type.String(),
});
