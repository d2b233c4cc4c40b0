import { Type, type Static } from 'typebox';

/** GET/PUT /auth/settings. Changes apply at once (the limiter and token lifetimes read them live). */
export const AuthSettingsSchema = Type.Object({
  access_token_expiry_mins: Type.Integer({ minimum: 1, maximum: 1440, default: 15, description: 'access-token (JWT) lifetime' }),
  refresh_token_expiry_days: Type.Integer({ minimum: 1, maximum: 365, default: 30, description: 'refresh-token lifetime' }),
  require_totp: Type.Boolean({ default: false, description: 'refuse password-only logins for accounts without TOTP' }),
  require_totp_for_oauth: Type.Boolean({ default: false, description: 'Require TOTP after single sign-on' }),
  auto_create_oauth_users: Type.Boolean({ default: true, description: 'Auto-create accounts on first single sign-on' }),
  max_login_attempts: Type.Integer({ minimum: 1, maximum: 1000, default: 5, description: 'failures per client IP or per username / token prefix before lockout' }),
  lockout_duration_secs: Type.Integer({ minimum: 1, maximum: 86400, default: 300, description: 'failure window and lockout length' }),
  password_min_length: Type.Integer({ minimum: 8, maximum: 256, default: 8 }),
});

export type AuthSettings = Static<typeof AuthSettingsSchema>;

export const AUTH_SETTINGS_KIND = 'auth_settings';
